//! Bundle folders whose names are not plain UTF-8 in NFC: one whose path is not UTF-8, or whose NFD
//! name has an NFC twin on disk, is refused (its id would be another folder's too), and the ordinary
//! ones keep their ids.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::support::run::{copy_dir, has_suffix_id, Ran, Sandboxed};

/// Copies the `hello` bundle to `<home>/<name>`, a name of any bytes.
fn copy_hello_as(s: &Sandboxed, name: &[u8]) -> std::path::PathBuf {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/hello");
    let dest = s.home().join(OsStr::from_bytes(name));
    copy_dir(&src, &dest);
    dest
}

/// `agent-env <args> <last>`, `last` being any bytes.
fn run_with(s: &Sandboxed, args: &[&str], last: &[u8]) -> Ran {
    let mut cmd = s.command(args);
    cmd.arg(OsStr::from_bytes(last));
    Ran::from(cmd.output().unwrap())
}

#[test]
fn folders_differing_only_in_bytes_that_are_not_utf8_are_refused_not_merged() {
    let s = Sandboxed::new();
    copy_hello_as(&s, b"bad\xffbundle");
    copy_hello_as(&s, b"bad\xfebundle");
    for (name, shown) in [
        (&b"./bad\xffbundle"[..], r"$'bad\xffbundle'"),
        (&b"./bad\xfebundle"[..], r"$'bad\xfebundle'"),
    ] {
        let r = run_with(&s, &["run"], name);
        assert_eq!(r.code, 1, "{}", r.both());
        r.assert_stderr_has(&format!(
            "{}': the folder name {shown} is not valid UTF-8",
            &shown[2..shown.len() - 1]
        ));
        r.assert_stderr_has("rename the folder to a name in UTF-8 and run it again");
        assert!(!r.stderr.contains('\u{fffd}'), "{}", r.stderr);
    }
    // Run from inside it (`run .`, a word in UTF-8), it is refused all the same.
    let mut inside = s.command(&["run", "."]);
    inside.current_dir(s.home().join(OsStr::from_bytes(b"bad\xffbundle")));
    let r = Ran::from(inside.output().unwrap());
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stderr_has(r"the folder name $'bad\xffbundle' is not valid UTF-8");
    // Nothing of either was recorded, so no run's history or artifact versions mixed.
    assert!(!s.local_db().exists() || s.docs("task_instances").is_empty());
}

#[test]
fn an_nfd_folder_whose_nfc_twin_is_another_folder_is_refused_naming_both() {
    let s = Sandboxed::new();
    let nfc = "caf\u{e9}";
    let nfd = "cafe\u{301}";
    copy_hello_as(&s, nfc.as_bytes());
    copy_hello_as(&s, nfd.as_bytes());
    // The NFC folder keeps its id.
    let r = s.run(&["run", &format!("./{nfc}")]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        has_suffix_id(&r.stdout, &format!("instance '@local/~/{nfc}/hello-")).is_some(),
        "{}",
        r.stdout
    );
    let r = s.run(&["run", &format!("./{nfd}")]);
    assert_eq!(r.code, 1, "{}", r.both());
    let home = std::fs::canonicalize(s.home()).unwrap();
    let home = home.to_str().unwrap();
    r.assert_stderr_has(&format!(
        "'{home}/{nfd}' and '{home}/{nfc}' are two folders whose names differ only in how their accented letters are encoded"
    ));
    r.assert_stderr_has(&format!(
        "so both would get the bundle id '@local/~/{nfc}'; rename one of them"
    ));
    // `task prune --bundle` of the NFD folder refuses it too, and deletes none of the NFC folder's.
    let pruned = s.run(&[
        "task",
        "prune",
        "--keep-last",
        "0",
        "--bundle",
        &format!("./{nfd}"),
    ]);
    assert_eq!(pruned.code, 1, "{}", pruned.both());
    pruned.assert_stderr_has(
        "are two folders whose names differ only in how their accented letters are encoded",
    );
    // Only the NFC folder's run was recorded.
    assert_eq!(s.docs("task_instances").len(), 1);
}

#[test]
fn an_nfd_folder_with_no_nfc_twin_runs_under_its_nfc_id() {
    let s = Sandboxed::new();
    copy_hello_as(&s, "cafe\u{301}".as_bytes());
    let r = s.run(&["run", "./cafe\u{301}"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        has_suffix_id(&r.stdout, "instance '@local/~/caf\u{e9}/hello-").is_some(),
        "{}",
        r.stdout
    );
}

#[test]
fn run_of_a_word_that_is_not_utf8_says_why_rather_than_a_usage_error() {
    let s = Sandboxed::new();
    copy_hello_as(&s, b"init\xffbad");
    let r = run_with(&s, &["run"], b"./init\xffbad");
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stderr_has(r"the folder name $'init\xffbad' is not valid UTF-8");
    assert!(
        !r.stderr.contains("invalid UTF-8 was detected"),
        "{}",
        r.stderr
    );
    let r = run_with(&s, &["run"], b"./missing\xff");
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stderr_has(r"$'./missing\xff': no such folder");
}

#[test]
fn bundle_init_refuses_a_folder_name_that_is_not_utf8_before_writing() {
    let s = Sandboxed::new();
    let r = run_with(
        &s,
        &["bundle", "init", "--from-bundle", "hello"],
        b"init\xffbad",
    );
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stderr_has(r"the folder name $'init\xffbad' is not valid UTF-8");
    r.assert_stderr_has("give the folder a name in UTF-8");
    assert!(!r.stderr.contains('\u{fffd}'), "{}", r.stderr);
    assert!(!s.home().join(OsStr::from_bytes(b"init\xffbad")).exists());
    let left: Vec<_> = std::fs::read_dir(s.home()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}
