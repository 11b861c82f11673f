//! The stores the configuration selects, as one lazily built [`StoreSet`]: what a command that uses
//! stores (or a `HostStoreDispatcher` answering a plugin's `host.store.*` calls) holds for its lifetime.

use std::sync::{Arc, OnceLock};

use super::configured_store::{build_configured, configured_secrets, StoreSecrets};
use super::document::ConfigDocument;
use super::references::SecretLookup;
use crate::stores::{AnyStore, PluginStoreFactory, StoreError, StoreKind, StoreResult, StoreSet};

/// Makes the factory that opens plugin stores (`impl = "<package>:<Class>"`), given the document and
/// the configured secret store its `[plugins.<package>]` settings may reference.
pub type OpenPluginStores = Box<
    dyn Fn(&ConfigDocument, Option<&StoreSecrets>) -> Result<Arc<dyn PluginStoreFactory>, String>
        + Send
        + Sync,
>;

/// Each kind's configured store (`[stores.<kind>]`, the `AGENT_ENV_<KIND>_STORE` overrides, else the
/// built-in local stores), built on first use; `secret:` references resolve through the configured
/// secret store, and plugin stores open through `plugins` (or are refused without it).
pub fn configured_stores(
    doc: ConfigDocument,
    plugins: Option<Arc<dyn PluginStoreFactory>>,
) -> StoreSet {
    StoreSet::new(move |kind| {
        let factory = plugins.as_deref();
        let secrets = secrets_for(&doc, kind, factory);
        build_kind(&doc, kind, secrets.as_ref(), factory)
    })
}

/// [`configured_stores`] whose plugin-store factory is made by `open_plugins` once, when the first
/// store is built (so a command that never touches a store starts no plugin host). The plugins'
/// `[plugins.<package>]` settings resolve `secret:` through a secret store built without plugins (a
/// plugin's settings cannot depend on a plugin's store); every store's config resolves it through the
/// configured secret store, which may itself be a plugin's.
pub fn configured_stores_opening_plugins(
    doc: ConfigDocument,
    open_plugins: OpenPluginStores,
) -> StoreSet {
    let opened: OnceLock<Result<Arc<dyn PluginStoreFactory>, String>> = OnceLock::new();
    StoreSet::new(move |kind| {
        let factory = opened
            .get_or_init(|| open_plugins(&doc, configured_secrets(&doc, None).ok().as_ref()))
            .as_ref()
            .map_err(|e| StoreError::Config(e.clone()))?;
        let secrets = secrets_for(&doc, kind, Some(factory.as_ref()));
        build_kind(&doc, kind, secrets.as_ref(), Some(factory.as_ref()))
    })
}

/// The configured secret store that `kind`'s `secret:` references resolve through (none for the
/// secret store itself, or when it cannot be built).
fn secrets_for(
    doc: &ConfigDocument,
    kind: StoreKind,
    plugins: Option<&dyn PluginStoreFactory>,
) -> Option<StoreSecrets> {
    match kind {
        StoreKind::Secret => None,
        _ => configured_secrets(doc, plugins).ok(),
    }
}

fn build_kind(
    doc: &ConfigDocument,
    kind: StoreKind,
    secrets: Option<&StoreSecrets>,
    plugins: Option<&dyn PluginStoreFactory>,
) -> StoreResult<AnyStore> {
    build_configured(doc, kind, secrets.map(|s| s as &dyn SecretLookup), plugins)
        .map_err(|e| StoreError::Config(e.to_string()))
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
