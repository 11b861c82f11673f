//! What every task of a run shares: the run's stores, its cancel, its plugin steps' executor, where its
//! progress and events go, its journal and its timings ([`RunShared`]), and the count of its tasks
//! that have ended ([`Tally`]). The run builds it once (`planned_tasks`); each task's run
//! (`task_run`), its steps' schedule (`step_schedule`) and its verdict (`task_verdict`) read it.

use serde_json::{Map, Value};

use crate::output::Output;
use crate::run::cancel::Cancel;
use crate::run::events::RunObserver;
use crate::run::executor::StepExecutor;
use crate::run::heartbeat::Liveness;
use crate::run::liveness::{InstancesIn, RunJournal};
use crate::run::long_steps::LongSteps;
use crate::run::recorder::Flusher;
use crate::run::run_stores::RunStores;
use crate::sandbox::SandboxProvider;

/// What one task run needs from the whole run.
pub struct RunShared<'a> {
    pub stores: &'a RunStores,
    pub cancel: &'a Cancel,
    pub executor: &'a dyn StepExecutor,
    /// Where the run's progress lines go.
    pub out: &'a dyn Output,
    pub run_group_id: &'a str,
    pub user_overrides: &'a Map<String, Value>,
    /// Entries every context's metadata starts with.
    pub context_metadata: &'a Map<String, Value>,
    pub provider: &'a (dyn Fn() -> Box<dyn SandboxProvider> + Sync),
    pub keep: bool,
    /// Who watches the run's events.
    pub observer: &'a dyn RunObserver,
    /// Writes the running tasks' instance documents behind them.
    pub flusher: &'a Flusher,
    /// How many of the run's tasks have ended, of how many: what a task's last line counts.
    pub ended: &'a Tally,
    /// The run's journal, told of each sandbox deployed and of each task end the document store
    /// did not take; or why the state folder holds none.
    pub journal: Result<std::sync::Arc<RunJournal>, String>,
    /// Which document store the instances go to.
    pub instances_in: InstancesIn,
    /// How long a task's end waits for the store (and the heartbeat the flusher writes).
    pub liveness: Liveness,
    /// The steps running, said again while they run long.
    pub long_steps: &'a LongSteps,
}

/// Counts the run's tasks as they end.
#[derive(Debug, Default)]
pub struct Tally {
    ended: std::sync::atomic::AtomicUsize,
    total: usize,
    /// What is counted: `tasks`, or `runs` for one task run several times.
    counted: &'static str,
}

impl Tally {
    /// A tally of `plan`'s tasks: its runs, when they are runs of one task (`task run ID --runs N`).
    pub fn of(plan: &super::plan::Plan) -> Tally {
        let runs_of_one = plan.tasks.iter().all(|task| task.run.is_some());
        Tally {
            ended: Default::default(),
            total: plan.tasks.len(),
            counted: if runs_of_one && !plan.tasks.is_empty() {
                "runs"
            } else {
                "tasks"
            },
        }
    }

    /// One more task ended; what its last line adds: ` (3 of 30 tasks ended)` (or `runs`), nothing for
    /// a lone task.
    pub(super) fn one_more(&self) -> String {
        let ended = self.ended.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        match self.total {
            0 | 1 => String::new(),
            total => format!(" ({ended} of {total} {} ended)", self.counted),
        }
    }
}
