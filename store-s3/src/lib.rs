//! `S3ObjectStore`, agent-env's object store over one bucket of Amazon S3 or an S3-compatible server
//! (SeaweedFS, MinIO, Ceph, R2…), chosen with `[stores.object] impl = "S3ObjectStore"`.
//!
//! Why these crates: requests are signed with [`rusty_s3`], a sans-IO SigV4 signer (every request is a
//! presigned URL, so the same code makes transfer grants), and sent with [`ureq`], a small blocking
//! HTTP client. The store interface is blocking, so no async runtime is started, and nothing of the
//! network stack runs until a store of this kind is configured and called. The AWS SDK and
//! `object_store` were the alternatives: both need tokio and several times the build, and neither makes
//! the multipart upload's completion conditional (`If-None-Match: *`), which write-once needs.
//!
//! - [`settings`]: the config keys, the AWS environment variables, and their checks;
//! - `location`: `s3://<bucket>/<key>` URLs;
//! - `wire`: one signed request, and S3's error answers as store errors;
//! - `retry`: when a request is sent again (a server briefly overloaded or failing, a connection cut
//!   before the answer), how often and after what pause;
//! - `stall`: a body that stops moving, told as the object it was and what to do;
//! - `resume`: a download whose connection was cut, asked for again from where it was cut, if the
//!   object is still the same;
//! - `client`: the bucket's settings, signer and requests, which the modules below build on;
//! - `check`: the connection check `config check` runs (the bucket listed, a write proven without an
//!   object), each request within a short limit;
//! - `store`: the [`ObjectStore`](agent_env_store::ObjectStore) implementation;
//! - `upload`: streamed and multipart uploads of files;
//! - `open_uploads`: the multipart uploads under way, for a command stopped at once to abort;
//! - `grants`: presigned GET/PUT grants and POST upload policies.

#![warn(missing_docs)]

mod check;
mod client;
mod grants;
mod location;
mod open_uploads;
mod resume;
mod retry;
pub mod settings;
mod stall;
mod store;
mod upload;
mod wire;

pub use open_uploads::{abort_uploads_under_way, Aborted, LeftUpload};
pub use settings::{S3Credentials, S3Settings, CLASS, CONFIG_KEYS, REQUIRED_KEYS};
pub use store::S3ObjectStore;
pub use upload::PART_SIZE;
