//! `ConfigError`: every way `.agentenv/config.toml`, a reference in it or a store selection can be wrong.
//! The messages are the user-facing sentences the reference prints, word for word where it has one.

/// A problem with the config document, a value in it, or a store selection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("AGENT_ENV_CONFIG='{value}' does not point to an existing file; unset AGENT_ENV_CONFIG or point it at a config file")]
    EnvPathMissing { value: String },

    /// A root option (`--tenant acme`) chose a config file that is not there: named by the option,
    /// not by `AGENT_ENV_CONFIG`, which the user did not set.
    #[error("{chosen_by} chose the config file '{path}', which does not exist; give the option a value its plugin knows, or create the file")]
    ChosenPathMissing { path: String, chosen_by: String },

    #[error("Malformed config.toml at {path}: {message}")]
    Malformed { path: String, message: String },

    #[error("config.toml at {path} is not valid UTF-8: {message}")]
    NotUtf8 { path: String, message: String },

    #[error("config.toml at {path} vanished between discovery and read")]
    Vanished { path: String },

    #[error("config.toml at {path} could not be read: {message}")]
    Unreadable { path: String, message: String },

    /// A store section (or `runner`) written as neither a string nor a table: `config.toml [stores]
    /// document must be 'local' or a [stores.document] table …, got int: 5`.
    #[error("config.toml {place} must be 'local' or a {table} table naming the implementation (impl) and its config, got {got}: {value}")]
    SectionNotAliasOrTable {
        place: String,
        table: String,
        got: &'static str,
        value: String,
    },

    /// A present node that is not a table: `config.toml [a.b] must be a table, got int`.
    #[error("config.toml [{path}] must be a table, got {got}")]
    NotATable { path: String, got: &'static str },

    #[error(
        "Unresolved {scheme}:{name} reference (no value and no default); {}",
        remedy(scheme, name)
    )]
    Unresolved { scheme: &'static str, name: String },

    #[error(
        "Cannot resolve 'secret:{name}': no secret store is available for secret: references here"
    )]
    NoSecretStore { name: String },

    /// A `secret:` reference where none is taken (`[explorer]`: none of its settings is a secret).
    #[error("takes no secret: reference ('secret:{name}'): none of these settings is a secret; write the value, or an env:NAME reference")]
    NoSecretHere { name: String },

    #[error("Cannot resolve 'secret:{name}': the secret store failed: {message}")]
    SecretStoreFailed { name: String, message: String },

    /// An error inside a table, prefixed by where it happened: `[plugins.bar]: …` or
    /// `[stores.object.config] root: …`.
    #[error("{place}: {source}")]
    At {
        place: String,
        #[source]
        source: Box<ConfigError>,
    },

    #[error("config.toml sets {package}'s settings more than once, as {spellings}; keep one")]
    DuplicatePluginTable { package: String, spellings: String },

    #[error("[{table}] impls must be a list of 'module:Class' strings, got {got}")]
    ImplsNotList { table: String, got: &'static str },

    #[error("[{table}] impl must be a 'module:Class' string, got {got}: {value}")]
    ImplNotString {
        table: String,
        got: &'static str,
        value: String,
    },

    /// A store section's `impl` that is not a string: it takes a built-in store's name or a
    /// plugin's `<package>:<Class>`.
    #[error("[{table}] impl must be a string, got {got}: {value}; write impl = \"{builtin}\" for the built-in {what}, or \"<package>:<Class>\" for a plugin's", what = chosen_thing(.table))]
    StoreImplNotString {
        table: String,
        got: &'static str,
        value: String,
        builtin: &'static str,
    },

    #[error("impl must be a plugin's '<package>:<Class>', got '{value}'")]
    BadImplForm { value: String },

    #[error("[{table}] names no impl, the {what} it uses (it has {section}); write impl = \"{builtin}\" for the built-in {what}, or \"<package>:<Class>\" for a plugin's", what = chosen_thing(.table))]
    StoreMissingImpl {
        table: String,
        section: String,
        builtin: &'static str,
    },

    #[error("Unknown {var}='{value}': expected 'local', or a [stores.{kind}] table for a hosted backend (and unset {var}, which overrides it)")]
    UnknownStoreAlias {
        var: String,
        value: String,
        kind: &'static str,
    },

    #[error("Unknown AGENT_ENV_DOCUMENT_STORE='{value}': expected 'local', or a [stores.document] table for a hosted backend such as PostgreSQL (and unset AGENT_ENV_DOCUMENT_STORE, which overrides it)")]
    UnknownDocumentAlias { value: String },

    #[error("The 'mongo' document backend is not supported by this agent-env: for a shared document store, configure a [stores.document] table with impl = \"PostgresDocumentStore\" and config = {{ dsn = \"postgresql://…\" }} (and unset AGENT_ENV_DOCUMENT_STORE, which overrides it).")]
    MongoHasNoCoordinates,

    /// A runner other than the built-in one, chosen by `AGENT_ENV_RUNNER` or in the config file
    /// (`[runner] impl = …`, `runner = "…"`): one rule for every spelling, since this agent-env has one
    /// runner and a run asked to go elsewhere must not run here instead. `written` is the setting as
    /// the user wrote it; `in_file` the part of the config file to remove, `None` for the variable.
    #[error(
        "{written} chooses a runner this agent-env does not have: it runs every task with its built-in runner (run, task run and the explorer alike), and no plugin can provide another, so no run starts while it is set; {}",
        runner_remedy(in_file.as_deref())
    )]
    RunnerNotHere {
        written: String,
        in_file: Option<String>,
    },

    /// A string in the file where a store (or the runner) is selected that is not an alias.
    #[error("{place} = '{value}': {expected}")]
    UnknownAliasInFile {
        place: String,
        value: String,
        expected: String,
    },

    /// A store failed to build (unknown class, unknown key, bad value): the store's own sentence.
    #[error("{0}")]
    Store(String),

    /// A hosted store's server did not answer its probe (down, unreachable, too slow): the store's own
    /// sentence. Its settings may be right; a script tells an outage from a mistake by its code.
    #[error("{0}")]
    StoreUnreachable(String),

    #[error(
        "[{table}] has unknown keys [{}]; allowed: ['default_a2a_agent_id']",
        quoted_list(keys)
    )]
    AgentsUnknownKeys { table: String, keys: Vec<String> },

    /// A provider table that names no impl where one is needed (`kind` is `sandbox` or `state`).
    #[error("config.toml {kind} provider '{name}' is missing an 'impl' dotted path")]
    ProviderMissingImpl { kind: &'static str, name: String },

    #[error("config.toml {kind} provider '{name}' must be a 'module:Class' string or a table with 'impl' and/or 'config', got {got}")]
    ProviderNotStringOrTable {
        kind: &'static str,
        name: String,
        got: &'static str,
    },

    #[error("config.toml sandbox provider '{name}' collides with a built-in backend: a built-in's impl cannot be replaced; supply a config-only table instead{}", reserved_name_hint(name))]
    SandboxProviderIsBuiltin { name: String },

    /// `[sandbox] default` names no provider this agent-env has, or is not a string.
    #[error("{0}")]
    SandboxDefault(String),

    #[error(
        "config.toml state provider '{name}' collides with a built-in backend{}",
        reserved_name_hint(name)
    )]
    StateProviderIsBuiltin { name: String },

    #[error(
        "[{table}] configures {owner} and accepts only a 'config' table; got [{}]",
        quoted_list(keys)
    )]
    ProviderConfigOnly {
        table: String,
        owner: String,
        keys: Vec<String>,
    },
}

/// What the section `table` chooses: `runner` for `[runner]`, else `store`.
fn chosen_thing(table: &str) -> &'static str {
    match table {
        "runner" => "runner",
        _ => "store",
    }
}

impl ConfigError {
    /// Wraps this error with the place it happened, as `<place>: <message>`.
    pub fn at(self, place: impl Into<String>) -> ConfigError {
        ConfigError::At {
            place: place.into(),
            source: Box::new(self),
        }
    }

    /// The report code for a problem with the document itself: `config-not-found` when
    /// `$AGENT_ENV_CONFIG` names no file, `config-unreadable` when the file cannot be read or parsed,
    /// `store-unreachable` when a hosted store's server did not answer, `config-invalid` for anything
    /// else wrong inside a readable file.
    pub fn code(&self) -> &'static str {
        match self {
            ConfigError::EnvPathMissing { .. } | ConfigError::ChosenPathMissing { .. } => {
                "config-not-found"
            }
            ConfigError::Malformed { .. }
            | ConfigError::NotUtf8 { .. }
            | ConfigError::Vanished { .. }
            | ConfigError::Unreadable { .. } => "config-unreadable",
            ConfigError::At { source, .. } => source.code(),
            ConfigError::StoreUnreachable(_) => "store-unreachable",
            _ => "config-invalid",
        }
    }
}

fn quoted(items: &[String]) -> String {
    items
        .iter()
        .map(|k| format!("'{k}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn quoted_list(items: &[String]) -> String {
    quoted(items)
}

/// What to do about a reference that has no value.
fn remedy(scheme: &str, name: &str) -> String {
    if name.is_empty() {
        return format!(
            "it names nothing: write the name after '{scheme}:' ({scheme}:NAME, or {scheme}:NAME?DEFAULT)"
        );
    }
    match scheme {
        "secret" => format!(
            "put {name} in the configured secret store (the built-in one reads the environment variable {name} first, then its values and its file)"
        ),
        _ => format!("set the environment variable {name}, or give a default: {scheme}:{name}?DEFAULT"),
    }
}

/// What to do about a runner this agent-env does not have: unset the variable, or remove the
/// setting from the file (or override it here, keeping it for the Python agent-env).
fn runner_remedy(in_file: Option<&str>) -> String {
    match in_file {
        None => "unset AGENT_ENV_RUNNER, or set it to 'local'".to_string(),
        Some(setting) => format!(
            "remove {setting} from the config file (the built-in runner needs no setting), or, to keep it for the Python agent-env, set AGENT_ENV_RUNNER=local, which overrides it here"
        ),
    }
}

/// For a provider name the Python agent-env has built in but this one does not run (`modal`,
/// `local_postgres`): that the name is only reserved, and what to do.
fn reserved_name_hint(name: &str) -> String {
    if name == crate::sandbox::LOCAL {
        return String::new();
    }
    format!(
        " ('{name}' is built into the Python agent-env and reserved here, though this agent-env does not run it: give your provider another name, such as 'my-{name}', and use that name)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn located_errors_keep_the_inner_code() {
        let e = ConfigError::Unresolved {
            scheme: "env",
            name: "NOPE".into(),
        }
        .at("[plugins.bar]");
        assert_eq!(
            e.to_string(),
            "[plugins.bar]: Unresolved env:NOPE reference (no value and no default); set the environment variable NOPE, or give a default: env:NOPE?DEFAULT"
        );
        assert_eq!(e.code(), "config-invalid");
        let nameless = ConfigError::Unresolved {
            scheme: "env",
            name: String::new(),
        };
        assert!(
            nameless.to_string().ends_with(
                "it names nothing: write the name after 'env:' (env:NAME, or env:NAME?DEFAULT)"
            ),
            "{nameless}"
        );
    }
}
