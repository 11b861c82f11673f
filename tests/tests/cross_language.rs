//! The cross-language suite: the built `agent-env` binary against the three example plugins, each in its
//! own language and process: OpenCiv3 (Rust, `plugin-sdk-rs`), the grader (Python, `plugin-sdk-py`,
//! installed with pip) and go-words (Go, standard library only), plus a Rust fixture plugin; and, one
//! language at a time, the fixtures that keep a step's host handle past its call. The suite
//! builds and installs them itself (see `agent_env_crosstests::setup`), so `cargo test --workspace`
//! runs it from a fresh clone with cargo, python3 (venv, pip) and go installed.

use agent_env_crosstests::sandbox::Sandbox;
use serde_json::Value;

/// package -> the contributions it must report `active`, as `(agent_env.<group>, name)`.
const EXPECTED: &[(&str, &[(&str, &str)])] = &[
    (
        "agentenv-openciv3",
        &[
            ("agent_env.task_steps", "openciv3_match"),
            ("agent_env.task_steps", "openciv3_await_game"),
            ("agent_env.task_steps", "save_env_recording"),
            ("agent_env.cli_plugins", "openciv3"),
            ("agent_env.bundles", "openciv3"),
        ],
    ),
    (
        "agentenv-grader",
        &[
            ("agent_env.task_steps", "grade_keywords"),
            ("agent_env.cli_plugins", "grader"),
        ],
    ),
    (
        "agentenv-go-words",
        &[
            ("agent_env.task_steps", "go_word_count"),
            ("agent_env.cli_plugins", "go-words"),
        ],
    ),
];

fn package<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["plugins"]
        .as_array()
        .and_then(|plugins| plugins.iter().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("{name} is not in the report: {report:#}"))
}

#[test]
fn plugin_list_and_check_show_the_rust_python_and_go_plugins_active() {
    let sandbox = Sandbox::new();
    let (ran, report) = sandbox.run_json(&["plugin", "list", "--json"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    assert_eq!(report["format_version"], 1);
    assert_eq!(report["loaded"], true, "plugin list started the plugins");
    for (name, contributions) in EXPECTED {
        let found = package(&report, name);
        assert_eq!(found["version"], "0.1.0", "{found:#}");
        let listed = found["contributions"].as_array().expect("contributions");
        for (group, contribution) in *contributions {
            let row = listed
                .iter()
                .find(|c| c["group"] == *group && c["name"] == *contribution)
                .unwrap_or_else(|| panic!("{name} lacks {group} {contribution}: {found:#}"));
            assert_eq!(
                row["status"], "active",
                "{name} {group} {contribution}: {row:#}"
            );
        }
        for row in listed {
            assert_eq!(row["status"], "active", "{name}: {row:#}");
        }
    }
    let check = sandbox.run(&["plugin", "check"]);
    assert_eq!(check.code, 0, "{}", check.both());
    let (check_json, checked) = sandbox.run_json(&["plugin", "check", "--json"]);
    assert_eq!(check_json.code, 0, "{}", check_json.both());
    for (name, _) in EXPECTED {
        package(&checked, name);
    }
}

/// Rust writes an object, Go reads it and stores its word count, Python reads the count and grades it:
/// every hand-over goes through the host's object store, by `host.store.object.*` calls.
#[test]
fn a_bundle_passes_data_from_a_rust_step_to_a_go_step_to_a_python_step_through_the_object_store() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "project/chain/tasks/chain.json",
        r#"[
  {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
  {"id": "write", "type": "store_roundtrip", "text": "one two three four five six seven eight nine"},
  {"id": "count", "type": "go_word_count", "source_key": "roundtrip.txt", "min_words": 5,
   "store_key": "counts/chain.json"},
  {"id": "grade", "type": "grade_keywords", "source_key": "counts/chain.json",
   "keywords": ["\"words\":9", "object 'roundtrip.txt'"], "verifier_id": "chain"}
]"#,
    );
    let ran = sandbox.run(&["run", "./chain"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    for (n, id, kind) in [
        (2, "write", "store_roundtrip"),
        (3, "count", "go_word_count"),
        (4, "grade", "grade_keywords"),
    ] {
        let line = format!("[tasks/chain.json] step {n}/4 {id} ({kind})\n");
        assert!(ran.stdout.contains(&line), "no {line:?} in {}", ran.both());
    }
    let summary = ran
        .stdout
        .lines()
        .find(|l| l.starts_with("  tasks/chain.json v1: "))
        .unwrap_or_else(|| panic!("no summary line: {}", ran.both()));
    // The summary names a verification by the step that wrote it: the Python grader's.
    assert!(
        summary.starts_with("  tasks/chain.json v1: passed ("),
        "{summary}"
    );
    assert!(summary.contains("grade: 1"), "{summary}");
    assert!(
        ran.stdout.ends_with("\nTore down 1 sandbox.\n"),
        "{}",
        ran.both()
    );
    assert!(sandbox.sandboxes_left().is_empty());

    // The objects each language left in the local object store.
    let objects = sandbox.state_root().join("object_store");
    let written =
        std::fs::read_to_string(objects.join("roundtrip.txt")).expect("the Rust step's object");
    assert_eq!(written, "one two three four five six seven eight nine");
    let counted: Value = serde_json::from_str(
        &std::fs::read_to_string(objects.join("counts/chain.json")).expect("the Go step's object"),
    )
    .expect("the Go step stored JSON");
    assert_eq!(counted["words"], 9, "{counted}");
    assert_eq!(counted["source"], "object 'roundtrip.txt'", "{counted}");

    // The run's records.
    let instances = sandbox.docs("task_instances");
    assert_eq!(instances.len(), 1, "{instances:#?}");
    let instance = &instances[0];
    assert_eq!(instance["status"], "completed", "{instance:#}");
    let metadata = &instance["context"]["metadata"];
    assert_eq!(
        metadata["roundtrip"]["back"],
        "one two three four five six seven eight nine"
    );
    assert_eq!(metadata["word_counts"]["count"]["words"], 9, "{metadata:#}");
    let go = &metadata["verifications"]["count"];
    assert_eq!(go["score"], 1.0, "{go:#}");
    assert_eq!(
        go["results"][0]["justification"],
        "object 'roundtrip.txt' has 9 words; at least 5 expected"
    );
    let python = &metadata["verifications"]["chain"];
    assert_eq!(python["score"], 1.0, "{python:#}");
    let rows = python["results"].as_array().expect("rows");
    assert_eq!(rows.len(), 2, "{python:#}");
    assert_eq!(
        rows[0]["justification"],
        "'\"words\":9' appears once in object 'counts/chain.json'"
    );
    assert!(rows.iter().all(|r| r["result"] == "pass"), "{python:#}");
}

fn kit_passes(sandbox: &Sandbox, impl_name: &str, root: &std::path::Path, expect_passed: usize) {
    let (ran, report) = sandbox.run_json(&["store", "check", "object", "--json"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    assert_eq!(report["impl"], impl_name, "{report:#}");
    assert_eq!(report["passed"], true, "{report:#}");
    let cases = report["cases"].as_array().expect("the kit's cases");
    let passed = cases.iter().filter(|c| c["outcome"] == "passed").count();
    assert_eq!(passed, expect_passed, "{report:#}");
    for case in cases {
        assert!(
            case["outcome"] == "passed" || case["outcome"] == "skipped",
            "{case:#}"
        );
    }
    assert!(
        std::fs::read_dir(root)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false),
        "the kit wrote nothing under {}",
        root.display()
    );
    let human = sandbox.run(&["store", "check", "object"]);
    assert_eq!(human.code, 0, "{}", human.both());
}

#[test]
fn the_object_kit_passes_against_the_openciv3_cas_store_selected_in_config() {
    let sandbox = Sandbox::new();
    let root = sandbox.path("cas");
    sandbox.config(&format!(
        "[stores.object]\nimpl = \"agentenv-openciv3:ContentAddressedObjectStore\"\nconfig = {{ root = \"{}\", bucket = \"openciv3\" }}\n",
        root.display()
    ));
    kit_passes(
        &sandbox,
        "agentenv-openciv3:ContentAddressedObjectStore",
        &root,
        27,
    );
    assert!(
        root.join("index.sqlite").is_file(),
        "no CAS index under {}",
        root.display()
    );
}

#[test]
fn the_object_kit_passes_against_the_python_folder_store_selected_in_config() {
    let sandbox = Sandbox::new();
    let root = sandbox.path("folder-store");
    sandbox.config(&format!(
        "[stores.object]\nimpl = \"agentenv-grader:FolderObjectStore\"\nconfig = {{ root = \"{}\", bucket = \"grades\" }}\n",
        root.display()
    ));
    kit_passes(&sandbox, "agentenv-grader:FolderObjectStore", &root, 27);
}

#[test]
fn the_object_kit_passes_against_the_go_file_store_selected_in_config() {
    let sandbox = Sandbox::new();
    let root = sandbox.path("go-store");
    sandbox.config(&format!(
        "[stores.object]\nimpl = \"agentenv-go-words:GoFileObjectStore\"\nconfig = {{ root = \"{}\", bucket = \"words\" }}\n",
        root.display()
    ));
    kit_passes(&sandbox, "agentenv-go-words:GoFileObjectStore", &root, 27);
}

/// A Python plugin that kills itself in the middle of its step.
const CRASHING_PLUGIN: &str = r#"import os
from agent_env_plugin import Plugin

plugin = Plugin("agentenv-py-crash", "0.1.0")

@plugin.task_step("py_crash", cls="PyCrash")
def py_crash(step, context, host):
    """Dies mid-step."""
    print("py-crash: dying in the middle of execute", flush=True)
    os.kill(os.getpid(), 9)

if __name__ == "__main__":
    plugin.serve()
"#;

#[test]
fn a_python_plugin_that_crashes_mid_bundle_fails_its_task_and_the_rust_and_go_steps_keep_working() {
    let sandbox = Sandbox::new();
    let script = sandbox.write("crash/py_crash.py", CRASHING_PLUGIN);
    sandbox.write(
        "plugins/agentenv-py-crash/agent-env-plugin.toml",
        &format!(
            "[plugin]\nname = \"agentenv-py-crash\"\nversion = \"0.1.0\"\nexec = [\"{}\", \"{}\"]\nprotocol = [1, 1]\n\n[provides.task_steps]\npy_crash = \"PyCrash\"\n",
            sandbox.built.venv.join("bin/python").display(),
            script.display()
        ),
    );
    sandbox.write(
        "project/mixed/tasks/a_crash.json",
        r#"[{"id": "bang", "type": "py_crash"},
            {"id": "after", "type": "go_word_count", "text": "never counted"}]"#,
    );
    sandbox.write(
        "project/mixed/tasks/b_fine.json",
        r#"[{"id": "write", "type": "store_roundtrip", "text": "still working after the crash"},
            {"id": "count", "type": "go_word_count", "source_key": "roundtrip.txt", "min_words": 4,
             "verifier_id": "words"}]"#,
    );
    let ran = sandbox.run(&["run", "./mixed"]);
    assert_eq!(ran.code, 1, "{}", ran.both());
    assert!(
        ran.stdout
            .contains("  tasks/a_crash.json v1: failed at step 'bang': PluginError: "),
        "{}",
        ran.both()
    );
    assert!(
        !ran.stdout.contains("step 2/2 after ("),
        "a step ran after the crash: {}",
        ran.both()
    );
    assert!(
        ran.stdout.contains("  tasks/b_fine.json v1: passed ("),
        "{}",
        ran.both()
    );
    // The crash's line ends with the plugin's last stderr line.
    assert!(
        ran.stdout
            .contains("its stderr's last line: 'py-crash: dying in the middle of execute'"),
        "{}",
        ran.both()
    );
    let instances = sandbox.docs("task_instances");
    let status = |task: &str| {
        instances
            .iter()
            .find(|i| i["instance_id"].as_str().unwrap_or("").contains(task))
            .map(|i| i["status"].clone())
            .unwrap_or_else(|| panic!("no instance of {task}: {instances:#?}"))
    };
    assert_eq!(status("a_crash"), "failed");
    assert_eq!(status("b_fine"), "completed");
}

/// `plugin verify` holds each example plugin, in its own language, to the protocol; a step that calls
/// the host's stores shows the nested calls of the Python and Go SDKs, and the Rust SDK's through the
/// SDK-built fixture.
#[test]
fn plugin_verify_passes_the_rust_python_and_go_example_plugins() {
    let sandbox = Sandbox::new();
    let cases: [(&str, Option<&str>, &str); 4] = [
        ("agentenv-openciv3", None, ""),
        (
            "agentenv-grader",
            Some(
                r#"{"type": "grade_keywords", "id": "g", "source_key": "missing.txt", "keywords": ["a"]}"#,
            ),
            "host.store.object.read",
        ),
        (
            "agentenv-go-words",
            Some(
                r#"{"type": "go_word_count", "id": "w", "text": "one two three", "store_key": "counts/w.json"}"#,
            ),
            "host.store.object.put",
        ),
        (
            "agentenv-fixture-works",
            Some(r#"{"type": "store_roundtrip", "id": "r", "text": "hello"}"#),
            "host.store.object.get",
        ),
    ];
    for (package, step, nested_method) in cases {
        let mut args = vec!["plugin", "verify", package, "--json"];
        if let Some(step) = step {
            args.extend(["--step", step]);
        }
        let (ran, doc) = sandbox.run_json(&args);
        assert_eq!(ran.code, 0, "{package}: {}", ran.both());
        assert_eq!(doc["ok"], true, "{package}: {doc:#}");
        let findings = doc["findings"].as_array().expect("findings");
        assert_eq!(findings.len(), 13, "{package}: {doc:#}");
        // The examples each provide a CLI command, so `command-mode` runs for each SDK; the fixture
        // is installed here with its task steps only.
        let has_commands = package != "agentenv-fixture-works";
        for finding in findings {
            let expected = match finding["check"].as_str() {
                Some("step-executes" | "nested-calls") if step.is_none() => "skipped",
                // The grader's step reads an object verify's empty stores do not hold: it answers
                // with an error, which is a warning.
                Some("step-executes") if package == "agentenv-grader" => "warned",
                Some("command-mode") if !has_commands => "skipped",
                _ => "passed",
            };
            assert_eq!(finding["status"], expected, "{package}: {finding:#}");
        }
        if step.is_some() {
            let nested = findings
                .iter()
                .find(|f| f["check"] == "nested-calls")
                .and_then(|f| f["message"].as_str())
                .unwrap_or("");
            assert!(nested.contains(nested_method), "{package}: {nested}");
        }
    }
}

/// What every SDK says when a host handle is used after the call it was given for has ended (the
/// call's id goes between the two parts).
const CALL_ENDED: (&str, &str) = (
    "host.store.object.put was not sent: the call ",
    " this host handle was given for has ended; a host handle is valid only while its call runs, so \
     call the host from inside the handler, not from a thread or value that outlives it",
);

/// The steps each kept-host fixture provides: `keep_host` puts `kept/<lang>-during.txt` with its own
/// handle and keeps the handle in a global; `use_kept_host` puts `kept/<lang>-after.txt` through it.
const KEPT_HOST_STEPS: &[(&str, &str)] =
    &[("keep_host", "KeepHost"), ("use_kept_host", "UseKeptHost")];

/// Runs `keep_host` then `use_kept_host` of the one kept-host plugin installed in `sandbox` (twice:
/// for the summary, then `--json`) and checks that the second step fails, before sending anything,
/// as `<error_type>: <the SDK's message>`, and that only the first step's object was written.
fn a_host_handle_kept_past_its_step_fails_the_next_step(
    sandbox: &Sandbox,
    lang: &str,
    error_type: &str,
) {
    sandbox.write(
        "project/kept/tasks/kept.json",
        r#"[{"id": "keep", "type": "keep_host"}, {"id": "late", "type": "use_kept_host"}]"#,
    );
    let said_ended = |text: &str| {
        text.split_once(CALL_ENDED.0).is_some_and(|(_, rest)| {
            rest.split_once(CALL_ENDED.1)
                .is_some_and(|(id, _)| !id.is_empty() && id.chars().all(|c| c.is_ascii_digit()))
        })
    };

    let ran = sandbox.run(&["run", "./kept"]);
    assert_eq!(ran.code, 1, "{lang}: {}", ran.both());
    let summary = ran
        .stdout
        .lines()
        .find(|l| l.starts_with("  tasks/kept.json v1: "))
        .unwrap_or_else(|| panic!("{lang}: no summary line: {}", ran.both()));
    let failed_at = format!(
        "  tasks/kept.json v1: failed at step 'late': {error_type}: {}",
        CALL_ENDED.0
    );
    assert!(summary.starts_with(&failed_at), "{lang}: {summary}");
    assert!(said_ended(summary), "{lang}: {summary}");

    let (ran, doc) = sandbox.run_json(&["run", "./kept", "--json"]);
    assert_eq!(ran.code, 1, "{lang}: {}", ran.both());
    assert_eq!(doc["status"], "failed", "{lang}: {doc:#}");
    let task = &doc["tasks"][0];
    assert_eq!(task["outcome"], "failed", "{lang}: {doc:#}");
    let steps = task["steps"].as_array().expect("the task's steps");
    let status: Vec<_> = steps
        .iter()
        .map(|s| (s["step_id"].clone(), s["status"].clone()))
        .collect();
    assert_eq!(
        status,
        [
            (Value::from("keep"), Value::from("succeeded")),
            (Value::from("late"), Value::from("failed"))
        ],
        "{lang}: {doc:#}"
    );
    assert_eq!(steps[1]["error_type"], error_type, "{lang}: {doc:#}");
    let error = steps[1]["error"].as_str().unwrap_or("");
    assert!(
        error.starts_with(CALL_ENDED.0) && said_ended(error),
        "{lang}: {doc:#}"
    );

    // Only the first step's object exists: the kept handle sent nothing.
    let kept = sandbox.state_root().join("object_store").join("kept");
    let mut written: Vec<String> = std::fs::read_dir(&kept)
        .unwrap_or_else(|e| panic!("{lang}: nothing under {}: {e}", kept.display()))
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(written, [format!("{lang}-during.txt")], "{lang}");
    let during =
        std::fs::read_to_string(kept.join(format!("{lang}-during.txt"))).expect("the object");
    assert_eq!(during, "during its call");
    let instances = sandbox.docs("task_instances");
    assert_eq!(instances.len(), 2, "{lang}: {instances:#?}");
    assert!(
        instances.iter().all(|i| i["status"] == "failed"),
        "{lang}: {instances:#?}"
    );
}

#[test]
fn a_python_host_handle_kept_past_its_step_fails_the_next_step_and_writes_nothing() {
    let sandbox = Sandbox::new();
    let python = sandbox.built.venv.join("bin/python");
    let script = sandbox
        .built
        .repo
        .join("tests/fixture-plugins/python/kept_host.py");
    sandbox.install_steps_plugin(
        "agentenv-py-kept-host",
        &[&python, &script],
        "0.1.0",
        KEPT_HOST_STEPS,
    );
    a_host_handle_kept_past_its_step_fails_the_next_step(&sandbox, "python", "CallEndedError");
}

#[test]
fn a_go_host_handle_kept_past_its_step_fails_the_next_step_and_writes_nothing() {
    let sandbox = Sandbox::new();
    sandbox.install_fixture(
        "agentenv-go-kept-host",
        &sandbox.built.go_kept_host,
        "0.1.0",
        KEPT_HOST_STEPS,
    );
    a_host_handle_kept_past_its_step_fails_the_next_step(&sandbox, "go", "CallEndedError");
}

#[test]
fn a_rust_host_handle_kept_past_its_step_fails_the_next_step_and_writes_nothing() {
    let sandbox = Sandbox::new();
    sandbox.install_fixture(
        "agentenv-fixture-kept-host",
        &sandbox.built.fixture_kept_host,
        "0.1.0",
        KEPT_HOST_STEPS,
    );
    // A kept handle's call is named as the Python and Go SDKs name it.
    a_host_handle_kept_past_its_step_fails_the_next_step(&sandbox, "rust", "CallEndedError");
}
