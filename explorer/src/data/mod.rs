//! What the explorer reads: the stores runs are recorded in, read as one (the @local store a bundle
//! run writes, `local.db`, and the configured document store a stored task's run writes), and the
//! object stores that hold their files (the run's local object store, then the configured one).
//! Every call here blocks; handlers call it on the blocking pool.

pub mod entities;
pub mod instances;
pub mod objects;
pub mod runs_here;

use std::sync::Arc;

use agent_env::run::local_stores;
use agent_env::run::recorded::Recorded;
use agent_env::session::Session;
use agent_env_store::document::DocumentStore;
use agent_env_store::object::ObjectStore;

/// The stores the explorer reads, opened once for the server's life (nothing touches disk until a
/// read finds a file).
pub struct Data {
    /// The @local store, then the configured one, read as one.
    pub documents: Arc<dyn DocumentStore>,
    /// Why the configured document store is not read, when it is not.
    pub left_out: Option<String>,
    /// The @local object store, then the configured one (when it builds).
    pub objects: Vec<Arc<dyn ObjectStore>>,
}

impl Data {
    /// The stores of `session`'s state root and config.
    pub fn open(session: &Session) -> Data {
        let local = local_stores::open(&session.paths().state_root());
        let mut objects = vec![local.objects];
        if let Ok(configured) = session.stores().object() {
            objects.push(configured);
        }
        let recorded = Recorded::open(session);
        Data {
            left_out: recorded.left_out().map(String::from),
            documents: Arc::new(recorded),
            objects,
        }
    }
}
