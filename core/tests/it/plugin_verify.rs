//! Black-box: `plugin verify` against a plugin written on the wire alone (`fixture-verify-faults`),
//! keeping every rule and then breaking each one in turn, against the SDK-built fixture, and against
//! a plugin with a CLI command that speaks stdin and stdout only (`fixture-stdio-cli`).

use std::collections::BTreeSet;

use crate::support::plugins::{fixture, fixture_manifest, plugin_table, Sandbox};
use serde_json::{json, Value};

/// Every check, in report order.
const CHECKS: [&str; 13] = [
    "cookie",
    "initialize",
    "manifest",
    "unknown-method",
    "unparsable-request",
    "cancel-request",
    "step-executes",
    "nested-calls",
    "shutdown",
    "stdin-eof",
    "command-mode",
    "no-leftovers",
    "stdout-clean",
];

const STEP: &str = r#"{"type": "verify_step", "id": "v"}"#;

/// The SDK-built fixture's manifest, its `exec` the built fixture.
fn works_manifest() -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixture-plugins/manifests/works.toml"),
    )
    .unwrap()
    .replace(
        "exec = [\"fixture-works\"]",
        &format!("exec = [\"{}\"]", fixture("fixture-works").display()),
    )
}

/// A sandbox with `fixture-verify-faults` installed as `fixture-verify`, breaking `rule` (none: "").
fn faults(rule: &str) -> Sandbox {
    let mut sb = Sandbox::new();
    let exe = fixture("fixture-verify-faults");
    let exec = if rule.is_empty() {
        format!("[\"{}\"]", exe.display())
    } else {
        format!("[\"{}\", \"--break\", \"{rule}\"]", exe.display())
    };
    let text = format!(
        "{}\n[provides.task_steps]\nverify_step = \"VerifyStep\"\n",
        plugin_table("fixture-verify", "0.1.0", &exec)
    );
    sb.plugin_dir_manifest("fixture-verify", &text);
    // Hangs are the point of some faults: keep the waits short.
    sb.set("AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT", "3")
        .set("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "3");
    sb
}

fn statuses(doc: &Value) -> Vec<(String, String)> {
    doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["check"].as_str().unwrap_or("").to_string(),
                f["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn failed(doc: &Value) -> BTreeSet<String> {
    statuses(doc)
        .into_iter()
        .filter(|(_, s)| s == "failed")
        .map(|(c, _)| c)
        .collect()
}

fn message<'a>(doc: &'a Value, check: &str) -> &'a str {
    doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["check"] == check)
        .and_then(|f| f["message"].as_str())
        .unwrap_or_else(|| panic!("no finding {check} in {doc:#}"))
}

#[test]
fn a_plugin_that_keeps_every_rule_passes_every_check() {
    let sb = faults("");
    let doc = sb.json(
        &[
            "plugin",
            "verify",
            "fixture-verify",
            "--step",
            STEP,
            "--json",
        ],
        0,
    );
    assert_eq!(doc["format_version"], 1);
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["package"], "fixture-verify");
    let got = statuses(&doc);
    let checks: Vec<&str> = got.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(checks, CHECKS);
    // It provides no CLI command, so nothing starts it in command mode.
    assert!(
        got.iter().all(|(c, s)| s
            == if c == "command-mode" {
                "skipped"
            } else {
                "passed"
            }),
        "{doc:#}"
    );
    assert!(
        message(&doc, "command-mode").contains("the plugin provides no CLI command"),
        "{doc:#}"
    );
    assert!(
        message(&doc, "nested-calls").contains("host.settings"),
        "{doc:#}"
    );
}

/// A `--step` whose type the plugin does not offer is the caller's mistake, said as one: the check
/// fails naming the plugin's task steps, instead of passing as a step that made no calls.
#[test]
fn a_step_type_the_plugin_lacks_fails_the_step_executes_check() {
    let doc = faults("").json(
        &[
            "plugin",
            "verify",
            "fixture-verify",
            "--step",
            r#"{"type": "no_such_step", "id": "s"}"#,
            "--json",
        ],
        1,
    );
    assert_eq!(failed(&doc), BTreeSet::from(["step-executes".to_string()]));
    assert_eq!(
        message(&doc, "nested-calls"),
        "no step ran (see step-executes)"
    );
    assert!(
        message(&doc, "step-executes").contains(
            "--step names the type 'no_such_step', which is not a task step of this plugin"
        ),
        "{doc:#}"
    );
}

#[test]
fn each_broken_rule_fails_its_own_check_and_no_other() {
    // `command-mode` has a fixture of its own (`fixture-stdio-cli`, below), `step-executes` its
    // own shell plugin (`acme`, below).
    let rules: Vec<&str> = CHECKS
        .into_iter()
        .filter(|c| *c != "command-mode" && *c != "step-executes")
        .collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = rules
            .iter()
            .map(|rule| {
                scope.spawn(move || {
                    let sb = faults(rule);
                    let doc = sb.json(
                        &[
                            "plugin",
                            "verify",
                            "fixture-verify",
                            "--step",
                            STEP,
                            "--json",
                        ],
                        1,
                    );
                    (rule, doc)
                })
            })
            .collect();
        for handle in handles {
            let (rule, doc) = handle.join().expect("verify thread");
            assert_eq!(doc["ok"], false, "{rule}: {doc:#}");
            assert_eq!(
                failed(&doc),
                BTreeSet::from([rule.to_string()]),
                "breaking {rule} fails only its check: {doc:#}"
            );
        }
    });
}

#[test]
fn failures_say_what_the_plugin_did_and_what_it_should_do() {
    let cases = [
        ("cookie", "cookie", "exited with code 0; it must exit 2"),
        ("unknown-method", "unknown-method", "gets error -32601"),
        (
            "nested-calls",
            "nested-calls",
            "answered 'execute' before agent-env answered its own call 'host.settings'",
        ),
        ("shutdown", "shutdown", "exited with code 3; it must exit 0"),
        (
            "stdout-clean",
            "stdout-clean",
            "fixture-verify-faults: starting up",
        ),
        (
            "no-leftovers",
            "no-leftovers",
            "fixture-verify-faults --linger",
        ),
        (
            "cancel-request",
            "cancel-request",
            "a notification gets no answer",
        ),
    ];
    for (rule, check, needle) in cases {
        let doc = faults(rule).json(
            &[
                "plugin",
                "verify",
                "fixture-verify",
                "--step",
                STEP,
                "--json",
            ],
            1,
        );
        assert!(
            message(&doc, check).contains(needle),
            "{rule}: wanted {needle:?} in {doc:#}"
        );
    }
}

#[test]
fn a_plugin_that_dies_on_a_bad_line_skips_the_checks_it_can_no_longer_take() {
    let doc = faults("unparsable-request").json(
        &[
            "plugin",
            "verify",
            "fixture-verify",
            "--step",
            STEP,
            "--json",
        ],
        1,
    );
    let got = statuses(&doc);
    for check in ["cancel-request", "shutdown"] {
        assert!(
            got.contains(&(check.to_string(), "skipped".to_string())),
            "{check}: {doc:#}"
        );
    }
    // The step runs in a start of its own, which no bad line ends.
    for check in ["step-executes", "nested-calls"] {
        assert!(
            got.contains(&(check.to_string(), "passed".to_string())),
            "{check}: {doc:#}"
        );
    }
    assert!(message(&doc, "unparsable-request").contains("exited with code 4"));
}

#[test]
fn the_human_report_has_a_line_per_check_and_a_summary() {
    let out = faults("shutdown").run(&["plugin", "verify", "fixture-verify"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("Verifying fixture-verify 0.1.0 ("),
        "{text}"
    );
    assert!(text.contains("  FAIL  shutdown  "), "{text}");
    assert!(text.contains("  pass  cookie  "), "{text}");
    assert!(text.contains("  skip  step-executes  "), "{text}");
    assert!(text.contains("  skip  nested-calls  "), "{text}");
    assert!(
        text.contains("13 checks: 9 passed, 1 failed, 3 skipped"),
        "{text}"
    );
}

#[test]
fn a_folder_or_manifest_path_is_verified_without_installing_it() {
    let sb = Sandbox::new();
    let dir = sb.dir().join("work/mine");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = fixture("fixture-verify-faults");
    std::fs::write(
        dir.join("agent-env-plugin.toml"),
        format!(
            "{}\n[provides.task_steps]\nverify_step = \"VerifyStep\"\n",
            plugin_table("mine", "0.2.0", &format!("[\"{}\"]", exe.display()))
        ),
    )
    .unwrap();
    for target in ["mine", "./mine", "mine/agent-env-plugin.toml"] {
        // The fixture answers as version 0.1.0: the manifest check holds it to the manifest's.
        let doc = sb.json(&["plugin", "verify", target, "--json"], 1);
        assert_eq!(doc["package"], "mine", "{target}");
        assert_eq!(doc["version"], "0.2.0", "{target}");
        assert_eq!(failed(&doc), BTreeSet::from(["manifest".to_string()]));
        assert!(
            message(&doc, "manifest").contains(
                "the plugin answered initialize as version 0.1.0, but its manifest says version 0.2.0"
            ),
            "{doc:#}"
        );
    }
}

#[test]
fn an_unknown_package_and_a_bad_step_are_errors_that_say_what_to_give() {
    let sb = faults("");
    // agent-env's own package has no process to verify: said so, not "not installed".
    let out = sb.run(&["plugin", "verify", "agentenv-framework"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("agentenv-framework is agent-env itself"),
        "{err}"
    );
    let out = sb.run(&["plugin", "verify", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no installed plugin package named 'nope'") && err.contains("fixture-verify"),
        "{err}"
    );
    for bad in ["[1]", "{\"id\": \"x\"}", "{"] {
        let out = sb.run(&["plugin", "verify", "fixture-verify", "--step", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}: a bad value");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--step must be a JSON object"), "{bad}: {err}");
    }
}

/// A TMPDIR the scratch folder cannot be made in (a file here: the tests run as root, whom a
/// read-only folder does not stop) is named as TMPDIR, with what to do.
#[test]
fn a_tmpdir_that_cannot_hold_the_scratch_folder_is_named_with_what_to_do() {
    let mut sb = faults("");
    let tmp = sb.dir().join("not-a-folder");
    std::fs::write(&tmp, "").unwrap();
    sb.set("TMPDIR", tmp.to_str().unwrap());
    let out = sb.run(&["plugin", "verify", "fixture-verify", "--step", STEP]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "cannot make a scratch folder for the step's stores under {} (TMPDIR): ",
            tmp.display()
        )) && err.contains("; set TMPDIR to a folder you can write"),
        "{err}"
    );
}

#[test]
fn a_project_folder_is_told_to_be_added_first() {
    let sb = faults("");
    let project = sb.dir().join("agentenv-proj");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("go.mod"), "module example.com/agentenv-proj\n").unwrap();
    let out = sb.run(&["plugin", "verify", project.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        format!(
            "Error: {0} is a Go project, not an installed plugin or a folder holding agent-env-plugin.toml: install it with `agent-env plugin add {0}`, then verify it by its package name (`agent-env plugin verify NAME`)\n",
            project.display()
        )
    );
}

#[test]
fn a_missing_executable_is_an_error_naming_it_and_the_manifest() {
    let sb = Sandbox::new();
    sb.plugin_dir_manifest(
        "gone",
        &plugin_table("gone", "1.0", "[\"/nonexistent/agentenv-gone\"]"),
    );
    let out = sb.run(&["plugin", "verify", "gone"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/nonexistent/agentenv-gone") && err.contains("agent-env-plugin.toml"),
        "{err}"
    );
}

/// An answer and a manifest that name a contribution differently: the manifest's name fails with
/// the one the plugin gives, and what the plugin answers beyond its manifest is a warning (agent-env
/// never uses it).
#[test]
fn names_the_answer_and_the_manifest_give_differently_are_said() {
    let sb = Sandbox::new();
    let text = works_manifest().replace("echo_step = \"EchoStep\"", "echo_stepp = \"EchoStep\"");
    sb.plugin_dir_manifest("works", &text);
    let out = sb.run(&["plugin", "verify", "agentenv-fixture-works", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        message(&doc, "manifest").contains(
            "[provides.task_steps] echo_stepp: EchoStep is not provided by the plugin (it provides EchoStep as 'echo_step': make the two names the same)"
        ),
        "{doc:#}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the plugin answers [task_steps] image_ref (ImageRef), which its manifest does not declare, so agent-env never uses it"),
        "{stderr}"
    );
}

/// A manifest whose protocol range agent-env does not speak loads nowhere (`plugin add` refuses
/// it), though the plugin itself speaks agent-env's protocol: the manifest check says so, in the
/// words `plugin add` uses.
#[test]
fn a_protocol_range_the_host_cannot_speak_fails_the_manifest_check() {
    let sb = Sandbox::new();
    let text = works_manifest().replace("protocol = [1, 1]", "protocol = [2, 2]");
    sb.plugin_dir_manifest("works", &text);
    let doc = sb.json(&["plugin", "verify", "agentenv-fixture-works", "--json"], 1);
    assert_eq!(
        failed(&doc),
        BTreeSet::from(["manifest".to_string()]),
        "{doc:#}"
    );
    assert_eq!(
        message(&doc, "manifest"),
        "[plugin] protocol: needs agent-env protocol 2 (installed: 1), so plugin add refuses it; declare a range that includes protocol 1, which the plugin speaks"
    );
}

/// The registry finds a contribution by its name, so a manifest's wrong class label loads; verify
/// says it, as it does for a store class the answer does not give.
#[test]
fn a_class_label_the_answer_does_not_give_fails_the_manifest_check() {
    let sb = Sandbox::new();
    let text = works_manifest().replace(
        "store_roundtrip = \"StoreRoundTrip\"",
        "store_roundtrip = { class = \"RoundTripStore\" }",
    );
    sb.plugin_dir_manifest("works", &text);
    let doc = sb.json(&["plugin", "verify", "agentenv-fixture-works", "--json"], 1);
    assert_eq!(
        failed(&doc),
        BTreeSet::from(["manifest".to_string()]),
        "{doc:#}"
    );
    assert_eq!(
        message(&doc, "manifest"),
        "[provides.task_steps] store_roundtrip: the manifest declares the class RoundTripStore, but the initialize answer gives store_roundtrip as StoreRoundTrip; make the two the same"
    );
}

#[test]
fn the_sdk_fixture_passes_with_a_step_that_calls_the_host_stores() {
    let sb = Sandbox::new();
    let text = works_manifest();
    sb.plugin_dir_manifest("works", &text);
    let doc = sb.json(
        &[
            "plugin",
            "verify",
            "agentenv-fixture-works",
            "--step",
            r#"{"type": "store_roundtrip", "id": "r", "text": "hello"}"#,
            "--json",
        ],
        0,
    );
    assert_eq!(
        message(&doc, "step-executes"),
        "the step 'store_roundtrip' answered execute with a result (metadata: roundtrip)",
        "{doc:#}"
    );
    let nested = message(&doc, "nested-calls");
    assert!(
        nested.contains("host.store.object.put")
            && nested.ends_with("and took each answer by its id before it answered execute"),
        "{doc:#}"
    );
    // It provides the command `works`: started as that command starts it, the SDK speaks on fds 3
    // and 4.
    assert!(
        statuses(&doc).contains(&("command-mode".to_string(), "passed".to_string())),
        "{doc:#}"
    );
    assert_eq!(
        message(&doc, "command-mode"),
        "started in command mode as `agent-env works` starts it, it answered initialize and shutdown on fds 3 and 4, and once fd 3 closed, it exited 0"
    );
}

/// A sandbox with `fixture-stdio-cli` installed as `agentenv-oldgrader`: a hand-written plugin whose
/// command `oldgrader` speaks the protocol on stdin and stdout, not on fds 3 and 4.
fn stdio_only_cli() -> Sandbox {
    let mut sb = Sandbox::new();
    let exec = format!("[\"{}\"]", fixture("fixture-stdio-cli").display());
    let text = format!(
        "{}\n[provides.cli_plugins]\noldgrader = \"OldGrader\"\n",
        plugin_table("agentenv-oldgrader", "0.1.0", &exec)
    );
    sb.plugin_dir_manifest("oldgrader", &text);
    sb.set("AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT", "3");
    sb
}

/// The plugin keeps every rule over stdin and stdout, so only the command-mode start shows that its
/// command cannot run: the finding says where a command-mode plugin speaks the protocol.
#[test]
fn a_cli_plugin_that_speaks_only_stdin_and_stdout_fails_the_command_mode_check() {
    let sb = stdio_only_cli();
    let doc = sb.json(&["plugin", "verify", "agentenv-oldgrader", "--json"], 1);
    assert_eq!(
        failed(&doc),
        BTreeSet::from(["command-mode".to_string()]),
        "{doc:#}"
    );
    let said = message(&doc, "command-mode");
    assert!(
        said.starts_with(
            "started in command mode as `agent-env oldgrader` starts it, it exited with code 0 before answering 'initialize' on fd 4; "
        ),
        "{said}"
    );
    assert!(
        said.ends_with(
            "in command mode (a CLI command) a plugin speaks the protocol on file descriptors 3 and 4 \
             (AGENT_ENV_RPC_FDS=3,4), not on stdin and stdout, which are the terminal's: every SDK does \
             this by itself; a hand-written plugin must read requests from fd 3 and write answers to fd 4"
        ),
        "{said}"
    );
    let text = sb.stdout(&["plugin", "verify", "agentenv-oldgrader"], 1);
    assert!(text.contains("  FAIL  command-mode  "), "{text}");
}

/// `--step` with its own `timeout_seconds` is given that long, as a run gives it, not the host's
/// shorter call timeout.
#[test]
fn a_steps_own_timeout_is_its_limit_under_verify() {
    let mut sb = Sandbox::new();
    sb.plugin_dir_manifest("works", &works_manifest());
    sb.set("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "1");
    let doc = sb.json(
        &[
            "plugin",
            "verify",
            "agentenv-fixture-works",
            "--step",
            r#"{"type": "echo_step", "id": "slow", "sleep_seconds": 1.5, "timeout_seconds": 5}"#,
            "--json",
        ],
        0,
    );
    assert!(failed(&doc).is_empty(), "{doc:#}");
    assert!(
        statuses(&doc).contains(&("step-executes".to_string(), "passed".to_string())),
        "{doc:#}"
    );
}

/// A sandbox with `agentenv-acme` installed: a shell plugin that, as an SDK does, says on stderr that
/// it starts and each line it ignores (the junk `unparsable-request` sends on purpose), and whose task
/// steps crash (`acme_crash`: a line on stderr, then exit 7), fail (`acme_fail`: error -32020), answer
/// errors that break the protocol (`acme_bare`: -32020 without `data.kind`; `acme_nomethod`: -32601),
/// answer with a list after two lines on stderr (`acme_list`), hang after a line on stderr
/// (`acme_hang`) or succeed (`acme_ok`). With `--shutdown-fails` it says so on stderr and exits 3 once
/// stdin closes after `shutdown`.
fn acme(args: &str) -> Sandbox {
    let mut sb = Sandbox::new();
    let contribution = |name: &str, class: &str| {
        format!(
            r#"{{"group":"task_steps","name":"{name}","type":"{name}","class":"{class}","methods":["execute","from_dict"]}}"#
        )
    };
    let result = format!(
        r#"{{"protocol":1,"plugin":{{"name":"agentenv-acme","version":"1.0"}},"contributions":[{},{},{},{},{},{},{}],"stores":[]}}"#,
        contribution("acme_crash", "AcmeCrash"),
        contribution("acme_fail", "AcmeFail"),
        contribution("acme_bare", "AcmeBare"),
        contribution("acme_nomethod", "AcmeNoMethod"),
        contribution("acme_list", "AcmeList"),
        contribution("acme_hang", "AcmeHang"),
        contribution("acme_ok", "AcmeOk"),
    );
    let script = sb.script(
        "acme.sh",
        &format!(
            r#"if [ "$AGENT_ENV_PLUGIN" != 1 ]; then echo "acme is an agent-env plugin" >&2; exit 2; fi
echo "acme: starting up" >&2
shut=0
while IFS= read -r line; do
  case "$line" in
    '{{'*'}}') ;;
    *) echo "acme: ignored a line on the protocol input that is not a JSON-RPC message: '$line'" >&2; continue ;;
  esac
  case "$line" in *'"method":"$/'*) continue ;; esac
  case "$line" in *'"id":'*) ;; *) continue ;; esac
  rest=${{line#*\"id\":}}
  id=${{rest%%[!0-9]*}}
  case "$line" in
    *'"method":"initialize"'*) printf '{{"jsonrpc":"2.0","id":%s,"result":%s}}\n' "$id" '{result}' ;;
    *'"method":"shutdown"'*) shut=1; printf '{{"jsonrpc":"2.0","id":%s,"result":null}}\n' "$id" ;;
    *'"method":"execute"'*'"type":"acme_crash"'*) echo "acme: about to die" >&2; exit 7 ;;
    *'"method":"execute"'*'"type":"acme_fail"'*) printf '{{"jsonrpc":"2.0","id":%s,"error":{{"code":-32020,"message":"greeting failed","data":{{"kind":"step-failed","error_type":"ValueError","message":"greeting failed"}}}}}}\n' "$id" ;;
    *'"method":"execute"'*'"type":"acme_bare"'*) printf '{{"jsonrpc":"2.0","id":%s,"error":{{"code":-32020,"message":"bare"}}}}\n' "$id" ;;
    *'"method":"execute"'*'"type":"acme_nomethod"'*) printf '{{"jsonrpc":"2.0","id":%s,"error":{{"code":-32601,"message":"no such method"}}}}\n' "$id" ;;
    *'"method":"execute"'*'"type":"acme_list"'*) echo "acme: scoring" >&2; echo "acme: no score, answering the list of marks" >&2; printf '{{"jsonrpc":"2.0","id":%s,"result":[1,2]}}\n' "$id" ;;
    *'"method":"execute"'*'"type":"acme_hang"'*) echo "acme: waiting for the grader" >&2; while IFS= read -r _; do :; done; exit 0 ;;
    *'"method":"execute"'*) printf '{{"jsonrpc":"2.0","id":%s,"result":{{"metadata":{{"greeted":true}}}}}}\n' "$id" ;;
    *) printf '{{"jsonrpc":"2.0","id":%s,"error":{{"code":-32601,"message":"no such method"}}}}\n' "$id" ;;
  esac
done
if [ "$shut" = 1 ] && [ "$1" = --shutdown-fails ]; then echo "acme: closing down" >&2; exit 3; fi
"#
        ),
    );
    let exec = format!("[\"/bin/sh\", \"{}\"{args}]", script.display());
    let text = format!(
        "{}\n[provides.task_steps]\nacme_crash = \"AcmeCrash\"\nacme_fail = \"AcmeFail\"\nacme_bare = \"AcmeBare\"\nacme_nomethod = \"AcmeNoMethod\"\nacme_list = \"AcmeList\"\nacme_hang = \"AcmeHang\"\nacme_ok = \"AcmeOk\"\n",
        plugin_table("agentenv-acme", "1.0", &exec)
    );
    sb.plugin_dir_manifest("acme", &text);
    sb.set("AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT", "3")
        .set("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "3");
    sb
}

fn verify_step(sb: &Sandbox, step: &str, code: i32) -> Value {
    sb.json(
        &[
            "plugin",
            "verify",
            "agentenv-acme",
            "--step",
            step,
            "--json",
        ],
        code,
    )
}

/// The step given with `--step` is a check of its own, run in a start of its own: a crash fails it
/// (and not `nested-calls`, which is about the step's calls to agent-env), quoting only what the
/// plugin wrote while the step ran, not its complaints about the junk an earlier check sent.
#[test]
fn a_step_that_crashes_fails_step_executes_with_its_own_stderr() {
    let sb = acme("");
    let doc = verify_step(&sb, r#"{"id": "c", "type": "acme_crash"}"#, 1);
    assert_eq!(
        failed(&doc),
        BTreeSet::from(["step-executes".to_string()]),
        "{doc:#}"
    );
    assert_eq!(
        message(&doc, "step-executes"),
        "while running the step 'acme_crash', it exited with code 7 before answering 'execute' (stderr: acme: about to die)"
    );
    assert_eq!(
        message(&doc, "nested-calls"),
        "the step 'acme_crash' made no call to agent-env; give --step a step that calls host.* to check its calls"
    );
    // The crash ended only the step's own start: the session's checks all ran.
    for check in [
        "unparsable-request",
        "cancel-request",
        "shutdown",
        "stdin-eof",
    ] {
        assert!(
            statuses(&doc).contains(&(check.to_string(), "passed".to_string())),
            "{check}: {doc:#}"
        );
    }
    let text = sb.stdout(
        &[
            "plugin",
            "verify",
            "agentenv-acme",
            "--step",
            r#"{"id": "c", "type": "acme_crash"}"#,
        ],
        1,
    );
    assert!(text.contains("  FAIL  step-executes  "), "{text}");
    assert!(!text.contains("ignored a line"), "{text}");
}

/// A failed step quotes what its own process wrote on stderr while the step ran, up to the moment it
/// failed (here, answered with a list), in its message and in the report's closing excerpt, which
/// names the check: not what the plugin wrote as it started, nor what a later run wrote.
#[test]
fn a_failed_step_quotes_what_its_process_wrote_while_the_step_ran() {
    let sb = acme("");
    let step = r#"{"id": "l", "type": "acme_list"}"#;
    let doc = verify_step(&sb, step, 1);
    assert_eq!(
        message(&doc, "step-executes"),
        "the step 'acme_list' answered execute with [1,2], but the result must be an object, and it is an array; a step \
         answers {\"metadata\": {…}} (stderr: acme: scoring | acme: no score, answering the list of marks)"
    );
    assert_eq!(
        doc["stderr_tail"],
        json!([
            "acme: scoring",
            "acme: no score, answering the list of marks"
        ]),
        "{doc:#}"
    );
    let text = sb.stdout(&["plugin", "verify", "agentenv-acme", "--step", step], 1);
    assert!(
        text.ends_with(
            "Its stderr during step-executes ended with:\n  | acme: scoring\n  | acme: no score, answering the list of marks\n"
        ),
        "{text}"
    );
    assert!(!text.contains("starting up"), "{text}");
    // A crash: the line its process wrote before it exited.
    let doc = verify_step(&sb, r#"{"id": "c", "type": "acme_crash"}"#, 1);
    assert_eq!(doc["stderr_tail"], json!(["acme: about to die"]), "{doc:#}");
}

/// A step that hangs says how long it was given, what set that limit and how to give a step that is
/// slow by design more (`timeout_seconds` in `--step`, as a task gives it), and quotes what its
/// process wrote on stderr before the wait ran out.
#[test]
fn a_step_that_hangs_says_its_limit_what_sets_it_and_what_it_wrote() {
    let mut sb = acme("");
    sb.set("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "1");
    let doc = verify_step(&sb, r#"{"id": "h", "type": "acme_hang"}"#, 1);
    assert_eq!(
        failed(&doc),
        BTreeSet::from(["step-executes".to_string()]),
        "{doc:#}"
    );
    assert_eq!(
        message(&doc, "step-executes"),
        "while running the step 'acme_hang', it did not answer 'execute' within 1.0 s (the host's call timeout, \
         AGENT_ENV_PLUGIN_CALL_TIMEOUT, which a step without timeout_seconds gets); give a step that is slow by design \
         a limit of its own with \"timeout_seconds\" in --step, as a task does, or raise AGENT_ENV_PLUGIN_CALL_TIMEOUT \
         (stderr: acme: waiting for the grader)"
    );
    assert_eq!(
        doc["stderr_tail"],
        json!(["acme: waiting for the grader"]),
        "{doc:#}"
    );
    let doc = verify_step(
        &sb,
        r#"{"id": "h", "type": "acme_hang", "timeout_seconds": 0.5}"#,
        1,
    );
    assert_eq!(
        message(&doc, "step-executes"),
        "while running the step 'acme_hang', it did not answer 'execute' within 2.5 s (its timeout_seconds, 0.5 s, and \
         2 s for its answer); raise timeout_seconds in --step if it is just slow (stderr: acme: waiting for the grader)"
    );
}

/// A `--step` whose `timeout_seconds` no step can be given (0, below 0, a string) is refused as a bad
/// value, by the rule a run holds a step to, before the plugin starts: never waited out with the host's
/// call timeout, as if the step gave none.
#[test]
fn a_steps_timeout_that_is_no_number_of_seconds_above_0_is_refused_before_the_plugin_starts() {
    let sb = acme("");
    for bad in ["0", "-1", "\"3\""] {
        let step = format!(r#"{{"id": "h", "type": "acme_hang", "timeout_seconds": {bad}}}"#);
        let out = sb.run(&["plugin", "verify", "agentenv-acme", "--step", &step]);
        assert_eq!(out.status.code(), Some(2), "{bad}: a bad value");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "--step: 'timeout_seconds' must be a number of seconds above 0 and below 1000000000, got {bad}: give \
                 the step's limit in seconds, e.g. \"timeout_seconds\": 30, or leave it out for the host's call \
                 timeout (AGENT_ENV_PLUGIN_CALL_TIMEOUT)"
            )),
            "{bad}: {err}"
        );
        // Refused before the plugin started: nothing was verified (a wait for the call timeout would
        // have printed the checks and ended with the step's).
        assert!(out.stdout.is_empty(), "{bad}: nothing was verified");
    }
}

/// A plugin that never answers `initialize` is told how long it had, what sets that limit and how to
/// give it longer, with what it wrote on stderr meanwhile.
#[test]
fn a_handshake_that_hangs_says_its_limit_and_what_sets_it() {
    let mut sb = Sandbox::new();
    sb.plugin_dir_manifest(
        "hang",
        &fixture_manifest("agentenv-hang", "fixture-hang-handshake", ""),
    );
    sb.set("AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT", "1");
    let doc = sb.json(&["plugin", "verify", "agentenv-hang", "--json"], 1);
    assert_eq!(
        message(&doc, "initialize"),
        "it did not answer 'initialize' within 1.0 s (the host's handshake timeout: raise \
         AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT if it is just slow) (stderr: fixture-hang-handshake: thinking very hard \
         before the handshake)"
    );
    assert_eq!(
        doc["stderr_tail"],
        json!(["fixture-hang-handshake: thinking very hard before the handshake"]),
        "{doc:#}"
    );
}

/// A step that answers with an error kept the protocol, but is not what the author asked to see:
/// a warning of its own (exit 0, as verify's empty stores fail any step that needs stored data), not
/// a skipped nested-calls check.
#[test]
fn a_step_that_fails_is_a_step_executes_warning() {
    let sb = acme("");
    let step = r#"{"id": "g", "type": "acme_fail"}"#;
    let doc = verify_step(&sb, step, 0);
    assert!(failed(&doc).is_empty(), "{doc:#}");
    assert!(
        statuses(&doc).contains(&("step-executes".to_string(), "warned".to_string())),
        "{doc:#}"
    );
    assert_eq!(doc["warned"], 1, "{doc:#}");
    assert_eq!(
        message(&doc, "step-executes"),
        "the step 'acme_fail' answered execute with error -32020 (greeting failed): in a run its task fails; verify gives a step fresh, empty stores, so a step that needs stored data fails here, and one that succeeds passes"
    );
    assert!(
        statuses(&doc).contains(&("nested-calls".to_string(), "skipped".to_string())),
        "{doc:#}"
    );
    let text = sb.stdout(&["plugin", "verify", "agentenv-acme", "--step", step], 0);
    assert!(text.contains("  warn  step-executes  "), "{text}");
    assert!(
        text.contains("13 checks: 10 passed, 0 failed, 2 skipped, 1 warned"),
        "{text}"
    );
    let doc = verify_step(&sb, r#"{"id": "k", "type": "acme_ok"}"#, 0);
    assert_eq!(
        message(&doc, "step-executes"),
        "the step 'acme_ok' answered execute with a result (metadata: greeted)"
    );
    assert_eq!(doc["warned"], 0, "{doc:#}");
    // An error answer that breaks the protocol is no step failing: it fails the check.
    let doc = verify_step(&sb, r#"{"id": "b", "type": "acme_bare"}"#, 1);
    assert!(
        message(&doc, "step-executes").contains("but its data has no kind"),
        "{doc:#}"
    );
    let doc = verify_step(&sb, r#"{"id": "m", "type": "acme_nomethod"}"#, 1);
    assert!(
        message(&doc, "step-executes").contains("-32601 is JSON-RPC's own error"),
        "{doc:#}"
    );
}

/// A check's stderr excerpt holds what the plugin wrote during it: the lines it wrote about the
/// junk `unparsable-request` sent are not quoted as why it exited 3 after shutdown.
#[test]
fn a_failed_checks_stderr_is_what_the_plugin_wrote_during_it() {
    let sb = acme(", \"--shutdown-fails\"");
    let doc = sb.json(&["plugin", "verify", "agentenv-acme", "--json"], 1);
    assert_eq!(
        failed(&doc),
        BTreeSet::from(["shutdown".to_string()]),
        "{doc:#}"
    );
    assert_eq!(
        message(&doc, "shutdown"),
        "answered shutdown and stdin closed, it exited with code 3; it must exit 0 (stderr: acme: closing down)"
    );
}

#[test]
fn an_argument_that_works_only_from_the_manifests_folder_is_not_started_even_there() {
    let sb = Sandbox::new();
    let folder = sb.dir().join("relative-script");
    std::fs::create_dir_all(&folder).unwrap();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/install/folder-plugin");
    std::fs::copy(fixture.join("plugin.sh"), folder.join("plugin.sh")).unwrap();
    std::fs::write(
        folder.join("agent-env-plugin.toml"),
        "[plugin]\nname = \"agentenv-folder-demo\"\nversion = \"0.1.0\"\nexec = [\"/bin/sh\", \"plugin.sh\"]\nprotocol = [1, 1]\n[provides.task_steps]\ndemo_step = \"DemoStep\"\n",
    )
    .unwrap();
    // From its own folder the right file would run, but from anywhere else another: it is held to
    // what `plugin add` holds it to, and the manifest check says what to write instead.
    let out = sb
        .command(&["plugin", "verify", ".", "--json"])
        .current_dir(&folder)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        failed(&doc),
        BTreeSet::from(["manifest".to_string()]),
        "{doc:#}"
    );
    assert_eq!(doc["skipped"], 12, "{doc:#}");
    let said = message(&doc, "manifest");
    assert!(
        said.contains(&format!(
            "exec argument 'plugin.sh' in {} names a file beside the manifest, but arguments after the first are passed as written",
            folder.join("agent-env-plugin.toml").display()
        )),
        "{said}"
    );
    assert!(
        said.contains("make that file the first element, by its path relative to the manifest (exec = [\"./plugin.sh\"], a script with a #! line, made executable)"),
        "{said}"
    );
}

/// A plugin written by hand in shell, as a plugin author reading the protocol page writes one: it
/// answers a line that is not JSON with -32700 and a JSON array with -32600, as §8 gives them.
/// `--codes same` answers both with -32700; `--stray-line` prints a line on stdout before it answers
/// `shutdown` (which only the whole-session run sends);
/// `--speaks 2-3` refuses the handshake saying it speaks protocol 2-3; `--glued` writes its answer to
/// `initialize` and a `$/log` after it on one line, without the newline between; `--string-id` echoes
/// `initialize`'s id as a string (`"1"` for `1`), `--spaced-string-id` as one with a space before it
/// (`" 1"`); `--float-id` writes it as a float (`1.0`), an id no answer can be matched by.
fn by_hand(args: &str) -> Sandbox {
    let mut sb = Sandbox::new();
    let result = r#"{"protocol":1,"plugin":{"name":"agentenv-by-hand","version":"1.0"},"contributions":[],"stores":[]}"#;
    let script = sb.script(
        "by-hand.sh",
        &format!(
            r#"if [ "$AGENT_ENV_PLUGIN" != 1 ]; then echo "by-hand is an agent-env plugin" >&2; exit 2; fi
codes=own; speaks=1; stray=0; malformed=0; glued=0; string_id=0; spaced_id=0; float_id=0
while [ $# -gt 0 ]; do
  case "$1" in
    --codes) codes=$2; shift ;;
    --speaks) speaks=$2; shift ;;
    --stray-line) stray=1 ;;
    --malformed-line) malformed=1 ;;
    --glued) glued=1 ;;
    --string-id) string_id=1 ;;
    --spaced-string-id) spaced_id=1 ;;
    --float-id) float_id=1 ;;
  esac
  shift
done
array=-32600; [ "$codes" = same ] && array=-32700
while IFS= read -r line; do
  case "$line" in
    '['*']') printf '{{"jsonrpc":"2.0","id":null,"error":{{"code":%s,"message":"not a request"}}}}\n' "$array"; continue ;;
    '{{'*'}}') ;;
    *) printf '{{"jsonrpc":"2.0","id":null,"error":{{"code":-32700,"message":"not JSON"}}}}\n'; continue ;;
  esac
  case "$line" in *'"method":"$/'*) continue ;; esac
  rest=${{line#*\"id\":}}
  id=${{rest%%[!0-9]*}}
  case "$line" in
    *'"method":"initialize"'*)
      if [ "$string_id" = 1 ]; then printf '{{"jsonrpc":"2.0","id":"%s","result":%s}}\n' "$id" '{result}'
      elif [ "$spaced_id" = 1 ]; then printf '{{"jsonrpc":"2.0","id":" %s","result":%s}}\n' "$id" '{result}'
      elif [ "$float_id" = 1 ]; then printf '{{"jsonrpc":"2.0","id":%s.0,"result":%s}}\n' "$id" '{result}'
      elif [ "$glued" = 1 ]; then printf '{{"jsonrpc":"2.0","id":%s,"result":%s}}{{"jsonrpc":"2.0","method":"$/log","params":{{"level":"info","message":"ready"}}}}\n' "$id" '{result}'
      elif [ "$speaks" = 1 ]; then printf '{{"jsonrpc":"2.0","id":%s,"result":%s}}\n' "$id" '{result}'
      else printf '{{"jsonrpc":"2.0","id":%s,"error":{{"code":-32010,"message":"no protocol in common","data":{{"kind":"protocol-mismatch","supported":{{"min":%s,"max":%s}},"requested":{{"min":1,"max":1}}}}}}}}\n' "$id" "${{speaks%-*}}" "${{speaks#*-}}"; fi ;;
    *'"method":"shutdown"'*) [ "$stray" = 1 ] && echo "by-hand: closing down"
      [ "$malformed" = 1 ] && printf '{{"id":%s,"result":null}}\n' "$id"
      printf '{{"jsonrpc":"2.0","id":%s,"result":null}}\n' "$id" ;;
    *) printf '{{"jsonrpc":"2.0","id":%s,"error":{{"code":-32601,"message":"no such method"}}}}\n' "$id" ;;
  esac
done
"#
        ),
    );
    let exec = format!("[\"/bin/sh\", \"{}\"{args}]", script.display());
    sb.plugin_dir_manifest("by-hand", &plugin_table("agentenv-by-hand", "1.0", &exec));
    sb.set("AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT", "3")
        .set("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "3");
    sb
}

fn finding<'a>(doc: &'a Value, check: &str) -> &'a Value {
    doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["check"] == check)
        .unwrap_or_else(|| panic!("no finding {check} in {doc:#}"))
}

/// Each line `unparsable-request` sends is told with the code it got, held to the one §8 gives it:
/// the right ones pass, and -32700 for the JSON array is a warning naming -32600.
#[test]
fn each_unparsable_line_is_told_with_its_own_code_against_the_one_it_gets() {
    let doc = by_hand("").json(&["plugin", "verify", "agentenv-by-hand", "--json"], 0);
    let unparsable = finding(&doc, "unparsable-request");
    assert_eq!(unparsable["status"], "passed", "{doc:#}");
    assert_eq!(
        unparsable["message"],
        "kept answering after a cut-off request and a JSON array (the cut-off request got error -32700, the JSON array got error -32600)"
    );

    let doc = by_hand(", \"--codes\", \"same\"")
        .json(&["plugin", "verify", "agentenv-by-hand", "--json"], 0);
    let unparsable = finding(&doc, "unparsable-request");
    assert_eq!(unparsable["status"], "warned", "{doc:#}");
    let said = unparsable["message"].as_str().unwrap();
    assert!(
        said.starts_with(
            "kept answering after a cut-off request and a JSON array, but the JSON array got error -32700 (not a request) where it gets -32600 (invalid-request); \
             a plugin answers a line that is not JSON with error -32700 (parse-error) and JSON that is not a request with error -32600 (invalid-request)"
        ),
        "{said}"
    );
}

/// One line on stdout is one line that is not a protocol message, not "1 line … not protocol messages".
#[test]
fn one_stray_line_on_stdout_is_said_in_the_singular() {
    let doc =
        by_hand(", \"--stray-line\"").json(&["plugin", "verify", "agentenv-by-hand", "--json"], 1);
    assert_eq!(
        message(&doc, "stdout-clean"),
        "wrote 1 line on stdout that is not a protocol message: 'by-hand: closing down'; stdout carries protocol messages \
         only (point fd 1 at stderr, as the SDKs' serve does; with an SDK, look for output written before serve is called, \
         at import or in an init function)"
    );
}

/// A line meant as a protocol message that is none (no "jsonrpc") is told its defect by
/// `stdout-clean`, not to point fd 1 at stderr.
#[test]
fn a_malformed_line_on_stdout_is_told_its_defect_not_to_go_to_stderr() {
    let doc = by_hand(", \"--malformed-line\"")
        .json(&["plugin", "verify", "agentenv-by-hand", "--json"], 1);
    let said = message(&doc, "stdout-clean");
    assert!(
        said.starts_with(
            "wrote 1 line on stdout meant as a protocol message but malformed: '{\"id\":"
        ),
        "{said}"
    );
    assert!(
        said.ends_with("': it lacks \"jsonrpc\":\"2.0\": every message must carry it"),
        "{said}"
    );
    assert!(!said.contains("stderr"), "{said}");
}

/// An answer to `initialize` run together with the next message on one line fails the handshake at
/// once, naming the defect, as `plugin add` does, rather than waiting out the handshake timeout.
#[test]
fn an_initialize_answer_glued_to_the_next_message_fails_at_once_naming_the_defect() {
    let sb = by_hand(", \"--glued\"");
    let doc = sb.json(&["plugin", "verify", "agentenv-by-hand", "--json"], 1);
    let said = message(&doc, "initialize");
    assert!(
        said.contains("it gave a bad answer to 'initialize': '{\"jsonrpc\":\"2.0\",\"id\":1,"),
        "{said}"
    );
    assert!(
        said.ends_with("is no valid message: it is two or more messages on one line: end each message with \\n"),
        "{said}"
    );
    assert!(!said.contains("within"), "{said}");
}

/// An answer to `initialize` under its id written as a string (`"1"` for `1`) fails the handshake at
/// once, naming the defect, as `plugin add` does, rather than waiting out the handshake timeout.
#[test]
fn an_initialize_answer_under_its_id_as_a_string_fails_at_once_naming_the_defect() {
    let sb = by_hand(", \"--string-id\"");
    let doc = sb.json(&["plugin", "verify", "agentenv-by-hand", "--json"], 1);
    let said = message(&doc, "initialize");
    assert!(
        said.contains(
            "it gave a bad answer to 'initialize': it answered with the id \"1\" (a string), where the request's id was the number 1: echo the id as sent"
        ),
        "{said}"
    );
    assert!(!said.contains("within"), "{said}");
}

/// An answer to `initialize` whose id cannot be read (`1.0`, neither an integer nor a string) fails
/// the handshake at once, naming the defect, as `plugin add` does, rather than waiting out the
/// handshake timeout: the kit makes one call at a time, so it answers that one.
#[test]
fn an_initialize_answer_under_an_unreadable_id_fails_at_once_naming_the_defect() {
    let sb = by_hand(", \"--float-id\"");
    let doc = sb.json(&["plugin", "verify", "agentenv-by-hand", "--json"], 1);
    let said = message(&doc, "initialize");
    assert!(
        said.starts_with("it gave a bad answer to 'initialize': '{\"jsonrpc\":\"2.0\",\"id\":1.0,"),
        "{said}"
    );
    assert!(
        said.ends_with("is no valid message: its id 1.0 is not an integer or a string"),
        "{said}"
    );
    assert!(!said.contains("within"), "{said}");
}

/// An answer to `initialize` under a string id that is not the request's number as written (`" 1"`
/// for `1`) is an answer under a wrong id, not said to be `"1"`: the handshake waits for its answer.
#[test]
fn an_initialize_answer_under_another_string_than_its_number_is_not_taken_for_it() {
    let sb = by_hand(", \"--spaced-string-id\"");
    let doc = sb.json(&["plugin", "verify", "agentenv-by-hand", "--json"], 1);
    let said = message(&doc, "initialize");
    assert!(
        said.starts_with("it did not answer 'initialize' within 3.0 s"),
        "{said}"
    );
    assert!(!said.contains("(a string)"), "{said}");
}

/// A manifest saying protocol 1 of a process that refuses the handshake saying it speaks 2-3: the
/// manifest check fails saying the two disagree and which to fix, where it was skipped.
#[test]
fn a_process_speaking_another_protocol_than_its_manifest_says_fails_the_manifest_check() {
    let doc = by_hand(", \"--speaks\", \"2-3\"")
        .json(&["plugin", "verify", "agentenv-by-hand", "--json"], 1);
    assert_eq!(
        failed(&doc),
        BTreeSet::from(["initialize".to_string(), "manifest".to_string()]),
        "{doc:#}"
    );
    let said = message(&doc, "manifest");
    assert!(
        said.starts_with(
            "[plugin] protocol: the manifest says the plugin speaks protocol 1, but its process answered initialize that it speaks 2-3; \
             agent-env speaks 1 and goes by the manifest, so fix the plugin: make it speak protocol 1"
        ),
        "{said}"
    );
}
