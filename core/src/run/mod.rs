//! Running a planned bundle (docs/tasks.md): write its entities, run each selected task once (at
//! most four at a time, all in one run group), send the summary and the teardown report to the caller's
//! [`Output`](crate::output::Output), and say how the run ended ([`RunStatus`]); the CLI turns that
//! into an exit code.

pub mod artifact_copy;
pub mod artifact_objects;
mod bash_predictions;
pub mod builtin_steps;
pub mod bundle_run;
pub mod bundle_warnings;
pub mod cancel;
mod cancel_handle;
pub mod context;
pub mod error;
pub mod events;
pub mod executor;
mod file_lock;
pub mod heartbeat;
pub mod ledger;
pub mod liveness;
pub mod local_stores;
mod long_steps;
pub mod materialize;
mod options;
pub mod outcome;
pub mod plan;
mod plan_errors;
mod planned_bundle;
mod planned_tasks;
mod plugin_cancel;
pub mod plugin_steps;
mod process_identity;
pub mod recorded;
pub mod recorder;
pub mod run_log;
pub mod run_stores;
mod sandbox_predictions;
pub mod short_ids;
mod skipped;
mod status;
mod step_schedule;
pub mod stored_artifact;
pub mod stored_task;
mod summary;
mod task_notes;
pub mod task_run;
pub mod task_shared;
mod task_verdict;
mod teardown;
mod watchdog;

pub use bundle_run::{run_bundle, run_bundle_observed, run_bundle_pinned, RunRequest};
pub use cancel_handle::{cancel_of, Stopping, CANCELLED_BEFORE_TASKS};
pub use error::RunError;
pub use options::RunOptions;
pub use planned_bundle::execute;
pub use planned_tasks::{run_planned, MAX_CONCURRENT_TASKS};
pub use status::RunStatus;
use task_notes::say_task_notes;
