//! A content-addressed object store: sha256-named blobs under `<root>/blobs/<first two hex>/<digest>`, an
//! SQLite index from keys to digests, `cas://<bucket>/<key>` URLs, and a garbage collector.

mod blobs;
mod config;
mod error;
mod gc;
mod index;
mod lock;
mod store;
mod time;

pub use blobs::{hash_bytes, is_digest, STAGED_PREFIX};
pub use config::{CasConfig, CONFIG_KEYS, DEFAULT_BUCKET, REQUIRED_KEYS};
pub use error::{CasError, CasResult};
pub use gc::{GcOptions, GcReport};
pub use store::{ContentAddressedObjectStore, ObjectMetadata, DEFAULT_CONTENT_TYPE};
pub use time::rfc3339_utc;
