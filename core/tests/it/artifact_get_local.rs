//! `artifact get` of the @local id a bundle run gives an artifact of its bundle's `artifacts/` folder:
//! read from the local stores the run wrote (not the configured ones), `--verify` held to the object
//! store the run wrote the files to, and an id no run recorded said so in a bundle's terms.

use crate::support::run::{copy_dir, Sandboxed};

/// Every file below `dir`.
fn files_below(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| match e.path() {
            path if path.is_dir() => files_below(&path),
            path => vec![path],
        })
        .collect()
}

/// The hello bundle copied to `<temp>/mb`, outside the home folder (so its ids are
/// `@local/<absolute path>/…`), run once; the configured stores are other folders, which the run
/// does not write. Returns the bundle's id root.
fn ran_bundle_outside_home(s: &Sandboxed) -> String {
    let bundle = s.dir.path().join("mb");
    copy_dir(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/hello"),
        &bundle,
    );
    let configured = s.dir.path().join("configured");
    s.write(
        ".agentenv/config.toml",
        &format!(
            "[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = {{ root = \"{0}/objects\" }}\n[stores.document]\nimpl = \"LocalSqliteDocumentStore\"\nconfig = {{ path = \"{0}/documents.db\" }}\n",
            configured.display()
        ),
    );
    let ran = s.run(&["run", bundle.to_str().unwrap()]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    assert!(
        ran.stdout.starts_with("artifacts/greeting: v1 (new)\n"),
        "{}",
        ran.both()
    );
    assert!(
        files_below(&configured.join("objects")).is_empty(),
        "a bundle run writes the local object store"
    );
    format!("@local{}", bundle.canonicalize().unwrap().display())
}

#[test]
fn a_bundles_artifact_is_read_by_its_local_id_and_verified_against_the_local_object_store() {
    let s = Sandboxed::new();
    let root = ran_bundle_outside_home(&s);
    let id = format!("{root}/greeting");

    let got = s.run(&["artifact", "get", &id]);
    assert_eq!(got.code, 0, "{}", got.both());
    assert!(
        got.stdout
            .starts_with(&format!("artifact:  {id} v1 (file_artifact_universe)\n")),
        "{}",
        got.both()
    );
    assert!(got.stdout.contains("  hello.txt "), "{}", got.both());

    let json = s
        .command(&["artifact", "get", &id, "--version", "1", "--json"])
        .output()
        .unwrap();
    assert_eq!(json.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["id"], id.as_str(), "{doc:#}");
    assert_eq!(doc["version"], 1, "{doc:#}");

    let verified = s.run(&["artifact", "get", &id, "--verify"]);
    assert_eq!(verified.code, 0, "{}", verified.both());
    assert!(
        verified.stdout.contains(
            "verified: 2 files read from the object store, as they were put (sizes and sha256 as recorded)\n"
        ),
        "{}",
        verified.both()
    );

    // A file changed in the local object store (same size, other bytes) is found, with what a
    // bundle's artifact needs: no artifact put.
    let hello: Vec<_> = files_below(&s.state().join("object_store/artifacts"))
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "hello.txt"))
        .collect();
    assert_eq!(hello.len(), 1, "{hello:?}");
    std::fs::write(&hello[0], "HELLO\n").unwrap();
    let checked = s.run(&["artifact", "get", &id, "--verify"]);
    assert_eq!(checked.code, 1, "{}", checked.both());
    assert!(
        checked.stderr.contains(&format!(
            "problem: the file hello.txt of the artifact '{id}' v1 is not as it was put: file://{}",
            hello[0].display()
        )) && checked.stderr.contains(
            "delete that object from the object store, and the bundle's next run writes the artifact's files anew"
        ) && !checked.stderr.contains("artifact put"),
        "{}",
        checked.both()
    );

    // A bare id is still read from the configured document store.
    let bare = s.run(&["artifact", "get", "greeting"]);
    assert_eq!(bare.code, 1, "{}", bare.both());
    assert!(
        bare.stderr
            .contains("the configured document store has no artifact 'greeting'; put one with agent-env artifact put FOLDER --id greeting"),
        "{}",
        bare.both()
    );
}

#[test]
fn a_local_id_no_run_recorded_is_said_in_a_bundles_terms() {
    let s = Sandboxed::new();
    let root = ran_bundle_outside_home(&s);
    let bundle = root.strip_prefix("@local").unwrap();

    // Another name in a bundle that ran: the artifacts its runs recorded.
    let id = format!("{root}/data");
    let missing = s.run(&["artifact", "get", &id]);
    assert_eq!(missing.code, 1, "{}", missing.both());
    assert!(
        missing.stderr.contains(&format!(
            "no artifact '{id}' in the local document store, where bundle runs record their artifacts; the runs of its bundle recorded an artifact {root}/greeting: give that id, or add the artifact's folder to the bundle's artifacts/ and run the bundle again (agent-env run {bundle})"
        )),
        "{}",
        missing.both()
    );
    for misleading in [
        "configured document store",
        "under a bare id",
        "artifact put",
    ] {
        assert!(!missing.stderr.contains(misleading), "{}", missing.both());
    }

    // A version it does not have: its newest.
    let version = s.run(&[
        "artifact",
        "get",
        &format!("{root}/greeting"),
        "--version",
        "2",
    ]);
    assert_eq!(version.code, 1, "{}", version.both());
    assert!(
        version.stderr.contains(&format!(
            "no artifact '{root}/greeting' v2 in the local document store, where bundle runs record their artifacts; its newest version is v1"
        )),
        "{}",
        version.both()
    );

    // A bundle that never ran here: how to record its artifacts.
    let never = s.home().join("never-ran");
    std::fs::create_dir_all(&never).unwrap();
    let id = "@local/~/never-ran/data";
    let unrecorded = s.run(&["artifact", "get", id, "--verify"]);
    assert_eq!(unrecorded.code, 1, "{}", unrecorded.both());
    assert!(
        unrecorded.stderr.contains(&format!(
            "no artifact '{id}' in the local document store, where bundle runs record their artifacts; no run of its bundle has recorded an artifact on this machine: run it with agent-env run ~/never-ran, which records each artifact of the bundle's artifacts/ folder"
        )),
        "{}",
        unrecorded.both()
    );
}

/// A bundle under the home folder has `@local/~/…` ids: its artifact is read by that id spelled by
/// the folder's absolute path too, and with a trailing `/`; a name its runs did not record, with a
/// trailing `/`, suggests running the bundle, not a folder named after the artifact. The absolute
/// spelling was said never to have run, and the trailing `/` suggested `agent-env run ~/hb/greeting`.
#[test]
fn a_bundle_under_home_is_read_by_its_absolute_path_or_with_a_trailing_slash() {
    let s = Sandboxed::new();
    let bundle = s.home().join("hb");
    copy_dir(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/hello"),
        &bundle,
    );
    let ran = s.run(&["run", "~/hb"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let absolute = format!(
        "@local{}/greeting",
        bundle.canonicalize().unwrap().display()
    );
    for id in [absolute.as_str(), "@local/~/hb/greeting/"] {
        let got = s.run(&["artifact", "get", id, "--verify"]);
        assert_eq!(got.code, 0, "{id}: {}", got.both());
        assert!(
            got.stdout
                .starts_with("artifact:  @local/~/hb/greeting v1 "),
            "{id}: {}",
            got.both()
        );
    }
    let missing = s.run(&["artifact", "get", "@local/~/hb/data/"]);
    assert_eq!(missing.code, 1, "{}", missing.both());
    assert!(
        missing.stderr.contains("the runs of its bundle recorded an artifact @local/~/hb/greeting: give that id, or add the artifact's folder to the bundle's artifacts/ and run the bundle again (agent-env run ~/hb)"),
        "{}",
        missing.both()
    );
}
