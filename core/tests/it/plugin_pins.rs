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

fn add_pinned_plugin(s: &Sandboxed) {
    let script = s.write("src-plugin/step.sh", STEP);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    s.write(
        "src-plugin/agent-env-plugin.toml",
        "[plugin]\nname = \"agentenv-pinned\"\nversion = \"1.0.0\"\nexec = [\"./step.sh\"]\nprotocol = [1, 1]\n\n[provides.task_steps]\npinned_step = \"PinnedStep\"\n",
    );
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

    let approve = s.run(&["plugin", "approve", "agentenv-pinned"]);
    assert_eq!(approve.code, 0, "{}", approve.both());
    assert_eq!(
        approve.stdout,
        "Approved agentenv-pinned 1.0.0: its files are pinned as they are now.\n"
    );
    assert_eq!(s.run(&["run", "./pb"]).code, 0);

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
