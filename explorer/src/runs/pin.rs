//! Holds a task run to the version its request was answered with: the bundle is read again when the
//! run starts, and if the version it would record is not the one answered, the run writes and runs
//! nothing (the engine checks before it writes the bundle's entities: [`run_bundle_pinned`]) and the
//! workflow says why.
//!
//! [`run_bundle_pinned`]: agent_env::run::run_bundle_pinned

use agent_env::run::materialize::{MaterializeError, Versions};
use agent_env::run::RunError;

/// The task and version a run was promised to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub task_id: String,
    pub version: i64,
}

impl Pin {
    /// The versions the run is held to, as the engine takes them.
    pub fn versions(&self) -> Versions {
        Versions::from([(self.task_id.clone(), self.version)])
    }

    /// Why the run was refused, in the API's words, when `error` is the engine's refusal of this pin.
    pub fn refusal(&self, error: &RunError) -> Option<String> {
        let RunError::Materialize(MaterializeError::VersionChanged { id, pinned, found }) = error
        else {
            return None;
        };
        (*id == self.task_id).then(|| {
            format!(
                "the task's bundle changed after the run was asked for: a run now records version {found} of '{id}', not version {pinned}; nothing ran and nothing was written. Ask again to run the bundle as it is now"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engines_refusal_is_said_in_the_apis_words() {
        let pin = Pin {
            task_id: "t".into(),
            version: 2,
        };
        assert_eq!(pin.versions(), Versions::from([("t".to_string(), 2)]));
        let refused = RunError::Materialize(MaterializeError::VersionChanged {
            id: "t".into(),
            pinned: 2,
            found: 3,
        });
        assert!(pin
            .refusal(&refused)
            .unwrap()
            .contains("records version 3 of 't', not version 2; nothing ran"));
        let other = RunError::Materialize(MaterializeError::Cancelled);
        assert!(pin.refusal(&other).is_none());
    }
}
