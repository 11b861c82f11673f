//! Printing a run's lines. A closed stdout (`agent-env run hello | head -1`) must not stop a run half
//! way, with its sandboxes up, so write errors are ignored here.

use std::io::Write;

/// Writes one line to stdout, ignoring a closed pipe.
pub fn line(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_fmt(args);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// `println!` that never panics on a closed stdout.
#[macro_export]
macro_rules! say {
    () => {
        $crate::run::out::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::run::out::line(format_args!($($arg)*))
    };
}
