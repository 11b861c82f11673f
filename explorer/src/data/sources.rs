//! The two sets of stores the explorer keeps, each the @local store then the configured one, and how
//! one request reads them: [`DocumentStores`], where runs are recorded, read as one, the configured
//! store watched so that its failure leaves it out of the request instead of failing it; and
//! [`ObjectStores`], looked a URL up in, in order.

use std::sync::Arc;

use agent_env::run::recorded::Recorded;
use agent_env_store::document::DocumentStore;
use agent_env_store::object::ObjectStore;

use super::records::{Failure, Fault, Sources};
use super::watched::{Watch, Watched};

/// The record stores: the @local one, then the configured one, read as one.
#[derive(Clone)]
pub struct DocumentStores {
    /// The @local store, then the configured one when it is read.
    sources: Vec<Arc<dyn DocumentStore>>,
    /// One request's watch on the configured store; none outside a request.
    watch: Option<Arc<Watch>>,
    /// The sources read as one (the configured one through the watch, in a request).
    read: Arc<Recorded>,
}

impl DocumentStores {
    /// `sources` (the @local store first), read as one.
    pub fn new(sources: Vec<Arc<dyn DocumentStore>>) -> DocumentStores {
        DocumentStores {
            read: Arc::new(Recorded::of(sources.clone())),
            sources,
            watch: None,
        }
    }

    /// The stores read as one.
    pub fn read(&self) -> &dyn DocumentStore {
        self.read.as_ref()
    }
}

impl Sources for DocumentStores {
    fn for_request(&self, fault: &Arc<Fault>) -> DocumentStores {
        let watch = Arc::new(Watch::new(fault.clone()));
        let read = self
            .sources
            .iter()
            .enumerate()
            .map(|(i, store)| match i {
                0 => store.clone(),
                _ => Arc::new(Watched::new(store.clone(), watch.clone())) as Arc<dyn DocumentStore>,
            })
            .collect();
        DocumentStores {
            sources: self.sources.clone(),
            watch: Some(watch),
            read: Arc::new(Recorded::of(read)),
        }
    }

    fn without_configured(&self) -> DocumentStores {
        DocumentStores::new(self.sources.iter().take(1).cloned().collect())
    }

    fn failure(&self) -> Option<Failure> {
        self.watch.as_ref()?.failure()
    }
}

/// The object stores, in the order a URL is looked up in them: the @local one, then the configured
/// one. A failure of the configured one is its request's error (each request asks it anew).
pub type ObjectStores = Vec<Arc<dyn ObjectStore>>;

impl Sources for ObjectStores {
    fn for_request(&self, _: &Arc<Fault>) -> ObjectStores {
        self.clone()
    }

    fn without_configured(&self) -> ObjectStores {
        self.iter().take(1).cloned().collect()
    }

    fn failure(&self) -> Option<Failure> {
        None
    }
}
