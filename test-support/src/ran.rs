//! The outcome of one run of a binary, kept as text for assertions.

use std::process::Output;

/// Exit code (-1 when a signal ended it), stdout and stderr of one run.
#[derive(Debug)]
pub struct Ran {
    /// The exit code, or -1 when a signal ended the process.
    pub code: i32,
    /// stdout, lossily decoded.
    pub stdout: String,
    /// stderr, lossily decoded.
    pub stderr: String,
}

impl From<Output> for Ran {
    fn from(out: Output) -> Ran {
        Ran {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Ran {
    /// The exit code, stdout and stderr, for assertion messages.
    pub fn both(&self) -> String {
        format!(
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }

    /// Asserts stdout contains `needle`, showing stdout and stderr when it doesn't.
    #[track_caller]
    pub fn assert_stdout_has(&self, needle: &str) {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}\n--- stdout\n{}--- stderr\n{}",
            self.stdout,
            self.stderr
        );
    }

    /// Asserts stderr contains `needle`, showing stdout and stderr when it doesn't.
    #[track_caller]
    pub fn assert_stderr_has(&self, needle: &str) {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}\n--- stdout\n{}--- stderr\n{}",
            self.stdout,
            self.stderr
        );
    }
}
