//! The stores the configuration selects, as one lazily built [`StoreSet`]: what a command that uses
//! stores (or a `HostStoreDispatcher` answering a plugin's `host.store.*` calls) holds for its lifetime.

use std::sync::{Arc, OnceLock};

use super::build::{PluginStoreFactory, StoreSet};
use super::error::StoreError;
use super::StoreKind;
use crate::config::build::{build_configured, configured_secrets, StoreSecrets};
use crate::config::references::SecretLookup;
use crate::config::ConfigDocument;

/// Makes the factory that opens plugin stores (`impl = "<package>:<Class>"`), given the document and
/// the configured secret store its `[plugins.<package>]` settings may reference.
pub type OpenPluginStores = Box<
    dyn Fn(&ConfigDocument, Option<&StoreSecrets>) -> Result<Arc<dyn PluginStoreFactory>, String>
        + Send
        + Sync,
>;

/// Each kind's configured store (`[stores.<kind>]`, the `AGENT_ENV_<KIND>_STORE` overrides, else the
/// built-in local stores), built on first use; `secret:` references in a store's config resolve
/// through the configured secret store. With `open_plugins`, the plugin-store factory is made once,
/// when the first store is built, and a plugin's store opens in its plugin; without it a plugin store
/// is refused.
pub fn configured_stores(doc: ConfigDocument, open_plugins: Option<OpenPluginStores>) -> StoreSet {
    let plugins: OnceLock<Result<Arc<dyn PluginStoreFactory>, String>> = OnceLock::new();
    StoreSet::new(move |kind| {
        let secrets = match kind {
            StoreKind::Secret => None,
            _ => configured_secrets(&doc, None).ok(),
        };
        let factory = match &open_plugins {
            Some(open) => Some(
                plugins
                    .get_or_init(|| open(&doc, secrets.as_ref()))
                    .as_ref()
                    .map_err(|e| StoreError::Config(e.clone()))?
                    .as_ref(),
            ),
            None => None,
        };
        build_configured(
            &doc,
            kind,
            secrets.as_ref().map(|s| s as &dyn SecretLookup),
            factory,
        )
        .map_err(|e| StoreError::Config(e.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_build_from_the_document_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("objects");
        let text = format!(
            "[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = {{ root = \"{}\" }}\n\
             [stores.document]\nimpl = \"LocalFilesystemObjectStore\"\n",
            root.display()
        );
        let doc = ConfigDocument::from_text(&text, &dir.path().join("config.toml"));
        let stores = configured_stores(doc, None);
        let first = stores.object().unwrap();
        first.put("k", b"v", "text/plain", false).unwrap();
        let again = stores.object().unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert!(root.join("k").is_file());
        let err = stores.document().err().unwrap();
        assert!(matches!(err, StoreError::Config(_)));
        assert!(
            err.to_string()
                .contains("is not a subclass of DocumentStore"),
            "{err}"
        );
    }
}
