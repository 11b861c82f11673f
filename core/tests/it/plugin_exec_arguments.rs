//! A manifest whose `exec` names a file beside it by a relative path in an argument after the first
//! (`["/bin/sh", "step.sh"]`): that argument is passed as written, so the file is looked for in the
//! folder agent-env runs in. `plugin add` refuses such a manifest without its check starting it,
//! `plugin verify` does not start it, and a plugin added before is not started, so another folder's
//! file of that name never runs.

use crate::support::run::{Ran, Sandboxed};

const STEP: &str = r#"#!/bin/sh
IFS= read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"plugin":{"name":"agentenv-relative","version":"1"},"contributions":[{"group":"task_steps","name":"relative_step","type":"relative_step","class":"RelativeStep","methods":["from_dict","execute"]}]}}'
while IFS= read -r line; do
  rest=${line#*\"id\":}
  id=${rest%%[!0-9]*}
  [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"result":{"metadata":{}}}\n' "$id"
done
"#;

const MANIFEST: &str = "[plugin]\nname = \"agentenv-relative\"\nversion = \"0.1.0\"\nexec = [\"/bin/sh\", \"step.sh\"]\nprotocol = [1, 1]\n[provides.task_steps]\nrelative_step = \"RelativeStep\"\n";

/// The plugin's folder `folder` under the sandbox's home: `step.sh` and the manifest that runs it
/// by a relative argument.
fn write_plugin(s: &Sandboxed, folder: &str) -> std::path::PathBuf {
    s.write(&format!("{folder}/step.sh"), STEP);
    s.write(&format!("{folder}/agent-env-plugin.toml"), MANIFEST)
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Runs agent-env with `args` in the folder `cwd`.
fn run_in(s: &Sandboxed, cwd: &std::path::Path, args: &[&str]) -> Ran {
    Ran::from(s.command(args).current_dir(cwd).output().unwrap())
}

fn reason(manifest: &std::path::Path) -> String {
    format!(
        "exec argument 'step.sh' in {} names a file beside the manifest, but arguments after the first are passed as written, so the plugin finds it only when agent-env runs in that folder; make that file the first element, by its path relative to the manifest (exec = [\"./step.sh\"], a script with a #! line, made executable), or package the plugin with a console script and name that in exec",
        manifest.display(),
    )
}

#[test]
fn plugin_add_refuses_an_argument_that_names_a_file_beside_the_manifest() {
    let s = Sandboxed::new();
    let folder = write_plugin(&s, "src-relative");
    let installed = s.plugins().join("agentenv-relative/agent-env-plugin.toml");

    // From the plugin's own folder the file is there, so only the rule refuses it.
    let added = run_in(&s, &folder, &["plugin", "add", ".", "-y"]);
    assert_eq!(added.code, 1, "{}", added.both());
    // Said of the installed copy the check started, and the note after it names the folder it
    // was added from, where the manifest is to be fixed.
    assert!(
        added.stderr.contains(&reason(&installed)),
        "{}",
        added.both()
    );
    assert!(
        added.stderr.contains(&format!(
            "note: {} above is the installed copy of {}, which is removed now; make the change in {} and add it again",
            installed.parent().unwrap().display(),
            folder.display(),
            folder.display()
        )),
        "{}",
        added.both()
    );
    assert!(!installed.exists(), "rolled back: {}", added.both());

    let json = run_in(&s, &folder, &["plugin", "add", ".", "-y", "--json"]);
    assert_eq!(json.code, 1, "{}", json.both());
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["outcome"], "rolled_back", "{doc}");
    assert!(
        doc["error"].as_str().unwrap().contains(&reason(&installed)),
        "{doc}"
    );
    assert!(!installed.exists());
}

#[test]
fn a_plugin_added_before_is_not_started_and_another_folders_file_never_runs() {
    let s = Sandboxed::new();
    // Added before `plugin add` refused it: its folder in the plugins directory as the copy left it.
    std::fs::create_dir_all(s.plugins()).unwrap();
    let installed = s.plugins().join("agentenv-relative");
    std::fs::create_dir_all(&installed).unwrap();
    std::fs::write(installed.join("step.sh"), STEP).unwrap();
    std::fs::write(installed.join("agent-env-plugin.toml"), MANIFEST).unwrap();
    let manifest = installed.join("agent-env-plugin.toml");
    // Another folder holding a file of that name, which would run in the plugin's place.
    let marker = s.home().join("ran");
    let elsewhere = s.home().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(
        elsewhere.join("step.sh"),
        format!("touch '{}'\n", marker.display()),
    )
    .unwrap();

    let list = run_in(&s, &elsewhere, &["plugin", "list"]);
    assert!(
        list.stdout.contains("relative_step  1 failed"),
        "{}",
        list.both()
    );
    let check = run_in(&s, &elsewhere, &["plugin", "check"]);
    assert_eq!(check.code, 1, "{}", check.both());
    assert!(
        check.stdout.contains("[relative-argument]"),
        "{}",
        check.both()
    );
    let show = run_in(&s, &elsewhere, &["plugin", "show", "agentenv-relative"]);
    assert!(
        show.both().contains(&format!(
            "plugin agentenv-relative was not started: whatever file of that name the folder agent-env runs in holds would run in its place; {}",
            reason(&manifest)
        )),
        "{}",
        show.both()
    );
    assert!(!marker.exists(), "the other folder's step.sh ran");
}

/// The same plugin declaring a store only, which `plugin add`'s check would start to hold it to its
/// store classes.
const STORE_MANIFEST: &str = "[plugin]\nname = \"agentenv-relative\"\nversion = \"0.1.0\"\nexec = [\"/bin/sh\", \"step.sh\"]\nprotocol = [1, 1]\n[provides.stores]\nMemoryObjectStore = \"object\"\n";

/// A folder `elsewhere` under the sandbox's home holding a `step.sh` that writes the file `ran`
/// there: the file that would run in the plugin's place when agent-env runs in that folder.
fn decoy(s: &Sandboxed) -> (std::path::PathBuf, std::path::PathBuf) {
    let elsewhere = s.home().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let marker = elsewhere.join("ran");
    std::fs::write(
        elsewhere.join("step.sh"),
        format!("pwd > '{}'\nexit 5\n", marker.display()),
    )
    .unwrap();
    (elsewhere, marker)
}

#[test]
fn plugin_add_from_another_folder_never_runs_that_folders_file() {
    for (label, manifest) in [("steps", MANIFEST), ("stores", STORE_MANIFEST)] {
        let s = Sandboxed::new();
        let folder = write_plugin(&s, "src-relative");
        std::fs::write(folder.join("agent-env-plugin.toml"), manifest).unwrap();
        let installed = s.plugins().join("agentenv-relative/agent-env-plugin.toml");
        let (elsewhere, marker) = decoy(&s);

        let added = run_in(&s, &elsewhere, &["plugin", "add", "-y", "../src-relative"]);
        assert_eq!(added.code, 1, "{label}: {}", added.both());
        assert!(
            added.stderr.contains(&format!(
                "problem: plugin agentenv-relative was not started: whatever file of that name the folder agent-env runs in holds would run in its place; {}",
                reason(&installed)
            )),
            "{label}: {}",
            added.both()
        );
        // One problem: the check started nothing that could fail a second time.
        assert_eq!(
            added.stderr.matches("problem:").count(),
            1,
            "{label}: {}",
            added.both()
        );
        assert!(
            !installed.exists(),
            "{label}: rolled back: {}",
            added.both()
        );
        assert!(
            !marker.exists(),
            "{label}: the check ran the other folder's step.sh: {}",
            added.both()
        );
    }
}

#[test]
fn plugin_verify_does_not_start_it_and_says_why_in_the_manifest_check() {
    for (label, manifest) in [("steps", MANIFEST), ("stores", STORE_MANIFEST)] {
        let s = Sandboxed::new();
        let folder = write_plugin(&s, "src-relative");
        std::fs::write(folder.join("agent-env-plugin.toml"), manifest).unwrap();
        let (elsewhere, marker) = decoy(&s);
        let shown = elsewhere.join("../src-relative/agent-env-plugin.toml");

        let verified = run_in(&s, &elsewhere, &["plugin", "verify", "../src-relative"]);
        assert_eq!(verified.code, 1, "{label}: {}", verified.both());
        assert!(
            verified.stdout.contains(&format!(
                "  FAIL  manifest            not started: whatever file of that name the folder agent-env runs in holds would run in its place; {}",
                reason(&shown)
            )),
            "{label}: {}",
            verified.both()
        );
        assert!(
            verified.stdout.contains("  skip  initialize          not started: its exec names a file beside the manifest by a relative argument (the manifest check says why)"),
            "{label}: {}",
            verified.both()
        );
        assert!(
            verified
                .stdout
                .contains("13 checks: 0 passed, 1 failed, 12 skipped"),
            "{label}: {}",
            verified.both()
        );

        let json = run_in(
            &s,
            &elsewhere,
            &["plugin", "verify", "../src-relative", "--json"],
        );
        assert_eq!(json.code, 1, "{label}: {}", json.both());
        let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
        assert_eq!(doc["ok"], false, "{label}: {doc}");
        assert_eq!(doc["findings"][2]["check"], "manifest", "{label}: {doc}");
        assert_eq!(doc["findings"][2]["status"], "failed", "{label}: {doc}");
        assert!(
            !marker.exists(),
            "{label}: verify ran the other folder's step.sh: {}",
            verified.both()
        );
    }
}

#[test]
fn plugin_add_advises_what_works_for_the_installed_copy_and_the_advice_does() {
    let s = Sandboxed::new();
    let folder = write_plugin(&s, "src-relative");
    let installed = s.plugins().join("agentenv-relative");

    let added = run_in(&s, &folder, &["plugin", "add", ".", "-y"]);
    assert_eq!(added.code, 1, "{}", added.both());
    // Never the path of the copy the refusal removed, nor of the folder being added (which would
    // tie the installed plugin to it).
    for absolute in [installed.join("step.sh"), folder.join("step.sh")] {
        assert!(
            !added.both().contains(&absolute.display().to_string()),
            "{}",
            added.both()
        );
    }
    assert!(
        added
            .stderr
            .contains("make that file the first element, by its path relative to the manifest (exec = [\"./step.sh\"], a script with a #! line, made executable)"),
        "{}",
        added.both()
    );

    // Done as it says, the folder is added, with no warning about where the file is.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        folder.join("step.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(
        folder.join("agent-env-plugin.toml"),
        MANIFEST.replace("[\"/bin/sh\", \"step.sh\"]", "[\"./step.sh\"]"),
    )
    .unwrap();
    let added = run_in(&s, &folder, &["plugin", "add", ".", "-y"]);
    assert_eq!(added.code, 0, "{}", added.both());
    assert!(!added.stderr.contains("warning:"), "{}", added.both());
    assert!(installed.join("step.sh").is_file(), "{}", added.both());
}
