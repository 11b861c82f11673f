//! `plugin add` pins the files a plugin starts from; a changed file is refused at start with the
//! command that approves it, `plugin approve` pins it again, `plugin remove` forgets the pins.

use crate::support::run::Sandboxed;

const STEP: &str = r#"#!/bin/sh
IFS= read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"plugin":{"name":"agentenv-pinned","version":"1"},"contributions":[{"group":"task_steps","name":"pinned_step","type":"pinned_step","class":"PinnedStep","methods":["from_dict","execute"]}]}}'
while IFS= read -r line; do
  rest=${line#*\"id\":}
  id=${rest%%[!0-9]*}
  [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"result":{"metadata":{}}}\n' "$id"
done
"#;

/// The plugin's source folder `folder`: its script and its manifest, with `plugin_extra` lines added
/// to the manifest's `[plugin]` table.
fn write_plugin_source(s: &Sandboxed, folder: &str, plugin_extra: &str) {
    let script = s.write(&format!("{folder}/step.sh"), STEP);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    s.write(
        &format!("{folder}/agent-env-plugin.toml"),
        &format!("[plugin]\nname = \"agentenv-pinned\"\nversion = \"1.0.0\"\nexec = [\"./step.sh\"]\nprotocol = [1, 1]\n{plugin_extra}\n[provides.task_steps]\npinned_step = \"PinnedStep\"\n"),
    );
}

fn add_pinned_plugin(s: &Sandboxed) {
    write_plugin_source(s, "src-plugin", "");
    s.write("pb/tasks/t.json", r#"[{"id": "p", "type": "pinned_step"}]"#);
    let r = s.run(&["plugin", "add", "./src-plugin", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.both());
}

#[test]
fn a_changed_plugin_file_is_refused_until_approved() {
    let s = Sandboxed::new();
    add_pinned_plugin(&s);
    let pins = std::fs::read_to_string(s.plugins().join(".pins.json")).unwrap();
    assert!(
        pins.contains("agentenv-pinned") && pins.contains("step.sh"),
        "{pins}"
    );
    assert_eq!(s.run(&["run", "./pb"]).code, 0);

    // Someone edits the installed script.
    let installed = s.plugins().join("agentenv-pinned").join("step.sh");
    assert!(installed.exists(), "{}", installed.display());
    std::fs::write(
        &installed,
        STEP.replace("metadata\":{}", "metadata\":{\"x\":1}"),
    )
    .unwrap();
    let r = s.run(&["run", "./pb"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr.contains("plugin agentenv-pinned was not started: ")
            && r.stderr.contains("step.sh (sha256 ")
            && r.stderr.contains("changed since `agent-env plugin add` approved it; if you changed it, approve it with `agent-env plugin approve agentenv-pinned`"),
        "{}",
        r.stderr
    );
    let check = s.run(&["plugin", "check"]);
    assert_eq!(check.code, 1, "{}", check.both());
    assert!(check.stdout.contains("[tampered]"), "{}", check.stdout);

    // With no terminal to ask on and no --yes, the changed file is named and nothing is pinned.
    let sha = |text: &str| {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(text.as_bytes()))[..12].to_string()
    };
    let changed_line = format!(
        "  {}: sha256 {}, now {}\n",
        installed.display(),
        sha(STEP),
        sha(&std::fs::read_to_string(&installed).unwrap())
    );
    let asked = s.run(&["plugin", "approve", "agentenv-pinned"]);
    assert_eq!(asked.code, 2, "{}", asked.both());
    assert_eq!(
        asked.stdout,
        format!("agentenv-pinned 1.0.0: 1 file changed since it was approved:\n{changed_line}")
    );
    assert!(
        asked
            .stderr
            .contains("nothing to confirm on: there is no terminal; pass --yes to go ahead"),
        "{}",
        asked.stderr
    );
    assert_eq!(s.run(&["run", "./pb"]).code, 1, "still refused");

    let approve = s.run(&["plugin", "approve", "agentenv-pinned", "-y"]);
    assert_eq!(approve.code, 0, "{}", approve.both());
    assert_eq!(
        approve.stdout,
        format!("agentenv-pinned 1.0.0: 1 file changed since it was approved:\n{changed_line}Approved agentenv-pinned 1.0.0: its files are pinned as they are now.\n")
    );
    assert_eq!(s.run(&["run", "./pb"]).code, 0);
    // Nothing changed since: approved again without a question.
    let again = s.run(&["plugin", "approve", "agentenv-pinned"]);
    assert_eq!(
        again.stdout,
        "Approved agentenv-pinned 1.0.0: its files are pinned as they are now.\n",
        "{}",
        again.both()
    );

    let gone = s.run(&["plugin", "approve", "agentenv-nope"]);
    assert_eq!(gone.code, 1);
    assert!(
        gone.stderr
            .contains("no installed plugin package named 'agentenv-nope'"),
        "{}",
        gone.stderr
    );

    let r = s.run(&["plugin", "remove", "agentenv-pinned", "--yes", "--force"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let pins = std::fs::read_to_string(s.plugins().join(".pins.json")).unwrap();
    assert!(!pins.contains("agentenv-pinned"), "{pins}");
}

/// The manifest is pinned too: an `exec` changed to start other code is refused like a changed
/// script; a pin file that cannot be read is warned about, and `approve` writes it anew.
#[test]
fn a_changed_manifest_or_an_unreadable_pin_file_is_not_passed_over() {
    let s = Sandboxed::new();
    add_pinned_plugin(&s);
    let manifest = s.plugins().join("agentenv-pinned/agent-env-plugin.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace(
            "exec = [\"./step.sh\"]",
            "exec = [\"./step.sh\", \"--other\"]",
        ),
    )
    .unwrap();
    let r = s.run(&["run", "./pb"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr.contains("agent-env-plugin.toml (sha256 "),
        "{}",
        r.stderr
    );
    assert_eq!(
        s.run(&["plugin", "approve", "agentenv-pinned", "--yes"])
            .code,
        0
    );
    assert_eq!(s.run(&["run", "./pb"]).code, 0);

    std::fs::write(s.plugins().join(".pins.json"), "garbage").unwrap();
    let list = s.run(&["plugin", "list"]);
    assert!(
        list.stderr.contains("are not checked before they start; `agent-env plugin approve PACKAGE…` pins what is installed now"),
        "{}",
        list.both()
    );
    // Another plugin's pins were in the file too: approving one says the rest are not pinned now.
    s.install_manifest(
        "other",
        "[plugin]\nname = \"agentenv-other\"\nversion = \"1\"\nexec = [\"./x\"]\nprotocol = [1, 1]\n",
    );
    let approve = s.run(&["plugin", "approve", "agentenv-pinned", "--yes"]);
    assert_eq!(approve.code, 0, "{}", approve.both());
    assert!(
        approve.stderr.contains("agentenv-other is not pinned now: approve each you trust (agent-env plugin approve agentenv-other)"),
        "{}",
        approve.both()
    );
    let list = s.run(&["plugin", "list"]);
    assert!(!list.stderr.contains("are not checked"), "{}", list.both());
}

/// What of the environment a plugin's manifest asks for is said when it is added and by `plugin
/// show`, a broad prefix called so.
#[test]
fn the_environment_a_plugin_asks_for_is_said() {
    let s = Sandboxed::new();
    write_plugin_source(&s, "envy", "env = [\"OPENAI_API_KEY\", \"A*\"]\n");
    // A folder's is said in the plan, before anything is installed.
    let dry = s.run(&["plugin", "add", "./envy", "--dry-run"]);
    assert!(
        dry.stdout.contains("\n  agentenv-pinned asks for the environment variables OPENAI_API_KEY, A* beside the pass-through list; 'A*' is broad"),
        "{}",
        dry.both()
    );
    let r = s.run(&["plugin", "add", "./envy", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let said = "agentenv-pinned asks for the environment variables OPENAI_API_KEY, A* beside the pass-through list; 'A*' is broad";
    assert!(r.both().contains(&format!("note: {said}")), "{}", r.both());
    let show = s.run(&["plugin", "show", "agentenv-pinned"]);
    assert!(
        show.stdout
            .contains("  env:      asks for the environment variables OPENAI_API_KEY, A*"),
        "{}",
        show.both()
    );
}

fn json_of(r: &crate::support::run::Ran) -> serde_json::Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.both()))
}

#[test]
fn plugin_add_and_remove_answer_in_json_for_a_script() {
    let s = Sandboxed::new();
    write_plugin_source(&s, "src-plugin", "");

    let asks = s.run(&["plugin", "add", "./src-plugin", "--json"]);
    assert_eq!(asks.code, 2, "{}", asks.both());
    assert!(
        asks.stderr.contains("add --yes (or --dry-run)"),
        "{}",
        asks.stderr
    );

    let added = s.run(&["plugin", "add", "./src-plugin", "--yes", "--json"]);
    assert_eq!(added.code, 0, "{}", added.both());
    let doc = json_of(&added);
    assert_eq!(doc["format_version"], 1);
    assert_eq!(doc["command"], "add");
    assert_eq!(doc["outcome"], "added", "{doc}");
    assert_eq!(doc["requested"][0], "./src-plugin");
    assert_eq!(doc["installed"][0]["name"], "agentenv-pinned", "{doc}");
    assert_eq!(doc["problems"].as_array().unwrap().len(), 0);

    let again = json_of(&s.run(&["plugin", "add", "./src-plugin", "--yes", "--json"]));
    assert_eq!(again["outcome"], "unchanged", "{again}");

    s.write(
        "broken/agent-env-plugin.toml",
        "[plugin]\nname = \"agentenv-broken\"\nversion = \"0.1.0\"\nexec = [\"./missing\"]\nprotocol = [1, 1]\n[provides.task_steps]\nbroken_step = \"B\"\n",
    );
    let failed = s.run(&["plugin", "add", "./broken", "--yes", "--json"]);
    assert_eq!(failed.code, 1, "{}", failed.both());
    let doc = json_of(&failed);
    assert_eq!(doc["outcome"], "rolled_back", "{doc}");
    assert!(
        doc["problems"][0]
            .as_str()
            .unwrap()
            .starts_with("agentenv-broken: task_steps broken_step did not take effect (failed): "),
        "{doc}"
    );
    assert_eq!(doc["installed"].as_array().unwrap().len(), 1, "{doc}");
    assert_eq!(
        doc["error"], doc["problems"][0],
        "a failure's error is never null: {doc}"
    );
    assert!(
        failed.stderr.contains("Error: agentenv-broken: "),
        "{}",
        failed.stderr
    );
    assert_eq!(again["error"], serde_json::Value::Null, "{again}");

    let removed = s.run(&["plugin", "remove", "agentenv-pinned", "--yes", "--json"]);
    assert_eq!(removed.code, 0, "{}", removed.both());
    let doc = json_of(&removed);
    assert_eq!(doc["outcome"], "removed", "{doc}");
    assert_eq!(doc["installed"].as_array().unwrap().len(), 0, "{doc}");
}

#[test]
fn plugin_approve_answers_in_json_for_a_script() {
    let s = Sandboxed::new();
    add_pinned_plugin(&s);
    let installed = s.plugins().join("agentenv-pinned");
    std::fs::write(
        installed.join("step.sh"),
        STEP.replace("metadata\":{}", "metadata\":{\"x\":1}"),
    )
    .unwrap();

    // A script is not asked: without --yes nothing is pinned, and the changed file is named.
    let refused = s.run(&["plugin", "approve", "agentenv-pinned", "--json"]);
    assert_eq!(refused.code, 2, "{}", refused.both());
    let doc = json_of(&refused);
    assert_eq!(doc["status"], "error", "{doc}");
    let error = doc["error"].as_str().unwrap();
    assert!(
        error.starts_with("plugin approve --json cannot ask before pinning files that changed: add --yes to approve them (")
            && error.contains(&format!("{}: sha256 ", installed.join("step.sh").display())),
        "{doc}"
    );

    let approve = s.run(&["plugin", "approve", "agentenv-pinned", "--json", "--yes"]);
    assert_eq!(approve.code, 0, "{}", approve.both());
    let doc = json_of(&approve);
    let mut keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["approved", "format_version", "warnings"], "{doc}");
    assert_eq!(doc["format_version"], 1);
    assert_eq!(doc["warnings"], serde_json::json!([]));
    let approved = &doc["approved"][0];
    let mut keys: Vec<&String> = approved.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "changed",
            "changes",
            "files",
            "name",
            "newly_pinned",
            "unpinned",
            "version"
        ],
        "{doc}"
    );
    let change = &approved["changes"][0];
    assert_eq!(approved["changes"].as_array().unwrap().len(), 1, "{doc}");
    assert_eq!(
        change["path"].as_str().unwrap(),
        installed.join("step.sh").display().to_string()
    );
    assert_eq!(change["was"].as_str().unwrap().len(), 64, "{doc}");
    assert_eq!(change["now"].as_str().unwrap().len(), 64, "{doc}");
    assert_ne!(change["was"], change["now"], "{doc}");
    assert_eq!(approved["name"], "agentenv-pinned");
    assert_eq!(approved["version"], "1.0.0");
    let names = |key: &str| -> Vec<String> {
        approved[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let path = std::path::Path::new(p.as_str().unwrap());
                path.file_name().unwrap().to_string_lossy().into_owned()
            })
            .collect()
    };
    let mut files = names("files");
    files.sort();
    assert_eq!(files, ["agent-env-plugin.toml", "step.sh"], "{doc}");
    assert_eq!(names("changed"), ["step.sh"], "{doc}");
    assert_eq!(names("newly_pinned"), Vec::<String>::new(), "{doc}");
    assert_eq!(names("unpinned"), Vec::<String>::new(), "{doc}");
    assert_eq!(s.run(&["run", "./pb"]).code, 0);

    // Approved again unchanged: nothing changed.
    let again = json_of(&s.run(&["plugin", "approve", "agentenv-pinned", "--json"]));
    assert_eq!(
        again["approved"][0]["changed"],
        serde_json::json!([]),
        "{again}"
    );

    let gone = s.run(&["plugin", "approve", "agentenv-nope", "--json"]);
    assert_eq!(gone.code, 1, "{}", gone.both());
    let doc = json_of(&gone);
    assert_eq!(doc["status"], "error", "{doc}");
    assert_eq!(doc["exit_code"], 1, "{doc}");
    assert!(
        doc["error"]
            .as_str()
            .unwrap()
            .contains("no installed plugin package named 'agentenv-nope'"),
        "{doc}"
    );
    assert!(gone.stderr.starts_with("Error: "), "{}", gone.stderr);
}

/// Rewrites the pins of `package` in the pin file under `plugins` as an older agent-env wrote them:
/// its executable alone (no manifest, no code), under the path `old_path` spells it by.
pub(crate) fn pin_as_an_older_agent_env(plugins: &std::path::Path, package: &str, old_path: &str) {
    let file = plugins.join(".pins.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let pins = doc["packages"][package].as_array_mut().unwrap();
    pins.truncate(1);
    pins[0]["path"] = old_path.into();
    std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
}

/// A package an older agent-env pinned (its executable alone, under an unnormalised path) still
/// starts, but `list`, `show` and `check` say its manifest is not pinned and how to pin it; `approve`
/// with nothing changed lists the manifest as newly pinned, not the executable as changed twice.
#[test]
fn a_package_an_older_agent_env_pinned_is_warned_of_and_approved_as_newly_pinned() {
    let s = Sandboxed::new();
    add_pinned_plugin(&s);
    let installed = s.plugins().join("agentenv-pinned");
    let manifest = installed.join("agent-env-plugin.toml");
    let old_path = format!("{}/../agentenv-pinned/./step.sh", installed.display());
    pin_as_an_older_agent_env(&s.plugins(), "agentenv-pinned", &old_path);
    let warning = format!(
        "Warning: agentenv-pinned 1.0.0 was pinned by an older agent-env, which pinned fewer of its files: 1 file it starts from is not pinned, so a change to it goes unnoticed ({}); run `agent-env plugin approve agentenv-pinned` to pin it as it is now [pins-outdated]\n",
        manifest.display()
    );

    // Still started: every check passes, with the warning beside it.
    let check = s.run(&["plugin", "check"]);
    assert_eq!(check.code, 0, "{}", check.both());
    assert!(check.stdout.contains("all in effect"), "{}", check.stdout);
    assert!(check.stderr.contains(&warning), "{}", check.stderr);
    let doc = json_of(&s.run(&["plugin", "check", "--json"]));
    assert_eq!(doc["ok"], true, "{doc}");
    let said = format!("{doc}");
    assert!(said.contains("[pins-outdated]"), "{doc}");
    let list = s.run(&["plugin", "list", "--json"]);
    assert!(
        json_of(&list)["warnings"][0]
            .as_str()
            .unwrap()
            .contains("[pins-outdated]"),
        "{}",
        list.both()
    );
    for args in [
        &["plugin", "list"][..],
        &["plugin", "show", "agentenv-pinned"],
        &["plugin", "show", "agentenv-pinned", "--json"],
    ] {
        let r = s.run(args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.both());
        assert!(r.stderr.contains(&warning), "{args:?}: {}", r.stderr);
    }
    assert_eq!(s.run(&["run", "./pb"]).code, 0);

    // Nothing changed: the manifest is newly pinned, the executable is the same file unchanged.
    let asked = s.run(&["plugin", "approve", "agentenv-pinned"]);
    assert_eq!(asked.code, 2, "{}", asked.both());
    let sha = {
        use sha2::Digest;
        let text = std::fs::read(&manifest).unwrap();
        hex::encode(sha2::Sha256::digest(text))[..12].to_string()
    };
    assert_eq!(
        asked.stdout,
        format!(
            "agentenv-pinned 1.0.0: 1 file newly pinned, not pinned before (agent-env pins more of a package's files than it did):\n  {}: not pinned before, now {sha}\n",
            manifest.display()
        )
    );
    let refused = json_of(&s.run(&["plugin", "approve", "agentenv-pinned", "--json"]));
    assert!(
        refused["error"].as_str().unwrap().starts_with(
            "plugin approve --json cannot ask before pinning files not pinned before: add --yes to approve them (newly pinned: "
        ),
        "{refused}"
    );
    let approve = s.run(&["plugin", "approve", "agentenv-pinned", "--json", "--yes"]);
    assert_eq!(approve.code, 0, "{}", approve.both());
    let approved = &json_of(&approve)["approved"][0];
    assert_eq!(approved["changed"], serde_json::json!([]), "{approved}");
    assert_eq!(approved["unpinned"], serde_json::json!([]), "{approved}");
    assert_eq!(
        approved["newly_pinned"],
        serde_json::json!([manifest.display().to_string()]),
        "{approved}"
    );
    assert_eq!(
        approved["changes"].as_array().unwrap().len(),
        1,
        "{approved}"
    );

    // Pinned as agent-env pins now: nothing more to warn of, and the pins name each file once.
    let check = s.run(&["plugin", "check"]);
    assert_eq!(check.code, 0, "{}", check.both());
    assert!(!check.stderr.contains("pins-outdated"), "{}", check.stderr);
    let pins = std::fs::read_to_string(s.plugins().join(".pins.json")).unwrap();
    assert!(!pins.contains("/../") && !pins.contains("/./"), "{pins}");
}

/// A package with no pins at all (its pins dropped from the pin file) is approved with its files
/// newly pinned, not said to be pinned by an older agent-env that pinned fewer of them.
#[test]
fn a_package_never_pinned_is_approved_as_not_pinned_before() {
    let s = Sandboxed::new();
    add_pinned_plugin(&s);
    let file = s.plugins().join(".pins.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    doc["packages"]
        .as_object_mut()
        .unwrap()
        .remove("agentenv-pinned");
    std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let asked = s.run(&["plugin", "approve", "agentenv-pinned"]);
    assert_eq!(asked.code, 2, "{}", asked.both());
    assert!(
        asked.stdout.starts_with("agentenv-pinned 1.0.0: ")
            && asked.stdout.contains(" newly pinned, not pinned before:\n"),
        "{}",
        asked.both()
    );
    assert!(!asked.stdout.contains("pins more"), "{}", asked.both());
}
