//! What clap itself prints (help, usage errors) follows agent-env's own choices: `--color`.

use crate::support::cli::{stderr, stdout, text, Sandbox};

#[test]
fn help_and_usage_errors_follow_color() {
    let s = Sandbox::new();
    // Piped, so colour comes only from --color always.
    let help = s.run(&["--color", "always", "run", "-h"]);
    assert_eq!(help.status.code(), Some(0), "{}", text(&help));
    assert!(stdout(&help).contains('\x1b'), "{}", stdout(&help));
    let error = s.run(&["--color=always", "run", "--bogus"]);
    assert_eq!(error.status.code(), Some(2), "{}", text(&error));
    assert!(stderr(&error).contains('\x1b'), "{}", stderr(&error));

    for args in [
        &["--color", "never", "run", "-h"][..],
        &["run", "-h"],
        &["--color", "never", "run", "--bogus"],
    ] {
        let out = s.run(args);
        assert!(!text(&out).contains('\x1b'), "{args:?}: {}", text(&out));
    }
}
