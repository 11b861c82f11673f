//! What a plugin command reaches through `host.store.*`: the stores the user configured
//! (`[stores.<kind>]`, the `AGENT_ENV_<KIND>_STORE` overrides, else the built-in local stores), each
//! built on first use, through the stores module's [`HostStoreDispatcher`].

use std::sync::Arc;

use crate::config::build::{build_configured, configured_secrets};
use crate::config::references::SecretLookup;
use crate::config::ConfigDocument;
use crate::host::HostServices;
use crate::stores::{HostStoreDispatcher, StoreError, StoreKind, StoreSet};

/// The configured stores of `doc`, built lazily (a store that is never called is never built).
pub fn configured_stores(doc: ConfigDocument) -> StoreSet {
    StoreSet::new(move |kind| {
        // `secret:` references in a store's config resolve through the configured secret store.
        let secrets = match kind {
            StoreKind::Secret => None,
            _ => configured_secrets(&doc, None).ok(),
        };
        build_configured(
            &doc,
            kind,
            secrets.as_ref().map(|s| s as &dyn SecretLookup),
            None,
        )
        .map_err(|e| StoreError::Config(e.to_string()))
    })
}

/// The host services of a plugin command: its `host.store.*` calls reach the configured stores.
pub fn for_command(doc: ConfigDocument) -> Arc<dyn HostServices> {
    Arc::new(HostStoreDispatcher::new(Arc::new(configured_stores(doc))))
}
