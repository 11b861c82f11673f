//! How runs end: the third run (stdin closed without `shutdown`), whether a plugin exits 0 when it
//! is told to, and what each run leaves: processes that outlive it, noise on stdout, its stderr.
//!
//! Invariant: every run over a conversation (all but the cookie check's) ends in
//! [`Kit::end_run`], which kills what is left of it and keeps its noise and stderr for the checks
//! made once all runs are over (`no-leftovers`, `stdout-clean`).

use std::time::{Duration, Instant};

use super::conversation::Conversation;
use super::wording::{quoting_stderr, tail_note};
use super::{Check, Finding, Kit, TAIL_LINES};
use crate::descendants::Descendant;
use crate::exit::Ended;

impl Kit<'_> {
    /// The third run: `initialize`, then stdin closes without `shutdown`.
    pub(super) fn stdin_eof(&mut self) {
        let check = Check::StdinEof;
        let mut run = match self.start() {
            Ok(run) => run,
            Err(why) => {
                self.findings.push(Finding::failed(check, why));
                return;
            }
        };
        if let Err(why) = self.initialize(&mut run) {
            self.findings.push(Finding::skipped(
                check,
                format!(
                    "initialize failed on a second start: {why}{}",
                    tail_note(&run.check_stderr(TAIL_LINES))
                ),
            ));
            self.end_run(&mut run, &[]);
            return;
        }
        run.begin_check();
        let descendants = run.descendants();
        run.close_stdin();
        let finding = self.exit_finding(&run, check, "stdin closed without shutdown", &descendants);
        let finding = quoting_stderr(&run, finding);
        self.findings.push(finding);
        self.end_run(&mut run, &descendants);
    }

    /// How the plugin ended within the grace period after `what`: exit 0 passes. (A failure's
    /// stderr is the caller's to quote, [`quoting_stderr`].)
    pub(super) fn exit_finding(
        &mut self,
        run: &Conversation,
        check: Check,
        what: &str,
        descendants: &[Descendant],
    ) -> Finding {
        let grace = self.config.grace;
        match run.wait_exit(grace) {
            Some(Ended::Exited(0)) => {
                self.note_exit(run, descendants);
                Finding::passed(check, format!("{what}, it exited 0"))
            }
            Some(other) => {
                self.note_exit(run, descendants);
                Finding::failed(
                    check,
                    format!("{what}, it {}; it must exit 0", other.describe()),
                )
            }
            None => Finding::failed(
                check,
                format!(
                    "{what}, it was still running {:.1} s later (killed); it must exit 0 within that grace period",
                    grace.as_secs_f64()
                ),
            ),
        }
    }

    /// A run ended on its own: note what it left behind.
    fn note_exit(&mut self, run: &Conversation, descendants: &[Descendant]) {
        self.exits_seen += 1;
        // The last processes of a group may take a moment to go after its leader.
        let deadline = Instant::now() + Duration::from_millis(200);
        let mut left = run.leftovers(descendants);
        while !left.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
            left = run.leftovers(descendants);
        }
        for l in left {
            if !self.leftovers.contains(&l) {
                self.leftovers.push(l);
            }
        }
    }

    /// Kills what is left of a run and keeps its noise and stderr.
    pub(super) fn end_run(&mut self, run: &mut Conversation, descendants: &[Descendant]) {
        run.kill(descendants);
        self.noise.add(run.noise());
        let tail = run.stderr_tail(20);
        if !tail.is_empty() {
            self.stderr_tail = tail;
        }
    }

    pub(super) fn finish_leftovers(&mut self) {
        let check = Check::NoLeftovers;
        let finding = if self.exits_seen == 0 {
            Finding::skipped(
                check,
                "no run got as far as asking the plugin to exit (the checks that end it did not run)",
            )
        } else if self.leftovers.is_empty() {
            Finding::passed(check, "nothing it started outlived it")
        } else {
            Finding::failed(
                check,
                format!(
                    "still running after the plugin exited: {} (killed); a plugin ends or waits for what it starts",
                    self.leftovers.join(", ")
                ),
            )
        };
        self.findings.push(finding);
    }

    pub(super) fn finish_stdout(&mut self) {
        let check = Check::StdoutClean;
        let finding = if self.noise.is_clean() {
            Finding::passed(check, "every line on stdout was a protocol message")
        } else {
            Finding::failed(check, self.noise.problems())
        };
        self.findings.push(finding);
    }
}
