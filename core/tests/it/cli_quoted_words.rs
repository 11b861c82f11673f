//! Words a message shows for pasting (a folder, an id, a filter) that hold control characters are
//! quoted in bash's `$'…'`, so pasted back they give the same bytes, and a line stays one line.

use std::process::Command;

use crate::support::run::Sandboxed;

/// What bash makes of `word` pasted as one argument: its bytes.
fn pasted(word: &str) -> Vec<u8> {
    let out = Command::new("bash")
        .args(["-c", &format!("printf %s {word}")])
        .env_clear()
        .env("LC_ALL", "C.UTF-8")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    out.stdout
}

#[test]
fn bundle_init_suggests_a_run_that_pastes_back_to_the_folder_it_wrote() {
    let s = Sandboxed::new();
    let r = s.run(&["bundle", "init", "e\u{1b}[1msc", "--from-bundle", "hello"]);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stdout_has(r"Change it and run it with agent-env run $'./e\e[1msc'.");
    let word = r
        .stdout
        .split("agent-env run ")
        .nth(1)
        .unwrap()
        .trim_end()
        .trim_end_matches('.');
    assert_eq!(pasted(word), b"./e\x1b[1msc");
    assert!(s.home().join("e\u{1b}[1msc").is_dir());
}

#[test]
fn a_filter_with_a_new_line_or_a_tab_is_shown_on_one_line() {
    let s = Sandboxed::new();
    let ran = s.run(&["run", "hello"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let r = s.run(&["task", "list", "--bundle", "a\tb\nc'd"]);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stdout_has(
        r"None of the 1 recorded task instances matches --bundle $'a\tb\nc\'d'; agent-env task list shows them all.",
    );
    assert_eq!(pasted(r"$'a\tb\nc\'d'"), b"a\tb\nc'd");
}
