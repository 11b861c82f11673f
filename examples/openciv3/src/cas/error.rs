//! Everything the store can refuse or fail at, each with the sentence a user sees.

use std::io;
use std::path::PathBuf;

use agent_env_protocol::codes::ErrorKind;

/// An error of the content-addressed object store.
#[derive(Debug, thiserror::Error)]
pub enum CasError {
    /// A read of an address that holds no object: an absent key, a prefix, or a path below an object.
    #[error("No object at {url}.")]
    NotFound { url: String },

    /// A write-once key is taken.
    #[error("Object already exists at {url}.")]
    AlreadyExists { url: String },

    /// A URL that is not `cas://<bucket>/…` of this store.
    #[error("'{url}' is not an object in cas://{bucket}.")]
    ForeignUrl { url: String, bucket: String },

    /// A key the store cannot hold (empty, with a NUL byte, or escaping the store).
    #[error("Key '{key}' is not a valid object key: {reason}.")]
    InvalidKey { key: String, reason: &'static str },

    /// A wrong config table or constructor argument.
    #[error("{0}")]
    Config(String),

    /// The filesystem refused an operation.
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// The SQLite index failed.
    #[error("the object index at {} failed: {source}", path.display())]
    Index {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    /// A file given to `put_file` changed between hashing it and copying it.
    #[error(
        "{} changed while it was being stored (its sha256 went from {before} to {after}); store it again once nothing writes to it",
        path.display()
    )]
    SourceChanged {
        path: PathBuf,
        before: String,
        after: String,
    },

    /// The index names a blob that is not on disk (someone removed files under the root by hand).
    #[error(
        "{url} is indexed as blob {digest}, but {} is missing; the store root was changed outside the store (restore the blob or re-put the key with allow_overwrite)",
        path.display()
    )]
    MissingBlob {
        url: String,
        digest: String,
        path: PathBuf,
    },

    /// A writer kept losing its blob to a concurrent garbage collection.
    #[error("could not store {url}: its blob was removed by a concurrent gc {attempts} times; try again")]
    BlobKeptVanishing { url: String, attempts: u32 },

    /// Another `gc` holds the store's gc lock.
    #[error("another gc is running on {}; wait for it to finish", root.display())]
    GcBusy { root: PathBuf },
}

impl CasError {
    /// The wire error kind this error crosses the pipe as.
    pub fn kind(&self) -> ErrorKind {
        match self {
            CasError::NotFound { .. } => ErrorKind::NotFound,
            CasError::AlreadyExists { .. } => ErrorKind::AlreadyExists,
            CasError::ForeignUrl { .. } => ErrorKind::ForeignUrl,
            CasError::InvalidKey { .. } => ErrorKind::InvalidValue,
            CasError::Config(_) => ErrorKind::ConfigError,
            CasError::Io { .. }
            | CasError::Index { .. }
            | CasError::MissingBlob { .. }
            | CasError::SourceChanged { .. } => ErrorKind::IoError,
            CasError::BlobKeptVanishing { .. } | CasError::GcBusy { .. } => {
                ErrorKind::ConcurrentModification
            }
        }
    }

    /// The underlying filesystem error, when there is one (e.g. a download onto a directory).
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            CasError::Io { source, .. } => Some(source),
            _ => None,
        }
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(io::Error) -> CasError {
        let path = path.into();
        move |source| CasError::Io {
            action,
            path,
            source,
        }
    }
}

/// The store's result type.
pub type CasResult<T> = Result<T, CasError>;
