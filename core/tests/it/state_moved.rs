//! A state folder moved to another path (a CI cache restored under another home, a backup restored,
//! a user renamed): the local object store's URLs name the old path, and its objects are found under
//! the new one, so nothing is stored again and stored tasks still load their artifacts. A copy beside
//! the old folder, still there, is another store.

use crate::support::run::{copy_dir, Sandboxed};

#[test]
fn a_moved_state_folder_keeps_its_objects() {
    let first = Sandboxed::new();
    let ran = first.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let folder = first.home().join("greeting");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("hello.txt"), "hello there\n").unwrap();
    std::fs::write(
        folder.join("check.sh"),
        "#!/usr/bin/env bash\ngrep -q hello \"$(dirname \"$0\")/hello.txt\"\n",
    )
    .unwrap();
    let put = first.run(&["artifact", "put", "greeting", "--id", "team/greeting"]);
    assert_eq!(put.code, 0, "{}", put.both());
    let task = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/hello/tasks/hello.json"),
    )
    .unwrap()
    .replace("\"greeting\"", "\"team/greeting\"");
    first.write("hello.json", &task);
    let put = first.run(&["task", "put", "hello.json", "--id", "team/hello"]);
    assert_eq!(put.code, 0, "{}", put.both());

    let moved = Sandboxed::new();
    copy_dir(first.dir.path(), moved.dir.path());
    let old_root = first.state();
    drop(first);
    assert!(!old_root.exists());

    let rerun = moved.run(&["run", "hello"]);
    assert_eq!(rerun.code, 0, "{}", rerun.both());
    assert!(
        rerun.stdout.contains("artifacts/greeting: v1, unchanged"),
        "{}",
        rerun.both()
    );
    let stored = moved.run(&["task", "run", "team/hello", "-q"]);
    assert_eq!(stored.code, 0, "{}", stored.both());
    assert!(stored.stdout.contains("passed"), "{}", stored.both());

    // A damaged object is named where it is now, beside the URL that recorded it.
    let objects = moved.state().join("object_store");
    let stored_hello = find_file(&objects.join("artifacts"), "hello.txt", "team/greeting");
    let mut writable = std::fs::metadata(&stored_hello).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut writable, 0o644);
    std::fs::set_permissions(&stored_hello, writable).unwrap();
    std::fs::write(&stored_hello, "changed\n").unwrap();
    let damaged = moved.run(&["task", "run", "team/hello", "-q"]);
    let now = format!("file://{}", stored_hello.display());
    assert!(
        damaged
            .stdout
            .contains(&format!("{now} (recorded as file://{}", old_root.display())),
        "{}",
        damaged.both()
    );
    // An object deleted since the move is missing from this store, not in another one.
    let bundle_hello = find_file(&objects.join("artifacts"), "hello.txt", "hello-greeting");
    std::fs::remove_file(&bundle_hello).unwrap();
    let rerun = moved.run(&["run", "hello"]);
    assert_eq!(rerun.code, 0, "{}", rerun.both());
    assert!(
        rerun
            .stdout
            .contains("its v1 files are missing from the object store: hello.txt"),
        "{}",
        rerun.both()
    );
}

/// A copy of the state folder at another path while the old one is still there (a cache restored
/// beside the home it was saved from) is another store, not the old one moved: a bundle run stores
/// its artifacts again, as a new version, and a stored task's artifact, whose URLs name the old
/// store, is not loaded from the copy until it is put again through it.
#[test]
fn a_copy_beside_the_old_state_folder_is_another_store() {
    let first = Sandboxed::new();
    let ran = first.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let folder = first.home().join("greeting");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("hello.txt"), "hello there\n").unwrap();
    std::fs::write(
        folder.join("check.sh"),
        "#!/usr/bin/env bash\ngrep -q hello \"$(dirname \"$0\")/hello.txt\"\n",
    )
    .unwrap();
    let put = first.run(&["artifact", "put", "greeting", "--id", "team/greeting"]);
    assert_eq!(put.code, 0, "{}", put.both());
    let task = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/hello/tasks/hello.json"),
    )
    .unwrap()
    .replace("\"greeting\"", "\"team/greeting\"");
    first.write("hello.json", &task);
    let put = first.run(&["task", "put", "hello.json", "--id", "team/hello"]);
    assert_eq!(put.code, 0, "{}", put.both());

    let copy = Sandboxed::new();
    copy_dir(first.dir.path(), copy.dir.path());
    assert!(first.state().exists());

    let rerun = copy.run(&["run", "hello"]);
    assert_eq!(rerun.code, 0, "{}", rerun.both());
    assert!(
        rerun.stdout.contains(
            "artifacts/greeting: v2 (its v1 files are in another object store than the one configured)"
        ),
        "{}",
        rerun.both()
    );
    let stored = copy.run(&["task", "run", "team/hello", "-q"]);
    assert_eq!(stored.code, 1, "{}", stored.both());
    assert!(
        stored.stdout.contains("but it is no URL of the configured object store (")
            && stored.stdout.contains(
                "point [stores.object] at that store, or put its files again with agent-env artifact put FOLDER --id team/greeting"
            ),
        "{}",
        stored.both()
    );
    // Put again through the copy's store, it loads.
    let put = copy.run(&["artifact", "put", "greeting", "--id", "team/greeting"]);
    assert_eq!(put.code, 0, "{}", put.both());
    let stored = copy.run(&["task", "run", "team/hello", "-q"]);
    assert_eq!(stored.code, 0, "{}", stored.both());
}

/// The one file named `name` under `dir` whose path holds `part`.
fn find_file(dir: &std::path::Path, name: &str, part: &str) -> std::path::PathBuf {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(folder) = todo.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.file_name() == Some(std::ffi::OsStr::new(name))
                && path.to_string_lossy().contains(part)
            {
                found.push(path);
            }
        }
    }
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

/// XDG_STATE_HOME set to a relative path is ignored, as the XDG spec says, and said: the run's state
/// goes under the home folder, and a warning names the variable, its value and the folder used.
#[test]
fn a_relative_xdg_state_home_is_ignored_and_said() {
    let s = Sandboxed::new();
    let out = s
        .command(&["run", "hello"])
        .env("XDG_STATE_HOME", "relstate")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let used = s.home().join(".local/state");
    assert!(
        stderr.contains(&format!(
            "XDG_STATE_HOME is 'relstate', a relative path, which the XDG spec says to ignore: using {}; set it to an absolute path",
            used.display()
        )),
        "{stderr}"
    );
    assert!(used.join("agent-env/document_store/local.db").exists());
    assert!(!s.home().join("relstate").exists());
    // Said once, and before the run's first task (as the run's log, in the run's order, shows), so a
    // person learns where its state goes while it runs.
    assert_eq!(stderr.matches("XDG_STATE_HOME is").count(), 1, "{stderr}");
    let logs: Vec<_> = std::fs::read_dir(used.join("agent-env/logs"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(logs.len(), 1);
    let log = std::fs::read_to_string(logs[0].path()).unwrap();
    let said_at = log.find("XDG_STATE_HOME is 'relstate'").expect(&log);
    let first_task = log.find("[tasks/").expect(&log);
    assert!(said_at < first_task, "{log}");
    // A script reading `--json` finds it in the document's warnings, and once on stderr.
    let out = s
        .command(&["run", "hello", "--json"])
        .env("XDG_STATE_HOME", "relstate")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let said = "XDG_STATE_HOME is 'relstate', a relative path";
    assert!(
        doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["message"].as_str().unwrap().starts_with(said) && w["path"].is_null()),
        "{doc:#}"
    );
    assert_eq!(stderr.matches(said).count(), 1, "{stderr}");
    // A command that never uses the state folder says nothing of it.
    for quiet in [&["--version"][..], &["man"], &["--help"]] {
        let out = s
            .command(quiet)
            .env("XDG_STATE_HOME", "relstate")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("XDG_STATE_HOME"), "{quiet:?}: {stderr}");
    }
}

/// A uid the user database has no entry for (a container run as `--user 54321`), with HOME unset
/// and its folders given by XDG_* and AGENT_ENV_*: agent-env finds no home and runs. (A static
/// agent-env that asked glibc for the entry crashed there, in the lookup module systemd adds.)
#[test]
fn a_user_the_user_database_does_not_list_runs_with_its_folders_given() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    const UNLISTED: u32 = 54_321;
    let s = Sandboxed::new();
    // SAFETY: geteuid only reads this process's effective user id.
    let as_root = unsafe { libc::geteuid() } == 0;
    let base = s.dir.path();
    let mut cmd = s.command(&["run", "hello", "--json"]);
    cmd.env_remove("HOME");
    if as_root {
        // Run from a copy inside the temp folder (the build's own folder may be closed to others),
        // with the folders it writes made its own.
        let binary = base.join("agent-env");
        std::fs::copy(crate::support::AGENT_ENV, &binary).unwrap();
        std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o755)).unwrap();
        for folder in ["home", "state", "data", "config", "plugins", "sandboxes"] {
            let folder = base.join(folder);
            std::fs::create_dir_all(&folder).unwrap();
            std::os::unix::fs::chown(&folder, Some(UNLISTED), Some(UNLISTED)).unwrap();
        }
        let args: Vec<_> = cmd.get_args().map(|a| a.to_os_string()).collect();
        let envs: Vec<_> = cmd
            .get_envs()
            .map(|(k, v)| (k.to_os_string(), v.map(|v| v.to_os_string())))
            .collect();
        let mut as_unlisted = std::process::Command::new(&binary);
        as_unlisted.env_clear().args(args).current_dir(s.home());
        for (key, value) in envs {
            if let Some(value) = value {
                as_unlisted.env(key, value);
            }
        }
        as_unlisted.env("PATH", "/usr/bin:/bin");
        as_unlisted.uid(UNLISTED).gid(UNLISTED);
        cmd = as_unlisted;
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{:?}: {stderr}", out.status);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["status"], "passed", "{doc:#}");
    assert!(s.state().join("document_store/local.db").exists());
}
