//! Helpers shared by the tests of the workspace's crates (core, the explorer, host, the
//! cross-language suite, the OpenCiv3 example), written once:
//!
//! - [`binaries`]: the `target/<profile>` folder of the running test, and the workspace binaries
//!   (the fixture plugins, `agent-env`) built into it once per test process;
//! - [`isolation`]: pointing a command's HOME, XDG folders and plugins directory into a temp folder,
//!   so a test touches nothing of the real machine;
//! - [`ran`]: the outcome of one run of a binary, for assertions;
//! - [`local_db`]: reading what a run wrote to the local document store;
//! - [`servers`]: real PostgreSQL and S3 servers started by the project's scripts, and a loopback
//!   server that never answers;
//! - [`slow_bodies`]: loopback servers that stall, or trickle, midway through a download or an
//!   upload;
//! - [`deadline`]: running a call that might hang under a bound, so the test fails instead;
//! - [`terminal`]: running a command with its stdout on a pseudo-terminal;
//! - [`forwarding`]: a document store answering from another one, with hooks on the calls a unit
//!   test watches or disturbs.
//!
//! Test-only (`publish = false`): it panics with a message instead of returning errors where a test
//! cannot go on without what it asked for.

pub mod binaries;
pub mod deadline;
pub mod forwarding;
pub mod isolation;
pub mod local_db;
pub mod ran;
pub mod servers;
pub mod slow_bodies;
pub mod terminal;

pub use binaries::{cargo_build, fixture, profile_dir, workspace_binary};
pub use forwarding::{CountedQueries, Forwarding, Hooks};
pub use isolation::{forget_inherited, IsolatedDirs};
pub use local_db::documents;
pub use ran::Ran;
