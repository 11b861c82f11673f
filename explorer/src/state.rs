//! What every request handler shares.

use std::sync::Arc;
use std::time::Duration;

use agent_env::session::Session;
use agent_env_store::document::DocumentStore;
use tokio::sync::watch;

use crate::data::instances::Judge;
use crate::data::records::{DocumentStores, ObjectStores, Reading};
use crate::data::runs_here::RunsHere;
use crate::data::Data;
use crate::plugins::ExplorerPlugins;
use crate::runs::{CurrentSession, RunManager};

/// The server's state.
pub struct AppState {
    /// The `up` invocation's session: its environment, config and discovery.
    pub session: Arc<Session>,
    /// A session that knows the plugins as they are now (installed since `up` started included):
    /// what runs are checked against and bundles are listed from.
    pub current: CurrentSession,
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

impl AppState {
    /// The stores a request reads. A configured document store left out is tried again when it is
    /// due, in the session that knows the config and plugins as they are now: this blocks, so call
    /// it on the blocking pool.
    pub fn reading(&self) -> Reading<DocumentStores> {
        // A local.db cut to 0 bytes is read as no runs (and never opened): a list says so.
        let said = self.state_unusable().or_else(|| {
            agent_env::run::local_stores::warnings(&self.session.paths().state_root())
                .into_iter()
                .next()
        });
        self.data
            .documents
            .reading(|| crate::data::document_stores(&self.current.get()))
            .with_state_unusable(said)
    }

    /// Why the state folder can't be used (so this machine's runs can't be read, and runs can't
    /// start), when it can't.
    pub fn state_unusable(&self) -> Option<String> {
        crate::data::state_folder::unusable(&self.session.paths().state_root())
    }

    /// The object stores a request looks a URL up in; a configured one left out is tried again as
    /// [`AppState::reading`] tries a document store. This blocks too.
    pub fn object_stores(&self) -> Reading<ObjectStores> {
        self.data
            .objects
            .reading(|| crate::data::object_stores(&self.current.get()))
    }

    /// What a request judges instances by: the stores it reads (`docs`), and the runs live on this
    /// machine (read at most once, when needed), the explorer's own runs still going among them.
    pub fn judge<'a>(&self, docs: &'a dyn DocumentStore) -> Judge<'a> {
        let going = self
            .runs
            .all()
            .iter()
            .filter(|w| !w.phase().is_done())
            .map(|w| w.id.clone())
            .collect();
        let runs = RunsHere::new(self.session.paths().locks_dir(), going);
        Judge::new(docs, runs)
    }
}
