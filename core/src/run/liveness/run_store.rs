//! The document store a run's task instances go to, as its journal names it, and the command whose
//! run writes there (the one that cleans up after a dead run's instances).

use crate::config::store_identity::StoreIdentity;

/// The document store a run's task instances go to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InstancesIn {
    /// This machine's @local store: a bundle run's.
    #[default]
    Local,
    /// The configured document store: a stored task's run (`agent-env task run`).
    Configured,
}

impl InstancesIn {
    pub(super) fn word(self) -> &'static str {
        match self {
            InstancesIn::Local => "local",
            InstancesIn::Configured => "configured",
        }
    }

    pub(super) fn from_word(word: &str) -> Option<InstancesIn> {
        [InstancesIn::Local, InstancesIn::Configured]
            .into_iter()
            .find(|i| i.word() == word)
    }

    /// The command whose run marks such a store's instances.
    pub fn marked_by(self) -> &'static str {
        match self {
            InstancesIn::Local => "agent-env run (of a bundle)",
            InstancesIn::Configured => "agent-env task run",
        }
    }
}

/// The document store a run's task instances go to, as its journal says: the kind, and which store
/// that is, when it is told (a bundle run's @local store is this machine's, in the same state folder
/// as the journal: it needs no name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStore {
    pub instances_in: InstancesIn,
    pub identity: Option<StoreIdentity>,
}

impl From<InstancesIn> for RunStore {
    fn from(instances_in: InstancesIn) -> RunStore {
        RunStore {
            instances_in,
            identity: None,
        }
    }
}

/// The commands `by`, each once, in order: `agent-env run or agent-env task run`.
pub fn either_of(by: impl IntoIterator<Item = &'static str>) -> String {
    let mut by: Vec<&str> = by.into_iter().collect();
    by.sort_unstable();
    by.dedup();
    by.join(" or ")
}
