//! The secret store: named secret strings.

use crate::error::StoreResult;

/// Named secrets. An empty string is a present value and comes back verbatim, never as `None`.
pub trait SecretStore: Send + Sync {
    /// The secret called `name`, or `None` when there is none.
    fn get(&self, name: &str) -> StoreResult<Option<String>>;
}
