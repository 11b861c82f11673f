//! The environment a plugin child gets: the default pass-through list, what its manifest declares
//! (`[plugin] env`) and what `AGENT_ENV_PLUGIN_ENV` adds; every other variable of agent-env's
//! environment (API keys, tokens) is withheld.

use serde_json::Value;

use crate::support::run::Sandboxed;

/// A wire-level step plugin whose step answers with the variables it can see.
fn install_env_reporter(s: &Sandboxed, manifest_env: &str) {
    let script = s.script(
        "env-step.sh",
        r#"#!/bin/sh
IFS= read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"plugin":{"name":"agentenv-envcheck","version":"1"},"contributions":[{"group":"task_steps","name":"env_step","type":"env_step","class":"EnvStep","methods":["execute","from_dict"]}]}}'
while IFS= read -r line; do
  rest=${line#*\"id\":}
  id=${rest%%[!0-9]*}
  [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"result":{"metadata":{"seen":{"openai":"%s","token":"%s","aws_region":"%s","aws_key":"%s","state":"%s","has_path":"%s","document_store":"%s"}}}}\n' \
    "$id" "${OPENAI_API_KEY-unset}" "${MY_TOOL_TOKEN-unset}" "${AWS_REGION-unset}" "${AWS_SECRET_ACCESS_KEY-unset}" "${XDG_STATE_HOME:+set}" "${PATH:+set}" "${AGENT_ENV_DOCUMENT_STORE-unset}"
done
"#,
    );
    s.install_manifest(
        "envcheck",
        &format!(
            "[plugin]\nname = \"agentenv-envcheck\"\nversion = \"1\"\nexec = [\"/bin/sh\", \"{}\"]\nprotocol = [1, 1]\n{manifest_env}\n[provides.task_steps]\nenv_step = \"EnvStep\"\n",
            script.display()
        ),
    );
    s.write("envb/tasks/t.json", r#"[{"id": "e", "type": "env_step"}]"#);
}

/// Runs the bundle with the given extra variables and returns what the step saw.
fn seen(s: &Sandboxed, vars: &[(&str, &str)]) -> Value {
    let mut cmd = s.command(&["run", "./envb"]);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let docs = s.docs("task_instances");
    docs.last().unwrap()["context"]["metadata"]["seen"].clone()
}

const SECRETS: [(&str, &str); 4] = [
    ("OPENAI_API_KEY", "sk-test"),
    ("MY_TOOL_TOKEN", "tok"),
    ("AWS_REGION", "eu-west-1"),
    ("AWS_SECRET_ACCESS_KEY", "aws-secret"),
];

#[test]
fn a_plugin_gets_the_pass_through_list_and_no_secret_it_did_not_ask_for() {
    let s = Sandboxed::new();
    install_env_reporter(&s, "");
    let seen = seen(&s, &SECRETS);
    assert_eq!(seen["openai"], "unset", "{seen}");
    assert_eq!(seen["token"], "unset", "{seen}");
    assert_eq!(seen["aws_key"], "unset", "{seen}");
    assert_eq!(seen["has_path"], "set", "{seen}");
    assert_eq!(seen["state"], "set", "XDG_* passes: {seen}");
}

#[test]
fn the_manifest_and_agent_env_plugin_env_let_more_through() {
    let s = Sandboxed::new();
    install_env_reporter(&s, "env = [\"OPENAI_API_KEY\", \"AWS_*\"]");
    let seen_declared = seen(&s, &SECRETS);
    assert_eq!(seen_declared["openai"], "sk-test", "{seen_declared}");
    assert_eq!(seen_declared["aws_region"], "eu-west-1", "{seen_declared}");
    assert_eq!(seen_declared["aws_key"], "aws-secret", "{seen_declared}");
    assert_eq!(seen_declared["token"], "unset", "{seen_declared}");

    let mut vars = SECRETS.to_vec();
    vars.push(("AGENT_ENV_PLUGIN_ENV", "MY_TOOL_TOKEN"));
    let seen_added = seen(&s, &vars);
    assert_eq!(seen_added["token"], "tok", "{seen_added}");
}

#[test]
fn a_bad_env_entry_in_a_manifest_is_refused_with_what_to_write() {
    let s = Sandboxed::new();
    install_env_reporter(&s, "env = [\"NOT OK\"]");
    let r = s.run(&["plugin", "show", "envcheck"]);
    assert!(
        r.both().contains("plugin.env holds 'NOT OK'; write variable names (letters, digits and _) or prefixes ending in *"),
        "{}",
        r.both()
    );
}

#[test]
fn no_manifest_env_lets_a_store_selection_through() {
    let s = Sandboxed::new();
    install_env_reporter(&s, "env = [\"A*\", \"AGENT_ENV_DOCUMENT_STORE\"]");
    // A selection that selects nothing (a dsn, which belongs in [stores.document]) now stops a run
    // as config check does, so the variable holds one a run accepts.
    let vars = [
        ("AGENT_ENV_DOCUMENT_STORE", "local"),
        ("AWS_REGION", "eu-west-1"),
    ];
    let seen = seen(&s, &vars);
    assert_eq!(seen["document_store"], "unset", "{seen}");
    assert_eq!(
        seen["aws_region"], "eu-west-1",
        "the prefix still works: {seen}"
    );
}

/// A plugin module (`python3 -m qaplug`) that answers the handshake with one step and every call
/// after it with an empty result.
const PYTHON_MODULE_PLUGIN: &str = r#"import json, sys
sys.stdin.readline()
print(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"protocol": 1, "plugin": {"name": "agentenv-pymod", "version": "1"}, "contributions": [{"group": "task_steps", "name": "pymod_step", "type": "pymod_step", "class": "PymodStep", "methods": ["execute", "from_dict"]}]}}), flush=True)
for line in sys.stdin:
    message = json.loads(line)
    if "id" in message:
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}), flush=True)
"#;

#[test]
fn a_python_module_in_the_folder_agent_env_runs_in_is_not_imported_in_the_plugins_place() {
    let s = Sandboxed::new();
    // The plugin's module, found through PYTHONPATH (which every plugin gets).
    let library = s.write("pylib/qaplug.py", PYTHON_MODULE_PLUGIN);
    let library = library.parent().unwrap();
    s.install_manifest(
        "pymod",
        "[plugin]\nname = \"agentenv-pymod\"\nversion = \"1\"\nexec = [\"python3\", \"-m\", \"qaplug\"]\nprotocol = [1, 1]\n[provides.task_steps]\npymod_step = \"PymodStep\"\n",
    );
    // A folder holding a module of the same name, which Python would import first for `-m` when
    // agent-env runs there.
    let elsewhere = s.home().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let marker = elsewhere.join("ran");
    std::fs::write(
        elsewhere.join("qaplug.py"),
        format!("open({:?}, 'w').close()\n", marker.display().to_string()),
    )
    .unwrap();

    let out = s
        .command(&["plugin", "list"])
        .env("PYTHONPATH", library)
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    let both = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!marker.exists(), "the folder's qaplug.py ran: {both}");
    assert!(both.contains("task step pymod_step  ok"), "{both}");
}
