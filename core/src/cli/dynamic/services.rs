//! What a plugin command reaches through `host.store.*`: the stores the user configured, each built on
//! first use (see [`configured_stores_opening_plugins`]), through the stores module's [`HostStoreDispatcher`].

use std::sync::Arc;

use crate::config::configured_stores_opening_plugins;
use crate::config::ConfigDocument;
use crate::stores::{HostStoreDispatcher, PluginStoreFactory};
use agent_env_host::HostServices;

/// The host services of a plugin command: its `host.store.*` calls reach the configured stores. A
/// plugin's store is opened in its plugin, started on first use and shut down when the store set goes.
pub fn for_command(doc: ConfigDocument) -> Arc<dyn HostServices> {
    let stores = configured_stores_opening_plugins(
        doc,
        Box::new(|doc, secrets| {
            let (factory, _host) = crate::cli::store::plugin_stores(doc, secrets)?;
            Ok(Arc::new(factory) as Arc<dyn PluginStoreFactory>)
        }),
    );
    Arc::new(HostStoreDispatcher::new(Arc::new(stores)))
}
