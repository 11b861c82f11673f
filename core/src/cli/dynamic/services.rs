//! What a plugin command reaches through `host.store.*`: the stores the user configured, each built on
//! first use (see [`configured_stores_opening_plugins`]), through the stores module's [`HostStoreDispatcher`].

use std::sync::Arc;

use crate::host::HostServices;
use crate::session::Session;
use crate::stores::{configured_stores_opening_plugins, HostStoreDispatcher};

/// The host services of a plugin command: its `host.store.*` calls reach the configured stores. A
/// plugin's store is opened in its plugin, started on first use and shut down when the store set goes.
pub fn for_command(session: &Session) -> Arc<dyn HostServices> {
    let stores =
        configured_stores_opening_plugins(session.config().clone(), session.plugin_store_opener());
    Arc::new(HostStoreDispatcher::new(Arc::new(stores)))
}
