//! A command that could not do its job. Commands return it; [`super::main`] alone shows it, as
//! `Error: <message>` on stderr, and exits with its code.

use std::fmt;

/// What a command returns: its exit code, or why it failed.
pub type Exit = Result<i32, Failure>;

/// A failed command: the sentence the user sees (without the `Error: ` prefix) and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    message: String,
    code: i32,
}

impl Failure {
    /// A failure with exit code 1.
    pub fn new(message: impl fmt::Display) -> Failure {
        Failure {
            message: message.to_string(),
            code: 1,
        }
    }

    /// The same failure with another exit code (a plugin command's own, or `128 + signal`).
    pub fn with_code(mut self, code: i32) -> Failure {
        self.code = code;
        self
    }

    /// The same failure told as a wrong command line (exit 2, a bad or missing value) when `wrong`.
    pub fn usage_if(self, wrong: bool) -> Failure {
        if wrong {
            self.with_code(2)
        } else {
            self
        }
    }

    /// The exit code.
    pub fn code(&self) -> i32 {
        self.code
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}
