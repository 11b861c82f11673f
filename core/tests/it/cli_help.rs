//! What clap itself prints (help, usage errors) follows agent-env's own choices: `--color`, the
//! terminal's width, help on stderr with exit 2 when a command is missing; and a negative number is
//! an option's value, not an argument.

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

/// The longest line of `text`, in characters.
fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn help_is_wrapped_to_the_width_there_is() {
    let mut s = Sandbox::new();
    // No stream is a terminal here: clap's 100 columns, as a log or a file gets it.
    let piped = stdout(&s.run(&["run", "-h"]));
    assert!(widest(&piped) <= 100, "{piped}");
    s.set("COLUMNS", "50");
    let narrow = stdout(&s.run(&["run", "-h"]));
    assert!(widest(&narrow) <= 50, "{narrow}");
    assert!(narrow.contains("--fail-under"), "{narrow}");
}

#[test]
fn a_missing_command_shows_the_help_on_stderr_with_exit_2() {
    let s = Sandbox::new();
    for args in [
        &[][..],
        &["plugin"],
        &["--color", "never", "task"],
        &["-v"],
        &["--color", "never"],
    ] {
        let out = s.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(stdout(&out).is_empty(), "{args:?}: {}", text(&out));
        assert!(
            stderr(&out).contains("Usage: agent-env"),
            "{args:?}: {}",
            text(&out)
        );
        assert!(
            stderr(&out).contains("Commands:"),
            "{args:?}: {}",
            text(&out)
        );
    }
}

#[test]
fn a_negative_count_is_refused_as_the_options_value() {
    let s = Sandbox::new();
    let count = "a whole number, 0 or more, is wanted, not '-1'";
    let runs = "a whole number from 1 to 10000 is wanted, not '-1'";
    for (args, option, wanted) in [
        (
            &["task", "run", "x", "--runs", "-1"][..],
            "--runs <N>",
            runs,
        ),
        (&["task", "list", "--limit", "-1"], "--limit <N>", count),
        (
            &["task", "instances", "x", "--limit", "-1"],
            "--limit <N>",
            count,
        ),
        (
            &["task", "prune", "--keep-last", "-1", "--dry-run"],
            "--keep-last <N>",
            count,
        ),
    ] {
        let out = s.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("invalid value '-1' for '{option}': {wanted}")),
            "{args:?}: {err}"
        );
        // Not the tip to write `-- -1`, which would make -1 the task's id.
        assert!(!err.contains("-- -1"), "{args:?}: {err}");
    }
}
