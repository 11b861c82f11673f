//! What every request handler shares.

use std::sync::Arc;
use std::time::Duration;

use agent_env::session::Session;
use tokio::sync::watch;

use crate::data::Data;
use crate::plugins::ExplorerPlugins;
use crate::runs::RunManager;

/// The server's state.
pub struct AppState {
    /// The `up` invocation's session: its environment, config and discovery.
    pub session: Arc<Session>,
    pub data: Arc<Data>,
    pub runs: Arc<RunManager>,
    /// Turns true when the server is stopping; live streams end on it.
    pub stopping: watch::Receiver<bool>,
    /// How often a run group's event stream sends a snapshot.
    pub snapshot_every: Duration,
    /// The explorer plugins and their routes.
    pub plugins: Arc<ExplorerPlugins>,
}

/// The state as handlers take it.
pub type Shared = Arc<AppState>;
