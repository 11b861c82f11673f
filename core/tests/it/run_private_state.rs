//! What a run makes under the state root and the local sandbox root is the user's alone whatever the
//! umask: folders 0700, files 0600 (a `.gitignore` 0644), so no other user may plant or remove a lock,
//! a journal or a stored object; a folder the user made is left as it is.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;

use crate::support::run::{Ran, Sandboxed};

/// `agent-env run hello` under umask 000.
fn run_hello_under_umask_000(s: &Sandboxed) -> Ran {
    let mut cmd = s.command(&["run", "hello"]);
    // SAFETY: umask is async-signal-safe and touches only the child's own file-mode mask.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0);
            Ok(())
        });
    }
    Ran::from(cmd.output().expect("run agent-env"))
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

/// Every entry at and below `root` whose mode is not the private one, as `<mode> <path>` lines.
fn not_private(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(path) = pending.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let expected = if meta.is_dir() {
            pending.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            0o700
        } else if path.file_name().is_some_and(|n| n == ".gitignore") {
            0o644
        } else {
            0o600
        };
        if mode(&path) != expected {
            found.push(format!("{:o} {}", mode(&path), path.display()));
        }
    }
    found
}

#[test]
fn a_run_under_umask_000_makes_its_state_and_sandbox_folders_the_users_alone() {
    let s = Sandboxed::new();
    let r = run_hello_under_umask_000(&s);
    assert_eq!(r.code, 0, "{}", r.both());
    // The XDG base folder itself is made: the spec asks 0700 of a missing one.
    let state_home = s.state().parent().unwrap().to_path_buf();
    for root in [state_home, s.sandboxes()] {
        assert!(root.is_dir(), "{} was not made", root.display());
        let found = not_private(&root);
        assert!(
            found.is_empty(),
            "open to other users:\n{}",
            found.join("\n")
        );
    }
    // What the QA pass found world-writable is there to be checked.
    for made in [
        "locks/runs",
        "logs",
        "object_store/.agentenv-tmp",
        "object_store/artifacts",
    ] {
        assert!(s.state().join(made).is_dir(), "{made}");
    }
}

#[test]
fn a_sandbox_root_the_user_made_keeps_its_mode() {
    let s = Sandboxed::new();
    std::fs::create_dir(s.sandboxes()).unwrap();
    std::fs::set_permissions(s.sandboxes(), std::fs::Permissions::from_mode(0o750)).unwrap();
    let r = run_hello_under_umask_000(&s);
    assert_eq!(r.code, 0, "{}", r.both());
    assert_eq!(mode(&s.sandboxes()), 0o750);
}
