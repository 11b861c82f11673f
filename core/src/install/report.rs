//! How a `plugin add | remove` ended ([`ChangeOutcome`]) and the problems it found on the way
//! ([`ChangeReport`]): what the CLI turns into its exit code, its error and its `--json` document.
//!
//! The problems are said to the [`Output`] as they are found (`problem: …`, `blocked: …`) and kept
//! here as the same sentences, so nothing downstream has to read them back out of printed text.

use super::InstallError;
use crate::output::Output;

/// How a change ended.
#[derive(Debug)]
pub enum ChangeOutcome {
    /// `--dry-run`: the plan was shown and nothing changed.
    DryRun,
    /// The installers ran, and every installed file is as it was.
    Unchanged,
    /// Every package was installed and passed its check.
    Added,
    /// Every package was removed.
    Removed,
    /// Asked `Proceed?`, the user said no; nothing changed.
    Declined,
    /// `add --keep`: a problem was found, and the change was left installed.
    Kept,
    /// A problem was found, and the plugins directory was put back as it was.
    RolledBack,
    /// A signal stopped the change, and the plugins directory was put back as it was. It holds the
    /// number of the first signal that came.
    Interrupted(i32),
    /// An error stopped the change: before anything changed, or while the plugins directory was put
    /// back. [`InstallError::Blocked`] is a removal refused because something still uses a package.
    Failed(InstallError),
}

/// A change's outcome and the problems it found, in the order they were said.
#[derive(Debug)]
pub struct ChangeReport {
    /// How it ended.
    pub outcome: ChangeOutcome,
    /// What went wrong, one sentence each: a failed installer or check, or what blocks a removal.
    pub problems: Vec<String>,
}

/// The problems of a change being made: each is said on the output when it is reported and kept
/// for the [`ChangeReport`].
pub(super) struct Problems<'a> {
    out: &'a dyn Output,
    found: Vec<String>,
}

impl<'a> Problems<'a> {
    pub(super) fn new(out: &'a dyn Output) -> Problems<'a> {
        Problems {
            out,
            found: Vec::new(),
        }
    }

    /// Says `problem: …` and keeps it.
    pub(super) fn problem(&mut self, problem: &str) {
        self.out.note(&format!("problem: {problem}"));
        self.found.push(problem.to_owned());
    }

    /// Says `blocked: …` (what stops a removal) and keeps it.
    pub(super) fn blocked(&mut self, blocker: &str) {
        self.out.note(&format!("blocked: {blocker}"));
        self.found.push(blocker.to_owned());
    }

    /// The report of a change that ended in `result`; an error is a [`ChangeOutcome::Failed`].
    pub(super) fn report(self, result: Result<ChangeOutcome, InstallError>) -> ChangeReport {
        ChangeReport {
            outcome: result.unwrap_or_else(ChangeOutcome::Failed),
            problems: self.found,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{Collected, Stream};

    #[test]
    fn problems_are_said_and_kept_in_order() {
        let out = Collected::default();
        let mut problems = Problems::new(&out);
        problems.blocked("the config names x");
        problems.problem("the check failed");
        let report = problems.report(Ok(ChangeOutcome::RolledBack));
        assert_eq!(report.problems, ["the config names x", "the check failed"]);
        assert_eq!(
            out.lines(Stream::Note),
            ["blocked: the config names x", "problem: the check failed"]
        );
        assert!(matches!(report.outcome, ChangeOutcome::RolledBack));
    }

    #[test]
    fn an_error_is_a_failed_change_that_keeps_its_problems() {
        let out = Collected::default();
        let mut problems = Problems::new(&out);
        problems.problem("the installer failed");
        let report = problems.report(Err(InstallError::Restore("x differs".into())));
        assert!(matches!(
            report.outcome,
            ChangeOutcome::Failed(InstallError::Restore(_))
        ));
        assert_eq!(report.problems, ["the installer failed"]);
    }
}
