//! The run routes under `/api/v1/tasks/{task_id}` (start one run or a group, cancel, list runs,
//! instances and run groups, progress) and the instance routes under `/api/v1/task-instances`.
//!
//! One job a module. Starting runs: `start_one` and `start_group`, over what both check, `runnable`
//! (the task found again, at the version a run records, and the seeds held to its steps) and
//! `start_checks` (the names, the agent artifact and the state folder); `cancel` stops them. Reading
//! them back: `listing` (a task's runs and instances, every instance), `instance` (one instance),
//! `progress` (its steps' state), `instance_records` (its triggers and conversations) and `groups`
//! (run groups). Beneath them: `task_lookup` (a task's document, or a 404) and `known_workflow`
//! (which of this explorer's runs recorded an instance).

mod cancel;
mod groups;
mod instance;
mod instance_records;
mod known_workflow;
mod listing;
mod progress;
mod runnable;
mod start_checks;
mod start_group;
mod start_one;
mod task_lookup;

pub use cancel::{cancel_run, CancelBody};
pub use groups::{get_any_group, get_group, group_answer, list_groups};
pub use instance::{get_any_instance, get_instance};
pub use instance_records::{conversations, triggers};
pub use listing::{list_all_instances, list_instances, list_runs, InstancePage};
pub use progress::progress;
pub use runnable::FIRST_VERSION;
pub use start_checks::{overrides, refuse_without_state, MAX_NAME_CHARS};
pub use start_group::{start_group, GroupBody, MAX_RUNS_PER_REQUEST};
pub use start_one::{start_one, RunBody};
