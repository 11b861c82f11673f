//! [`RunStores`]: the document and object stores one run writes its entities, instances and objects to
//! and its steps read artifacts from. A bundle run's are the @local stores on this machine
//! ([`super::local_stores::open`]); a stored task's run's are the configured ones
//! ([`super::stored_task::configured_stores`]). Everything below the run takes them from here, so no
//! step knows which it was given.

use std::sync::Arc;

use crate::stores::{DocumentStore, ObjectStore};

/// The two stores a run writes to.
pub struct RunStores {
    pub documents: Arc<dyn DocumentStore>,
    pub objects: Arc<dyn ObjectStore>,
}
