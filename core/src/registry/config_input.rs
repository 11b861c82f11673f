//! The config the registries read: which file, whether it parsed, and the tables a registry takes
//! (`[envs]`, `[task_steps]`, `[artifacts]`, `[explorer.plugins]` `impls`; `[sandbox.providers]`,
//! `[state.providers]`). The file and the tables' shapes come from [`crate::config`]; this is the one
//! place the registry touches it.

use std::path::PathBuf;
use std::sync::Arc;

use super::outcome::Diagnostic;
use crate::config::{ConfigDocument, ConfigError, ProviderEntry, ProviderKind, SecretLookup};

/// Where a plugin's `secret:` settings are looked up (the configured secret store).
pub type Secrets = Arc<dyn SecretLookup + Send + Sync>;

/// The config document as the registries see it.
#[derive(Clone, Default)]
pub struct ConfigState {
    /// The file, when one was found (kept even when it does not parse).
    pub path: Option<PathBuf>,
    /// `config-not-found` or `config-unreadable`, with the message.
    pub error: Option<Diagnostic>,
    /// The parsed document; `None` when there is no file or it did not parse.
    pub document: Option<ConfigDocument>,
    /// What `secret:` references in `[plugins.<package>]` resolve through; without it they fail.
    pub secrets: Option<Secrets>,
}

impl std::fmt::Debug for ConfigState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigState")
            .field("path", &self.path)
            .field("error", &self.error)
            .field("document", &self.document)
            .field("secrets", &self.secrets.as_ref().map(|_| "secret store"))
            .finish()
    }
}

impl ConfigState {
    pub fn from_document(doc: ConfigDocument) -> ConfigState {
        let error = doc.error.as_ref().map(|p| Diagnostic {
            code: p.code.to_string(),
            reason: p.reason.clone(),
        });
        ConfigState {
            path: doc.path.clone(),
            document: (error.is_none() && doc.path.is_some()).then_some(doc),
            error,
            secrets: None,
        }
    }

    /// The same state with `secret:` references resolving through `secrets`.
    pub fn with_secrets(mut self, secrets: Secrets) -> ConfigState {
        self.secrets = Some(secrets);
        self
    }

    /// A document parsed from text (for tests); `path` is only used in messages.
    pub fn from_text(text: &str, path: &str) -> ConfigState {
        ConfigState::from_document(ConfigDocument::from_text(text, std::path::Path::new(path)))
    }

    pub fn path_text(&self) -> Option<String> {
        self.path.as_ref().map(|p| p.display().to_string())
    }
}

/// The `impls` of a group's table.
pub fn impls(doc: &ConfigDocument, group: &str) -> Result<Vec<String>, ConfigError> {
    crate::config::impls(doc, group)
}

/// The entries of `[sandbox.providers]` or `[state.providers]`.
pub fn provider_tables(
    doc: &ConfigDocument,
    kind: ProviderKind,
) -> Result<Vec<ProviderEntry>, ConfigError> {
    crate::config::provider_entries(doc, kind)
}

/// The plugin's `[plugins.<package>]` table with `env:` and `secret:` references resolved, for
/// `initialize`.
pub fn settings(
    config: &ConfigState,
    package: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, ConfigError> {
    match &config.document {
        Some(doc) => {
            let secrets = config.secrets.as_deref().map(|s| s as &dyn SecretLookup);
            crate::config::plugin_settings(doc, package, secrets)
        }
        None => Ok(serde_json::Map::new()),
    }
}
