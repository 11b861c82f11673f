//! Why planning refuses a step: nothing here runs its type, an artifact it names can't be read from the
//! store, or its `retry_config` can't say where to resume. Each one's message is the sentence the plan's
//! problem list shows after `<task file>: step '<id>': `.

use agent_env_store::StoreError;

use crate::registry::RegistryError;

/// Why nothing here runs a step type.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StepTypeError {
    /// A step type built into the Python agent-env that this one has no step for yet.
    #[error("the step type '{type_name}' is built into the Python agent-env, and this agent-env does not have it yet")]
    OnlyInPython { type_name: String },
    /// No built-in step and no installed plugin provides it; `near` is the closest step type that
    /// does run here, when one is close.
    #[error(
        "'{type_name}' is not a known step type; no built-in step or installed plugin provides it{} (agent-env plugin list shows what plugins provide)",
        did_you_mean(near.as_deref())
    )]
    Unknown {
        type_name: String,
        near: Option<String>,
    },
    /// A plugin claims it, but the claim did not take effect (a conflict, a plugin that failed to
    /// load), or the step group could not be built.
    #[error("{}", .0.not_known("step"))]
    Unusable(RegistryError),
}

fn did_you_mean(near: Option<&str>) -> String {
    near.map(|n| format!("; did you mean '{n}'?"))
        .unwrap_or_default()
}

/// Why an artifact id a step names, not in the bundle, can't be looked for in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreArtifactError {
    /// A stored task (run in the configured stores) names an `@local` id.
    #[error("'{id}' is an @local id, and a stored task's run reads and writes only the configured stores; put the artifact in the configured store under a bare id")]
    LocalIdInStoredTask { id: String },
    /// A bundle run (which reads only `@local` ids from the store) names a bare id.
    #[error("'{id}' is not an artifact of this bundle, and a bundle run reads only @local ids from the store")]
    BareIdInBundleRun { id: String },
    /// The store could not be asked whether it holds `id`.
    #[error("could not look for the artifact '{id}' it names in the document store: {source}")]
    Store { id: String, source: StoreError },
}

/// Why a step's `retry_config` can't be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RetryConfigError {
    /// Its form is wrong; every problem of the object, joined (as the bundle parser words them).
    #[error("{0}")]
    Malformed(String),
    /// It resumes from a step that is neither this one nor one it depends on.
    #[error("retry_config resumes from '{from}', which must be this step or a step it depends on")]
    NotThisStepNorADependency { from: String },
}
