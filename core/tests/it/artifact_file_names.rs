//! The names of an artifact's files that can't be read (not UTF-8, or holding a control character)
//! are said all at once, each quoted as a shell reads it back.

use crate::support::run::Sandboxed;

/// A folder of artifact files with several names that can't be read says all of them in one message,
/// each quoted as a shell reads it back, where it said one per try.
#[test]
fn artifact_put_names_every_file_name_it_refuses_at_once() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let s = Sandboxed::new();
    s.write("art/ok.txt", "hello\n");
    let art = s.home().join("art");
    for name in [&b"bad\xffname"[..], b"new\nline", b"esc\x1b[2J", b"t\tab"] {
        std::fs::write(art.join(OsStr::from_bytes(name)), "x").unwrap();
    }
    let r = s.run(&["artifact", "put", "art", "--id", "team/art"]);
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stderr_has(
        r"4 names of its files can't be read: $'bad\xffname' (not UTF-8 text), $'esc\e[2J' (holds a control character), $'new\nline' (holds a control character), $'t\tab' (holds a control character); rename each",
    );
}
