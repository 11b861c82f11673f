//! What the explorer reads: the stores runs are recorded in, read as one (the @local store a bundle
//! run writes, `local.db`, and the configured document store a stored task's run writes), and the
//! object stores that hold their files (the run's local object store, then the configured one).
//! A configured document store that cannot be read is left out and tried again later ([`records`]).
//! Every call here blocks; handlers call it on the blocking pool.

pub mod entities;
pub mod instances;
pub mod objects;
pub mod records;
pub mod runs_here;

use std::sync::Arc;
use std::time::Duration;

use agent_env::run::local_stores;
use agent_env::run::recorded::Recorded;
use agent_env::session::Session;
use agent_env_store::object::ObjectStore;

use self::records::{Opened, Records};

/// The stores the explorer reads, opened as the server starts (nothing touches disk until a read
/// finds a file).
pub struct Data {
    /// The @local store, then the configured one, read as one; the configured one left out while it
    /// cannot be read, and tried again at most once per `store_retry_seconds`.
    pub documents: Records,
    /// The @local object store, then the configured one (when it builds).
    pub objects: Vec<Arc<dyn ObjectStore>>,
}

impl Data {
    /// The stores of `session`'s state root and config; a configured document store that cannot be
    /// read is tried again once `retry_every` has passed.
    pub fn open(session: &Session, retry_every: Duration) -> Data {
        let local = local_stores::open(&session.paths().state_root());
        let mut objects = vec![local.objects];
        if let Ok(configured) = session.stores().object() {
            objects.push(configured);
        }
        let opened = Opened::from(Recorded::open(session));
        Data {
            documents: Records::new(opened, retry_every),
            objects,
        }
    }
}
