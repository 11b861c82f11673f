//! The stores the configuration selects, as one lazily built [`StoreSet`]: what a command that uses
//! stores (or a `HostStoreDispatcher` answering a plugin's `host.store.*` calls) holds for its lifetime.

use std::sync::Arc;

use super::build::{PluginStoreFactory, StoreSet};
use super::error::StoreError;
use super::StoreKind;
use crate::config::build::{build_configured, configured_secrets};
use crate::config::references::SecretLookup;
use crate::config::ConfigDocument;

/// Each kind's configured store, built on first use (`secret:` references resolved through the
/// configured secret store; plugin stores opened through `plugins`, or refused without it).
pub fn configured_stores(
    doc: ConfigDocument,
    plugins: Option<Arc<dyn PluginStoreFactory>>,
) -> StoreSet {
    StoreSet::new(move |kind| {
        let factory = plugins.as_deref();
        let secrets = if kind == StoreKind::Secret {
            None
        } else {
            configured_secrets(&doc, factory).ok()
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
