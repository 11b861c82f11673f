//! What a plugin command reaches through `host.store.*`: the stores the user configured
//! (`[stores.<kind>]`, the `AGENT_ENV_<KIND>_STORE` overrides, else the built-in local stores), each
//! built on first use, through the stores module's [`HostStoreDispatcher`].

use std::sync::{Arc, OnceLock};

use crate::config::build::{build_configured, configured_secrets};
use crate::config::references::SecretLookup;
use crate::config::ConfigDocument;
use crate::host::{HostServices, PluginHost};
use crate::stores::plugin_stores::HostPluginStores;
use crate::stores::{HostStoreDispatcher, PluginStoreFactory, StoreError, StoreKind, StoreSet};

/// The configured stores of `doc`, built lazily (a store that is never called is never built). A
/// plugin's store (`impl = "<package>:<Class>"`) is opened in its plugin, started on first use and shut
/// down when the store set goes.
pub fn configured_stores(doc: ConfigDocument) -> StoreSet {
    let plugins: OnceLock<Result<(HostPluginStores, Arc<PluginHost>), String>> = OnceLock::new();
    StoreSet::new(move |kind| {
        // `secret:` references in a store's config resolve through the configured secret store.
        let secrets = match kind {
            StoreKind::Secret => None,
            _ => configured_secrets(&doc, None).ok(),
        };
        let factory = plugins
            .get_or_init(|| crate::cli::store::plugin_stores(&doc, secrets.as_ref()))
            .as_ref()
            .map_err(|e| StoreError::Config(e.clone()))?;
        build_configured(
            &doc,
            kind,
            secrets.as_ref().map(|s| s as &dyn SecretLookup),
            Some(&factory.0 as &dyn PluginStoreFactory),
        )
        .map_err(|e| StoreError::Config(e.to_string()))
    })
}

/// The host services of a plugin command: its `host.store.*` calls reach the configured stores.
pub fn for_command(doc: ConfigDocument) -> Arc<dyn HostServices> {
    Arc::new(HostStoreDispatcher::new(Arc::new(configured_stores(doc))))
}
