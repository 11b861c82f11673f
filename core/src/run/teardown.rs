//! What became of a run's sandboxes once its tasks ended: those `--keep` holds up until Ctrl-C, torn
//! down then, and the lines saying how many were torn down and which are still up.

use super::cancel::Cancel;
use super::events::{KeptSandbox, RunEvent, RunObserver};
use super::task_run::TaskRunResult;
use crate::output::Output;
use crate::words::plural;

/// Holds the sandboxes `--keep` kept up until the run is cancelled, then tears them down; says on
/// `out` what was torn down (by the tasks and here) and what is still up.
pub(super) fn hold_kept_then_report(
    results: &[TaskRunResult],
    cancel: &Cancel,
    observer: &dyn RunObserver,
    out: &dyn Output,
) {
    let mut torn: usize = results.iter().map(|r| r.torn_down).sum();
    let mut replaced: usize = results.iter().map(|r| r.replaced).sum();
    let mut still_up: Vec<(crate::sandbox::Sandbox, String)> =
        results.iter().flat_map(|r| r.still_up.clone()).collect();
    let kept: Vec<(&str, &crate::sandbox::Deployed)> = results
        .iter()
        .filter_map(|r| r.kept.as_ref().map(|d| (r.path.as_str(), d)))
        .collect();
    let kept_count: usize = kept.iter().map(|(_, d)| d.all().len()).sum();
    if kept_count > 0 {
        out.line("");
        out.line("Kept up:");
        for (task, d) in &kept {
            // The sandbox's name (its `sandbox_name`) tells apart the folders of a task that
            // deploys several.
            for s in d.all() {
                out.line(&format!(
                    "  {}  {} sandbox '{}'  {}  [{task}]",
                    s.id,
                    d.provider().name(),
                    s.name,
                    d.provider().describe(&s)
                ));
            }
        }
        out.line(&format!(
            "Holding {kept_count} {} up; Ctrl-C tears {} down.",
            plural(kept_count, "sandbox", "sandboxes"),
            if kept_count == 1 { "it" } else { "them" }
        ));
        observer.event(&RunEvent::SandboxesKept {
            sandboxes: kept_sandboxes(results),
        });
        while !cancel.is_cancelled() {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        for (_, d) in &kept {
            let report = d.teardown_all();
            torn += report.torn_down.len();
            replaced += report.replaced;
            still_up.extend(report.still_up);
        }
    }
    if torn > 0 {
        out.line("");
        // Those a retry replaced were torn down while their task ran: said, so that the count
        // agrees with what "Holding" said was up.
        let by_retries = match replaced {
            0 => String::new(),
            n => format!(", {n} of them replaced by retries"),
        };
        out.line(&format!(
            "Tore down {torn} {}{by_retries}.",
            plural(torn, "sandbox", "sandboxes")
        ));
    }
    if !still_up.is_empty() {
        out.line("");
        out.line(&format!(
            "Still up, {} {}:",
            still_up.len(),
            plural(still_up.len(), "sandbox", "sandboxes")
        ));
        for (s, why) in &still_up {
            out.line(&format!("  {}  {}: {why}", s.id, s.work_dir.display()));
        }
    }
}

/// The sandboxes `--keep` holds up, as the run's events name them.
fn kept_sandboxes(results: &[TaskRunResult]) -> Vec<KeptSandbox> {
    results
        .iter()
        .filter_map(|r| r.kept.as_ref().map(|d| (r, d)))
        .flat_map(|(r, d)| {
            d.all().into_iter().map(|s| KeptSandbox {
                task_path: r.path.clone(),
                sandbox_id: s.id.clone(),
                name: s.name.clone(),
                provider: s.provider.clone(),
                work_dir: s.work_dir.display().to_string(),
            })
        })
        .collect()
}
