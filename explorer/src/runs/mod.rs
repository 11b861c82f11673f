//! Runs the explorer starts: each one is `agent-env run`'s own engine (`run_bundle`) on a thread of
//! its own, with a fresh session over the server's environment (so it reads config and plugins as a
//! new invocation would), a cancel handle the API holds, and an [`Output`](agent_env::output::Output)
//! that keeps its lines for the Run page.

pub mod bundles;
pub mod capture;
pub mod current;
pub mod manager;
pub mod pin;
pub mod seed_tokens;
pub mod slots;

pub use current::CurrentSession;
pub use manager::{RunManager, StartSpec, Workflow};
