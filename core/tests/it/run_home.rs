//! HOME as agent-env takes it: a HOME set to a relative path is ignored and said, as a relative XDG
//! variable is (every command that uses the home folder says it; a run before its first task).

use std::path::Path;

use crate::run_folders::users_entry;
use crate::support::run::{Ran, Sandboxed};

/// The one run log in the state folder `state`.
fn the_log(state: &Path) -> String {
    let logs: Vec<_> = std::fs::read_dir(state.join("logs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    std::fs::read_to_string(&logs[0]).unwrap()
}

/// Whether a `--json` run's document has `said` among its warnings, with no path.
fn warned_in(doc: &serde_json::Value, said: &str) -> bool {
    doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["message"].as_str().unwrap().starts_with(said) && w["path"].is_null())
}

/// HOME set to a relative path is ignored, as a relative XDG variable is: the warning names it, the
/// home folder used instead (the user database's) and what to do. A run says it once, before its
/// first task (on stderr, in its log, and in `--json`'s warnings); any other command that uses the
/// home folder says it too, and one that does not says nothing.
#[test]
fn a_relative_home_is_ignored_and_said() {
    // SAFETY: getuid only reads this process's real user id.
    let (_, home) = users_entry(unsafe { libc::getuid() }).expect("this user's entry");
    let said = format!(
        "HOME is 'relative/dir', a relative path, which agent-env ignores (a home folder is an absolute path): using {}, the home folder the user database gives this user",
        home.display()
    );
    let s = Sandboxed::new();
    let run = |args: &[&str]| {
        let mut cmd = s.command(args);
        Ran::from(cmd.env("HOME", "relative/dir").output().unwrap())
    };
    let ran = run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    assert_eq!(
        ran.stderr.matches(&format!("Warning: {said}")).count(),
        1,
        "{}",
        ran.stderr
    );
    assert!(ran.stderr.contains("; set HOME to "), "{}", ran.stderr);
    let log = the_log(&s.state());
    let said_at = log.find(&said).expect(&log);
    assert!(said_at < log.find("[tasks/").expect(&log), "{log}");
    // Nothing is made where the relative path leads, under the working folder.
    assert!(!s.home().join("relative").exists());

    let ran = run(&["run", "hello", "--json"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let doc: serde_json::Value = serde_json::from_str(&ran.stdout).unwrap();
    assert!(warned_in(&doc, &said), "{doc:#}");
    assert_eq!(ran.stderr.matches(&said).count(), 1, "{}", ran.stderr);

    let ran = run(&["task", "list"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    assert!(
        ran.stderr.contains(&format!("Warning: {said}")),
        "{}",
        ran.stderr
    );
    for quiet in [&["--version"][..], &["--help"], &["man"]] {
        let ran = run(quiet);
        assert!(!ran.stderr.contains("HOME is"), "{quiet:?}: {}", ran.stderr);
    }
}
