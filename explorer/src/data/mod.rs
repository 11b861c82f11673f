//! What the explorer reads: the stores runs are recorded in, read as one (the @local store a bundle
//! run writes, `local.db`, and the configured document store a stored task's run writes), and the
//! object stores that hold their files (the run's local object store, then the configured one).
//! A configured store that cannot be used, at start or later, is left out and tried again later
//! ([`records`]).
//! Every call here blocks; handlers call it on the blocking pool.

pub mod entities;
pub mod filter;
pub mod instances;
pub mod objects;
pub mod records;
pub mod runs_here;
pub mod short_ids;
pub mod sources;
pub mod state_folder;
pub mod unset;
pub mod watched;

use std::time::Duration;

use agent_env::run::local_stores;
use agent_env::run::recorded::Recorded;
use agent_env::session::Session;

use self::records::{DocumentStores, LeftOut, ObjectStores, Opened, Records};

/// The stores the explorer reads, opened as the server starts (nothing touches disk until a read
/// finds a file).
pub struct Data {
    /// The @local store, then the configured one, read as one; the configured one left out while it
    /// cannot be read, and tried again at most once per `store_retry_seconds`.
    pub documents: Records<DocumentStores>,
    /// The @local object store, then the configured one; left out, and tried again, the same way.
    pub objects: Records<ObjectStores>,
}

impl Data {
    /// The stores of `session`'s state root and config; a configured store that cannot be used is
    /// tried again once `retry_every` has passed.
    pub fn open(session: &Session, retry_every: Duration) -> Data {
        Data {
            documents: Records::new(document_stores(session), retry_every),
            objects: Records::new(object_stores(session), retry_every),
        }
    }
}

/// The @local document store of `session`'s state root, then its configured one when it answers.
pub fn document_stores(session: &Session) -> Opened<DocumentStores> {
    let recorded = Recorded::open(session);
    Opened {
        stores: DocumentStores::new(recorded.stores().to_vec()),
        left_out: recorded.left_out().map(|why| LeftOut {
            why: why.to_string(),
            unset: unset::unset_variables(session, "document"),
        }),
    }
}

/// The @local object store of `session`'s state root, then its configured one when it builds.
pub fn object_stores(session: &Session) -> Opened<ObjectStores> {
    let local = local_stores::open(&session.paths().state_root());
    let mut stores = vec![local.objects];
    let left_out = match session.stores().object() {
        Ok(configured) => {
            stores.push(configured);
            None
        }
        Err(e) => Some(LeftOut {
            why: format!(
                "the configured object store can't be used, so the files in it can't be shown: {e}"
            ),
            unset: unset::unset_variables(session, "object"),
        }),
    };
    Opened { stores, left_out }
}
