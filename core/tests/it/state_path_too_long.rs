//! A state folder so deep that the local document store's path is longer than SQLite opens a database
//! at (a long HOME): said as a path too long, with the length and SQLite's limit, not as a permission
//! problem; and `task list` says the store cannot be opened rather than that nothing is recorded.

use std::path::PathBuf;

use crate::support::run::Sandboxed;

/// A state folder whose `agent-env/document_store/local.db` is well past SQLite's 512 bytes.
fn long_state(s: &Sandboxed) -> PathBuf {
    let mut state = s.dir.path().join("state");
    for _ in 0..5 {
        state = state.join("e".repeat(99));
    }
    std::fs::create_dir_all(&state).unwrap();
    state
}

#[test]
fn a_store_path_too_long_for_sqlite_is_said_so_by_a_run_and_by_task_list() {
    let s = Sandboxed::new();
    let state = long_state(&s);
    let db = state.join("agent-env/document_store/local.db");
    let too_long = format!(
        "{} can't be opened: its path is {} bytes long, and SQLite opens a database at a path of at most 504 bytes; point XDG_STATE_HOME",
        db.display(),
        db.as_os_str().len()
    );
    let run = |args: &[&str]| {
        let out = s
            .command(args)
            .env("XDG_STATE_HOME", &state)
            .output()
            .expect("run agent-env");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stdout, stderr) = run(&["run", "hello"]);
    assert_ne!(code, Some(0), "{stdout}{stderr}");
    assert!(stderr.contains(&too_long), "{stdout}{stderr}");
    assert!(!stderr.contains("read and write"), "{stderr}");

    let (code, stdout, stderr) = run(&["task", "list"]);
    assert_ne!(code, Some(0), "{stdout}{stderr}");
    assert!(stderr.contains(&too_long), "{stdout}{stderr}");
    assert!(
        !stdout.contains("No task instances recorded yet"),
        "{stdout}"
    );
}
