//! What a plugin command reaches through `host.store.*`: the session's configured stores, each built
//! on first use (see [`Session::stores`]), through the stores module's [`HostStoreDispatcher`].

use std::sync::Arc;

use crate::session::Session;
use crate::stores::HostStoreDispatcher;
use agent_env_host::HostServices;

/// The host services of a plugin command: its `host.store.*` calls reach the configured stores. A
/// plugin's store is opened in its plugin, started on first use and shut down when the session goes.
pub fn for_command(session: &Session) -> Arc<dyn HostServices> {
    Arc::new(HostStoreDispatcher::new(session.stores().clone()))
}
