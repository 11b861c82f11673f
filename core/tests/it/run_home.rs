//! HOME as agent-env takes it: a HOME set to a relative path is ignored and said, as a relative XDG
//! variable is (every command that uses the home folder says it; a run before its first task), and
//! what a run says of its state folder before it starts, `task run` says too.

use std::path::Path;

use crate::run_folders::{nobody_without_a_home_folder, set_mode, users_entry, NOBODY};
use crate::support::run::{Ran, Sandboxed};

/// A stored task with a sandbox and a check that passes.
const TASK: &str = r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
    {"id": "ok", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
     "criteria": [{"type": "bash_cmd_succeeds", "command": "true"}]}]"#;

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

/// `task run team/t` (through `run`, which sets the variable under test) says `said` once, as a
/// warning on stderr before the task's first step in its log (under `state`), and once in
/// `--json`'s warnings.
fn said_once_before_the_task(run: impl Fn(&[&str]) -> Ran, state: &Path, said: &str) {
    let ran = run(&["task", "run", "team/t", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    assert_eq!(
        ran.stderr.matches(&format!("Warning: {said}")).count(),
        1,
        "{}",
        ran.stderr
    );
    let log = the_log(state);
    let said_at = log.find(said).expect(&log);
    assert!(said_at < log.find("[team/t]").expect(&log), "{log}");

    let ran = run(&["task", "run", "team/t", "--json"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let doc: serde_json::Value = serde_json::from_str(&ran.stdout).unwrap();
    assert!(warned_in(&doc, said), "{doc:#}");
    assert_eq!(ran.stderr.matches(said).count(), 1, "{}", ran.stderr);
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

/// `task run` says what `run` says of its state folder before it starts: an XDG_STATE_HOME it
/// ignores, before the task's first step (on stderr, in its log) and in `--json`'s warnings, once.
#[test]
fn a_stored_task_run_says_a_relative_xdg_state_home_before_it_starts() {
    let s = Sandboxed::new();
    s.write("t.json", TASK);
    let run = |args: &[&str]| {
        let mut cmd = s.command(args);
        Ran::from(cmd.env("XDG_STATE_HOME", "relstate").output().unwrap())
    };
    let put = run(&["task", "put", "t.json", "--id", "team/t"]);
    assert_eq!(put.code, 0, "{}", put.both());
    let state = s.home().join(".local/state/agent-env");
    let said = format!(
        "XDG_STATE_HOME is 'relstate', a relative path, which the XDG spec says to ignore: using {}; set it to an absolute path",
        s.home().join(".local/state").display()
    );
    said_once_before_the_task(run, &state, &said);
}

/// `task run` with HOME unset, whose user's home folder in the user database is not there (a
/// container's nobody, at /nonexistent), warns as `run` does that HOME is not set and where its
/// state goes; with HOME a relative path, the one warning says that, and that the home folder is
/// not there. Root's alone (the command is run as nobody), and only where nobody can make nothing
/// on the way to that home.
#[test]
fn a_stored_task_run_with_home_unset_and_no_home_folder_says_to_set_home() {
    use std::os::unix::process::CommandExt;
    let Some((nobody, home)) = nobody_without_a_home_folder() else {
        return;
    };
    let s = Sandboxed::new();
    for open in [s.dir.path(), &s.home()] {
        set_mode(open, 0o755);
    }
    let as_nobody = |home_var: Option<&str>| {
        let mut cmd = s.command(&["task", "run", "team/t", "-q"]);
        cmd.env_remove("HOME")
            .env_remove("XDG_STATE_HOME")
            .uid(NOBODY)
            .gid(NOBODY);
        if let Some(value) = home_var {
            cmd.env("HOME", value);
        }
        Ran::from(cmd.output().expect("run agent-env"))
    };
    let state = home.join(".local/state/agent-env");
    let ran = as_nobody(None);
    // The state folder, and the store in it, cannot be made: the task is not found.
    assert_ne!(ran.code, 0, "{}", ran.both());
    assert!(
        ran.stderr.contains(&format!(
            "Warning: HOME is not set, so agent-env keeps its state in {}, under {}, the home folder the user database gives this user ({nobody}), which is not there: set HOME to a folder of this user's, or point XDG_STATE_HOME at one",
            state.display(),
            home.display()
        )),
        "{}",
        ran.stderr
    );
    let ran = as_nobody(Some("relative/dir"));
    assert_ne!(ran.code, 0, "{}", ran.both());
    assert!(
        ran.stderr.contains(&format!(
            "Warning: HOME is 'relative/dir', a relative path, which agent-env ignores (a home folder is an absolute path): using {}, the home folder the user database gives this user, which is not there; set HOME to the absolute path of a folder of this user's",
            home.display()
        )),
        "{}",
        ran.stderr
    );
    assert_eq!(ran.stderr.matches("HOME is").count(), 1, "{}", ran.stderr);
}

/// `task run` says a HOME it ignores as `run` does: before the task's first step (on stderr, in its
/// log) and in `--json`'s warnings, once; not only after the run has ended.
#[test]
fn a_stored_task_run_says_a_relative_home_before_it_starts() {
    // SAFETY: getuid only reads this process's real user id.
    let (_, home) = users_entry(unsafe { libc::getuid() }).expect("this user's entry");
    let said = format!(
        "HOME is 'relative/dir', a relative path, which agent-env ignores (a home folder is an absolute path): using {}, the home folder the user database gives this user",
        home.display()
    );
    let s = Sandboxed::new();
    s.write("t.json", TASK);
    let run = |args: &[&str]| {
        let mut cmd = s.command(args);
        Ran::from(cmd.env("HOME", "relative/dir").output().unwrap())
    };
    let put = run(&["task", "put", "t.json", "--id", "team/t"]);
    assert_eq!(put.code, 0, "{}", put.both());
    said_once_before_the_task(run, &s.state(), &said);
}

/// A command that opens a built-in local store at its default folder, under the state folder, says
/// an XDG_STATE_HOME it ignores as every command that uses the state folder does: `store check` and
/// the commands that read and write the stores (`artifact put | get`, `task put | get`).
#[test]
fn a_command_that_opens_a_local_store_says_a_relative_xdg_state_home() {
    let s = Sandboxed::new();
    s.write("t.json", TASK);
    std::fs::create_dir_all(s.home().join("art")).unwrap();
    s.write("art/a.txt", "hello");
    let said = format!(
        "Warning: XDG_STATE_HOME is 'relstate', a relative path, which the XDG spec says to ignore: using {}; set it to an absolute path",
        s.home().join(".local/state").display()
    );
    let run = |args: &[&str]| {
        let mut cmd = s.command(args);
        Ran::from(cmd.env("XDG_STATE_HOME", "relstate").output().unwrap())
    };
    for args in [
        &["store", "check", "document"][..],
        &["store", "check", "object"],
        &["task", "put", "t.json", "--id", "team/t"],
        &["task", "get", "team/t"],
        &["artifact", "put", "art", "--id", "team/a"],
        &["artifact", "get", "team/a"],
    ] {
        let ran = run(args);
        assert_eq!(ran.code, 0, "{args:?}: {}", ran.both());
        assert_eq!(
            ran.stderr.matches(&said).count(),
            1,
            "{args:?}: {}",
            ran.stderr
        );
    }
    // Nothing is made where the relative path leads, under the working folder.
    assert!(!s.home().join("relstate").exists());
}

/// AGENT_ENV_LOCAL_SANDBOX_DIR and AGENT_ENV_PLUGIN_DIR set to a relative path are ignored, as a
/// relative XDG variable is, and one of only whitespace is taken as unset: each is said with the
/// folder used instead, and nothing is made where the value would lead from the working folder.
#[test]
fn a_relative_or_blank_folder_variable_is_ignored_and_said() {
    let s = Sandboxed::new();
    let sandboxes = s.home().join(".agent-env-sandboxes");
    for (value, why) in [
        ("rel/boxes", "a relative path, which agent-env ignores"),
        (" ", "only whitespace, which agent-env takes as unset"),
    ] {
        let mut cmd = s.command(&["run", "hello", "-q"]);
        let ran = Ran::from(
            cmd.env("AGENT_ENV_LOCAL_SANDBOX_DIR", value)
                .output()
                .unwrap(),
        );
        assert_eq!(ran.code, 0, "{}", ran.both());
        let said = format!("Warning: AGENT_ENV_LOCAL_SANDBOX_DIR is '{value}', {why}");
        assert_eq!(ran.stderr.matches(&said).count(), 1, "{}", ran.stderr);
        assert!(
            ran.stderr.contains(&format!(
                "using {}; set it to an absolute path",
                sandboxes.display()
            )),
            "{}",
            ran.stderr
        );
        assert!(!s.home().join(value).exists(), "{value:?} was made");
    }
    let plugins = s.dir.path().join("data/agent-env/plugins");
    for (value, why) in [
        ("rel/plugins", "a relative path, which agent-env ignores"),
        ("  ", "only whitespace, which agent-env takes as unset"),
    ] {
        let mut cmd = s.command(&["plugin", "list"]);
        let ran = Ran::from(cmd.env("AGENT_ENV_PLUGIN_DIR", value).output().unwrap());
        assert_eq!(ran.code, 0, "{}", ran.both());
        let said = format!("Warning: AGENT_ENV_PLUGIN_DIR is '{value}', {why}");
        assert_eq!(ran.stderr.matches(&said).count(), 1, "{}", ran.stderr);
        assert!(
            ran.stderr
                .contains(&format!("using {};", plugins.display())),
            "{}",
            ran.stderr
        );
    }
}
