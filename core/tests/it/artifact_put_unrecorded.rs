//! `artifact put` whose document store refuses the new version after every file was written: it
//! says that no version was recorded, that the files it wrote stay in the object store unused, and
//! that a put again records them without writing them again, once it has asked again for as long as a task's end waits
//! for the store.

use crate::support::run::{Ran, Sandboxed};
use crate::support::shell_store::{ShellStore, REFUSE};

#[test]
fn a_put_whose_version_is_refused_at_the_end_says_what_it_left() {
    let s = Sandboxed::new();
    s.write("greeting/hello.txt", "hello there\n");
    s.write("greeting/more/notes.md", "notes");
    let inserts = s.home().join("inserts");
    let inserts = inserts.display();
    // Reached before any file is written (it counts the id's versions), refusing at the end.
    ShellStore {
        package: "agentenv-late-docs",
        class: "LateDocs",
        kind: "document",
        on_open: "",
        on_call: &format!(
            r#"case "$line" in
        *'"method":"store.document.count"'*)
          printf '{{"jsonrpc":"2.0","id":%s,"result":{{"count":0}}}}\n' "$id" ;;
        *'"method":"store.document.ensure_index"'*)
          printf '{{"jsonrpc":"2.0","id":%s,"result":{{}}}}\n' "$id" ;;
        *'"method":"store.document.find_one"'*)
          printf '{{"jsonrpc":"2.0","id":%s,"result":{{"doc":null}}}}\n' "$id" ;;
        *'"method":"store.document.insert"'*)
          echo insert >> '{inserts}' 
          printf '{{"jsonrpc":"2.0","id":%s,"error":{{"code":-32000,"message":"the database went read-only","data":{{"kind":"io-error"}}}}}}\n' "$id" ;;
        *) {REFUSE} ;;
      esac"#
        ),
    }
    .install(&s.plugins(), "late");
    s.write(
        ".agentenv/config.toml",
        "[stores.document]\nimpl = \"agentenv-late-docs:LateDocs\"\n",
    );
    // A second of asking again, not the default 30.
    let r = Ran::from(
        s.command(&[
            "artifact",
            "put",
            s.home().join("greeting").to_str().unwrap(),
            "--id",
            "team/greeting",
        ])
        .env("AGENT_ENV_RECORD_WAIT_SECONDS", "1")
        .output()
        .unwrap(),
    );
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr.contains(
            "; no version was recorded, so nothing uses the 2 files the put wrote to the object store under artifacts/file_artifact_universe/team/greeting/"
        ) && r.stderr.contains(
            " yet; they stay there, and putting the folder again, unchanged, records them without writing them again"
        ),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("after writing"), "{}", r.stderr);
    // Asked again while the store said it could not write (an I/O error passes).
    let inserts = std::fs::read_to_string(s.home().join("inserts")).unwrap_or_default();
    assert!(inserts.lines().count() >= 2, "{inserts:?}: {}", r.stderr);
    // The wait is said once, as it begins.
    assert_eq!(
        r.stderr
            .matches(
                "waiting for the document store to record the new version of 'team/greeting' ("
            )
            .count(),
        1,
        "{}",
        r.stderr
    );
    // They are there, as said.
    let written = std::fs::read_dir(
        s.state()
            .join("object_store/artifacts/file_artifact_universe/team/greeting"),
    )
    .unwrap()
    .count();
    assert_eq!(written, 1);
    // With a document store that takes it, the same folder is recorded from the files written.
    let objects = s.state().join("object_store");
    let files_below = |dir: &std::path::Path| -> usize {
        fn count(dir: &std::path::Path) -> usize {
            std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| match e.path() {
                    p if p.is_dir() => count(&p),
                    _ => 1,
                })
                .sum()
        }
        count(dir)
    };
    assert_eq!(files_below(&objects.join("artifacts")), 2);
    s.write(".agentenv/config.toml", "");
    let again = s.run(&[
        "artifact",
        "put",
        s.home().join("greeting").to_str().unwrap(),
        "--id",
        "team/greeting",
    ]);
    assert_eq!(
        (again.code, again.stdout.as_str()),
        (0, "team/greeting: v1 (file_artifact_universe, 2 files)\n"),
        "{}",
        again.both()
    );
    assert_eq!(files_below(&objects.join("artifacts")), 2, "written again");
}
