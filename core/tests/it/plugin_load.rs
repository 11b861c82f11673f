//! Black-box: `plugin list | show | check` starting real plugin processes: the Rust fixture plugins
//! and small shell-script plugins, working and misbehaving.

use crate::support::plugins::{fixture, fixture_manifest, outcome, plugin_table, Sandbox};
use serde_json::Value;

/// The fixture that works, under its own manifest (absolute exec).
fn works(sb: &Sandbox) {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixture-plugins/manifests/works.toml"),
    )
    .unwrap()
    .replace(
        "exec = [\"fixture-works\"]",
        &format!("exec = [\"{}\"]", fixture("fixture-works").display()),
    );
    sb.plugin_dir_manifest("works", &text);
}

/// A shell plugin answering `initialize` for `package` with these contributions (JSON objects).
fn sh_plugin(sb: &Sandbox, folder: &str, package: &str, provides: &str, contributions: &str) {
    let result = format!(
        r#"{{"protocol":1,"plugin":{{"name":"{package}","version":"1.0"}},"contributions":[{contributions}],"stores":[]}}"#
    );
    let script = sb.answering_plugin(folder, &result);
    let text = format!(
        "{}{provides}",
        plugin_table(
            package,
            "1.0",
            &format!("[\"/bin/sh\", \"{}\"]", script.display())
        )
    );
    sb.plugin_dir_manifest(folder, &text);
}

fn step(name: &str, ty: &str, class: &str, methods: &str) -> String {
    format!(
        r#"{{"group":"task_steps","name":"{name}","type":"{ty}","class":"{class}","methods":[{methods}]}}"#
    )
}

const STEP_METHODS: &str = r#""execute","from_dict""#;

#[test]
fn scenario_1_a_working_plugin_is_in_effect() {
    let sb = Sandbox::new();
    works(&sb);
    let text = sb.stdout(&["plugin", "check"], 0);
    assert_eq!(
        text,
        "ok: 2 plugin package(s), 5 contribution(s), all in effect\n"
    );
    let list = sb.stdout(&["plugin", "list"], 0);
    assert!(
        list.contains(
            "agentenv-fixture-works  0.3.0    1 env, 2 task steps, 1 CLI command, 1 store  ok\n"
        ),
        "{list}"
    );
    assert!(!list.contains("--no-load"), "{list}");
    let report = sb.json(&["plugin", "list", "--json"], 0);
    assert_eq!(report["loaded"], true);
    assert_eq!(
        outcome(&report, "agentenv-fixture-works", "echo_step").0,
        "active"
    );
    let doc = sb.json(&["plugin", "check", "--json"], 0);
    assert_eq!(doc["ok"], true);
}

/// A timeout variable that is no number of seconds is warned of, naming it and its value, and its
/// default is used, as the run's `AGENT_ENV_*_SECONDS` variables are: the plugin still loads.
#[test]
fn a_timeout_variable_that_is_no_number_warns_and_leaves_its_default() {
    for (var, default) in [
        ("AGENT_ENV_PLUGIN_CALL_TIMEOUT", 60),
        ("AGENT_ENV_PLUGIN_START_TIMEOUT", 5),
        ("AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT", 10),
    ] {
        let mut sb = Sandbox::new();
        works(&sb);
        sb.set(var, "abc");
        let out = sb.run(&["plugin", "check"]);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "ok: 2 plugin package(s), 5 contribution(s), all in effect\n",
            "{var}"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with(&format!("Warning: {var}=\"abc\" is not a number of seconds above 0 and at most 1e9, so it is ignored and the default, {default} s, is used; set it to such a number (e.g. 10 or 0.5), or unset it\n")),
            "{stderr}"
        );
        assert_eq!(out.status.code(), Some(0), "{var}");
    }
}

#[test]
fn show_diagnoses_the_child_process() {
    let sb = Sandbox::new();
    works(&sb);
    let doc = sb.json(&["plugin", "show", "agentenv_fixture_works", "--json"], 0);
    let p = &doc["process"];
    assert!(p["pid"].as_u64().unwrap() > 0, "{p:#}");
    assert_eq!(p["protocol"], 1);
    assert!(
        p["spawn_ms"].as_f64().is_some() && p["initialize_ms"].as_f64().is_some(),
        "{p:#}"
    );
    assert_eq!(p["state"], "exited");
    assert_eq!(p["exit_code"], 0);
    assert_eq!(
        p["ended"],
        "exited with code 0 after agent-env shut it down"
    );
    assert_eq!(
        doc["manifest"]["executable"],
        fixture("fixture-works")
            .canonicalize()
            .unwrap()
            .display()
            .to_string()
    );
    // It has no root option, so nothing it does can change the config: nothing is said of it.
    assert_eq!(doc["config_effect"], Value::Null);
    assert_eq!(doc["plugins"].as_array().unwrap().len(), 1);
    let human = sb.stdout(&["plugin", "show", "agentenv-fixture-works"], 0);
    assert!(!human.contains("\n  config:"), "{human}");
    assert!(human.contains("\n  process:  pid "), "{human}");
    assert!(human.contains(", protocol 1, started in "), "{human}");
    assert!(
        human.contains("\n  ended:    exited with code 0 after agent-env shut it down\n"),
        "{human}"
    );
    assert!(
        human.contains("\n  task step    echo_step        EchoStep        active\n"),
        "{human}"
    );

    // Noise on stdout and the stderr tail.
    let script = sb.script(
        "noisy",
        r#"echo "warming up" >&2
echo "hello from a stray print"
IFS= read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"plugin":{"name":"agentenv-noisy","version":"1"},"contributions":[{"group":"envs","name":"noisy_env","type":"noisy_env","class":"NoisyEnv","methods":["from_dict"]}]}}'
echo "ready" >&2
while IFS= read -r line; do
  rest=${line#*\"id\":}
  id=${rest%%[!0-9]*}
  [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"result":null}\n' "$id"
done
"#,
    );
    sb.plugin_dir_manifest(
        "noisy",
        &format!(
            "{}[provides.envs]\nnoisy_env = \"NoisyEnv\"\n",
            plugin_table(
                "agentenv-noisy",
                "1",
                &format!("[\"/bin/sh\", \"{}\"]", script.display())
            )
        ),
    );
    let doc = sb.json(&["plugin", "show", "agentenv-noisy", "--json"], 0);
    let p = &doc["process"];
    assert_eq!(p["noise_count"], 1, "{p:#}");
    assert_eq!(p["noise_lines"][0], "hello from a stray print");
    assert!(
        p["stderr_tail"].as_str().unwrap().contains("warming up"),
        "{p:#}"
    );
    assert_eq!(outcome(&doc, "agentenv-noisy", "noisy_env").0, "active");
    let human = sb.stdout(&["plugin", "show", "agentenv-noisy"], 0);
    assert!(human.contains("  stdout:   1 line(s) that are not protocol messages:\n            | hello from a stray print\n"), "{human}");
    assert!(human.contains("            | warming up\n"), "{human}");

    // The noise is a warning in list and check (docs/protocol.md §1), which still succeed.
    let warning = "Warning: plugin agentenv-noisy wrote 1 line(s) to stdout that are not protocol messages \
                   (first: 'hello from a stray print'); stdout is the protocol's, so write logs to stderr; \
                   `agent-env plugin show agentenv-noisy` lists them\n";
    for args in [&["plugin", "list"][..], &["plugin", "check"][..]] {
        let out = sb.run(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(warning), "{args:?}: {err}");
        assert!(!err.contains("agentenv-fixture-works wrote"), "{err}");
    }
    let listed = sb.json(&["plugin", "list", "--json"], 0);
    // Then each env type in effect, which no run here uses.
    let unused = |env: &str, package: &str| {
        format!("the env type '{env}' of {package} is active, but this agent-env does not use plugins' env types yet: nothing here deploys envs, so no run uses it")
    };
    assert_eq!(
        listed["warnings"],
        serde_json::json!([
            warning.trim_start_matches("Warning: ").trim_end(),
            unused("noisy_env", "agentenv-noisy"),
            unused("fixture_env", "agentenv-fixture-works"),
        ]),
        "{listed:#}"
    );
}

#[test]
fn scenarios_8_and_10_the_answer_is_held_against_the_manifest() {
    let sb = Sandbox::new();
    let contributions = [
        step("half_step", "half_step", "Half", ""),
        step("wrong", "something_else", "WrongName", STEP_METHODS),
        step("good_step", "good_step", "Good", STEP_METHODS),
        r#"{"group":"sandbox_providers","name":"box","type":"box","class":"BoxProvider","methods":["terminate"]}"#.to_string(),
    ]
    .join(",");
    sh_plugin(
        &sb,
        "demo",
        "agentenv-demo",
        "[provides.task_steps]\nhalf_step = \"Half\"\nwrong = \"WrongName\"\ngood_step = \"Good\"\nmissing_step = \"Missing\"\n[provides.sandbox_providers]\nbox = \"BoxProvider\"\n",
        &contributions,
    );
    let report = sb.json(&["plugin", "list", "--json"], 0);
    let expect = |name: &str, reason: &str| {
        assert_eq!(
            outcome(&report, "agentenv-demo", name),
            ("failed".into(), "invalid-plugin".into(), reason.to_string()),
        )
    };
    expect(
        "half_step",
        "failed to load: TypeError('Half must implement execute and from_dict')",
    );
    expect(
        "wrong",
        "failed to load: TypeError(\"WrongName has type 'something_else'; its entry point must be named 'something_else'\")",
    );
    expect(
        "missing_step",
        "failed to load: Missing is not provided by the plugin (its task_steps are half_step, wrong, good_step)",
    );
    expect(
        "box",
        "failed to load: TypeError('BoxProvider must implement create_sandbox or create_vm')",
    );
    assert_eq!(outcome(&report, "agentenv-demo", "good_step").0, "active");

    // A run refuses a step of a class that breaks the rules before any step runs (the original
    // refuses it at plan), with the report's reason.
    let bundle = sb.dir().join("work/halves/tasks");
    std::fs::create_dir_all(&bundle).unwrap();
    std::fs::write(
        bundle.join("t.json"),
        r#"[{"id": "h", "type": "half_step"}]"#,
    )
    .unwrap();
    for args in [
        &["run", "--dry-run", "./halves"][..],
        &["run", "./halves"][..],
    ] {
        let out = sb.run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("step 'h' (half_step) from the plugin agentenv-demo: failed to load: TypeError('Half must implement execute and from_dict')"),
            "{args:?}: {err}"
        );
    }

    // An answer for another package fails every contribution.
    sh_plugin(
        &sb,
        "liar",
        "agentenv-liar",
        "[provides.envs]\nliar_env = \"L\"\n",
        "",
    );
    let script = sb.dir().join("scripts/liar");
    let text = std::fs::read_to_string(&script)
        .unwrap()
        .replace("\"name\":\"agentenv-liar\"", "\"name\":\"someone-else\"");
    std::fs::write(&script, text).unwrap();
    let report = sb.json(&["plugin", "list", "--json"], 0);
    let (_, code, reason) = outcome(&report, "agentenv-liar", "liar_env");
    // The host refuses an answer for another package before the registry sees it.
    assert_eq!(code, "handshake-failed");
    assert!(reason.contains("someone-else"), "{reason}");
}

#[test]
fn a_misbehaving_child_fails_with_a_code_and_the_others_still_load() {
    let mut sb = Sandbox::new();
    sb.set("AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT", "3");
    works(&sb);
    let env = |n: &str| format!("[provides.envs]\n{n} = \"E\"\n");
    sb.plugin_dir_manifest(
        "gone",
        &format!(
            "{}{}",
            plugin_table("agentenv-gone", "1", "[\"./bin/nope\"]"),
            env("gone_env")
        ),
    );
    sb.plugin_dir_manifest(
        "exit",
        &fixture_manifest("agentenv-exit", "fixture-exit-at-start", &env("exit_env")),
    );
    sb.plugin_dir_manifest(
        "hang",
        &fixture_manifest("agentenv-hang", "fixture-hang-handshake", &env("hang_env")),
    );
    sb.plugin_dir_manifest(
        "p99",
        &fixture_manifest(
            "agentenv-fixture-protocol99",
            "fixture-protocol99",
            &env("p99_env"),
        ),
    );
    // Garbage before and after reading initialize, and never an answer.
    let garbage = sb.script(
        "garbage",
        "echo 'this is not json'\nIFS= read -r line\necho '{\"neither\": \"is this\"}'\nwhile IFS= read -r line; do :; done\n",
    );
    sb.plugin_dir_manifest(
        "garbage",
        &format!(
            "{}{}",
            plugin_table(
                "agentenv-garbage",
                "1",
                &format!("[\"/bin/sh\", \"{}\"]", garbage.display())
            ),
            env("garbage_env")
        ),
    );
    let report = sb.json(&["plugin", "list", "--json"], 0);
    let code = |pkg: &str, name: &str| {
        let (status, code, reason) = outcome(&report, pkg, name);
        assert_eq!(status, "failed", "{pkg}: {reason}");
        assert!(reason.starts_with("failed to load: plugin "), "{reason}");
        code
    };
    assert_eq!(code("agentenv-gone", "gone_env"), "not-found");
    assert_eq!(code("agentenv-exit", "exit_env"), "exited-at-start");
    assert_eq!(code("agentenv-hang", "hang_env"), "handshake-timeout");
    assert_eq!(
        code("agentenv-fixture-protocol99", "p99_env"),
        "protocol-mismatch"
    );
    let garbage_code = code("agentenv-garbage", "garbage_env");
    assert!(
        garbage_code == "handshake-timeout" || garbage_code == "handshake-failed",
        "{garbage_code}"
    );
    assert_eq!(
        outcome(&report, "agentenv-fixture-works", "echo_step").0,
        "active"
    );

    let (_, _, reason) = outcome(&report, "agentenv-exit", "exit_env");
    assert!(
        reason.contains("the settings file is missing"),
        "the stderr tail is named: {reason}"
    );
    let doc = sb.json(&["plugin", "show", "agentenv-exit", "--json"], 0);
    assert_eq!(doc["process"]["exit_code"], 3);
    assert_eq!(doc["process"]["ended"], "exited with code 3 by itself");
    // It never answered initialize, so it has no time to answer it.
    assert!(
        doc["process"]["initialize_ms"].is_null(),
        "{:#}",
        doc["process"]
    );
    let doc = sb.json(&["plugin", "show", "agentenv-garbage", "--json"], 0);
    assert_eq!(doc["process"]["noise_count"], 2, "{:#}", doc["process"]);

    let out = sb.run(&["plugin", "check"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "agentenv-hang 0.1.0: env hang_env: failed: failed to load: plugin agentenv-hang"
        ),
        "{stdout}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Warning: the env type 'fixture_env' of agentenv-fixture-works is active, but this agent-env does not use plugins' env types yet: nothing here deploys envs, so no run uses it\n\
         Error: 5 plugin contribution(s) did not take effect"
    );
}

/// A plugin that provides only stores is started by nothing that lists plugins; `plugin show`
/// starts it to diagnose it, so one that cannot start says so there.
#[test]
fn show_starts_a_store_only_plugin_to_diagnose_it() {
    let sb = Sandbox::new();
    sb.plugin_dir_manifest(
        "agentenv-exit",
        &fixture_manifest(
            "agentenv-exit",
            "fixture-exit-at-start",
            "\n[provides.stores]\nVault = \"secret\"\n",
        ),
    );
    let doc = sb.json(&["plugin", "show", "agentenv-exit", "--json"], 0);
    assert_eq!(doc["process"]["exit_code"], 3, "{:#}", doc["process"]);
    assert!(
        doc["process"]["stderr_tail"]
            .as_str()
            .unwrap()
            .contains("the settings file is missing"),
        "{:#}",
        doc["process"]
    );
    // Without loading, nothing starts.
    let doc = sb.json(
        &["plugin", "show", "agentenv-exit", "--json", "--no-load"],
        0,
    );
    assert!(doc["process"].is_null(), "{:#}", doc["process"]);
}

#[test]
fn no_load_starts_nothing() {
    let sb = Sandbox::new();
    let marker = sb.dir().join("started");
    let script = sb.script("marker", &format!(": > '{}'\nexit 1\n", marker.display()));
    sb.plugin_dir_manifest(
        "m",
        &format!(
            "{}[provides.envs]\nm_env = \"M\"\n",
            plugin_table(
                "agentenv-m",
                "1",
                &format!("[\"/bin/sh\", \"{}\"]", script.display())
            )
        ),
    );
    sb.stdout(&["plugin", "list", "--no-load"], 0);
    sb.stdout(&["plugin", "show", "agentenv-m", "--no-load"], 0);
    sb.stdout(&["plugin", "check", "--no-load"], 0);
    assert!(!marker.exists(), "--no-load started a plugin");
    sb.run(&["plugin", "list"]);
    assert!(marker.exists(), "loading did not start the plugin");
}

fn config(sb: &mut Sandbox, text: &str) -> std::path::PathBuf {
    let path = sb.dir().join("work/.agentenv/config.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

/// agentenv-demo claims grade_essay; agentenv-alt claims nothing but offers the class Grade2.
fn replaceable(sb: &Sandbox) {
    sh_plugin(
        sb,
        "demo",
        "agentenv-demo",
        "[provides.task_steps]\ngrade_essay = \"GradeEssay\"\nhalf = \"Half\"\n",
        &[
            step("grade_essay", "grade_essay", "GradeEssay", STEP_METHODS),
            step("half", "half", "Half", ""),
        ]
        .join(","),
    );
    sh_plugin(
        sb,
        "alt",
        "agentenv-alt",
        "",
        &step("grade_essay", "grade_essay", "Grade2", STEP_METHODS),
    );
}

#[test]
fn scenario_11_config_replaces_a_plugins_class() {
    let mut sb = Sandbox::new();
    replaceable(&sb);
    let path = config(&mut sb, "[task_steps]\nimpls = [\"agentenv-alt:Grade2\"]\n");
    let report = sb.json(&["plugin", "list", "--json"], 0);
    assert_eq!(report["config"]["path"], path.display().to_string());
    let c = crate::support::plugins::contribution(&report, "agentenv-demo", "grade_essay");
    assert_eq!(c["status"], "replaced");
    assert_eq!(c["code"], "replaced-by-config");
    assert_eq!(
        c["reason"],
        format!(
            "config names 'agentenv-alt:Grade2' in [task_steps] of {}",
            path.display()
        )
    );
    assert_eq!(
        c["replaced_by"],
        serde_json::json!({"file": path.display().to_string(), "table": "task_steps", "impl": "agentenv-alt:Grade2"})
    );
    // `half` fails, so check fails; without it check passes, naming the replacement.
    std::fs::write(
        sb.dir().join("plugins/demo/agent-env-plugin.toml"),
        std::fs::read_to_string(sb.dir().join("plugins/demo/agent-env-plugin.toml"))
            .unwrap()
            .replace("half = \"Half\"\n", ""),
    )
    .unwrap();
    let text = sb.stdout(&["plugin", "check"], 0);
    assert_eq!(
        text,
        "ok: 3 plugin package(s), 2 contribution(s); 1 replaced by config\n"
    );

    // The plugin's own class stays active.
    config(
        &mut sb,
        "[task_steps]\nimpls = [\"agentenv_demo:GradeEssay\"]\n",
    );
    let report = sb.json(&["plugin", "list", "--json"], 0);
    let c = crate::support::plugins::contribution(&report, "agentenv-demo", "grade_essay");
    assert_eq!(
        (c["status"].as_str(), &c["code"]),
        (Some("active"), &Value::Null)
    );
}

#[test]
fn scenario_12_an_invalid_table_blocks_its_group() {
    let mut sb = Sandbox::new();
    replaceable(&sb);
    config(&mut sb, "[task_steps]\nimpls = \"x\"\n");
    let report = sb.json(&["plugin", "list", "--json"], 0);
    assert_eq!(
        report["group_errors"]["agent_env.task_steps"],
        serde_json::json!({"code": "config-invalid", "reason": "ConfigError: [task_steps] impls must be a list of 'module:Class' strings, got str"})
    );
    assert_eq!(
        outcome(&report, "agentenv-demo", "grade_essay"),
        (
            "blocked".into(),
            "config-invalid".into(),
            "ConfigError: [task_steps] impls must be a list of 'module:Class' strings, got str"
                .into()
        )
    );
    assert_eq!(outcome(&report, "agentenv-demo", "half").0, "failed");
    let text = sb.stdout(&["plugin", "list"], 0);
    assert!(text.ends_with("\n(error) nothing in agent_env.task_steps loads: ConfigError: [task_steps] impls must be a list of 'module:Class' strings, got str [config-invalid]\n"), "{text}");
    let show = sb.stdout(&["plugin", "show", "agentenv-demo"], 0);
    assert!(
        show.contains("  task step  grade_essay  GradeEssay  blocked: ConfigError: "),
        "{show}"
    );
    assert!(show.ends_with("\n  (error) nothing in agent_env.task_steps loads: ConfigError: [task_steps] impls must be a list of 'module:Class' strings, got str [config-invalid]\n"), "{show}");
    assert_eq!(sb.run(&["plugin", "check"]).status.code(), Some(1));

    // A malformed file is a config error; loading, each group with claims that reads config is blocked.
    config(&mut sb, "[task_steps\n");
    let report = sb.json(&["plugin", "list", "--json"], 0);
    assert_eq!(report["config"]["error"]["code"], "config-unreadable");
    assert!(report["config"]["error"]["reason"]
        .as_str()
        .unwrap()
        .starts_with("Malformed config.toml at "));
    assert_eq!(
        outcome(&report, "agentenv-demo", "grade_essay").1,
        "config-unreadable"
    );
}

#[test]
fn with_plugins_loaded_a_bundle_must_name_types_that_resolve() {
    let sb = Sandbox::new();
    sh_plugin(
        &sb,
        "demo",
        "agentenv-demo",
        "[provides.task_steps]\ngrade_essay = \"GradeEssay\"\n[provides.bundles]\ngood = \"bundles/good\"\nbad = \"bundles/bad\"\n",
        &step("grade_essay", "grade_essay", "GradeEssay", STEP_METHODS),
    );
    let root = sb.plugins_dir().join("demo/bundles");
    for (name, ty) in [("good", "grade_essay"), ("bad", "nope_step")] {
        std::fs::create_dir_all(root.join(name).join("tasks")).unwrap();
        std::fs::write(
            root.join(name).join("tasks/t.json"),
            format!(r#"[{{"id": "grade", "type": "{ty}"}}]"#),
        )
        .unwrap();
    }
    // Manifests only: both parse.
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    assert_eq!(outcome(&report, "agentenv-demo", "bad").0, "active");
    let report = sb.json(&["plugin", "list", "--json"], 0);
    assert_eq!(outcome(&report, "agentenv-demo", "good").0, "active");
    let (status, code, reason) = outcome(&report, "agentenv-demo", "bad");
    assert_eq!(
        (status.as_str(), code.as_str()),
        ("failed", "invalid-plugin")
    );
    assert!(reason.starts_with("it isn't a valid bundle: "), "{reason}");
    assert!(
        reason.contains("'nope_step' is not a known step type"),
        "{reason}"
    );
    assert_eq!(sb.run(&["plugin", "check"]).status.code(), Some(1));
}

#[test]
fn the_first_cli_command_in_sort_order_wins() {
    let sb = Sandbox::new();
    let command = r#"{"group":"cli_plugins","name":"tools","type":"tools","class":"tools","methods":["run"]}"#;
    sh_plugin(
        &sb,
        "a",
        "agentenv-a",
        "[provides.cli_plugins]\ntools = \"tools\"\n",
        command,
    );
    sh_plugin(
        &sb,
        "b",
        "agentenv-b",
        "[provides.cli_plugins]\ntools = \"tools\"\n",
        command,
    );
    sh_plugin(
        &sb,
        "c",
        "agentenv-c",
        "[provides.cli_plugins]\nbroken = \"broken\"\n",
        r#"{"group":"cli_plugins","name":"broken","type":"broken","class":"broken","methods":[]}"#,
    );
    let report = sb.json(&["plugin", "list", "--json"], 0);
    assert_eq!(outcome(&report, "agentenv-a", "tools").0, "active");
    let c = crate::support::plugins::contribution(&report, "agentenv-b", "tools");
    assert_eq!(c["status"], "skipped");
    assert_eq!(c["code"], "name-conflict");
    assert_eq!(
        c["reason"],
        "clashes with existing command 'tools' from plugin 'tools' from 'agentenv-a'"
    );
    assert_eq!(c["conflicts_with"][0]["package"], "agentenv-a");
    assert_eq!(
        outcome(&report, "agentenv-c", "broken"),
        (
            "failed".into(),
            "invalid-plugin".into(),
            "is not a click.Command (broken must implement run)".into()
        )
    );
}

/// `[artifacts] type_aliases` as the original reads it, against a real plugin process that registers
/// an artifact type: an alias to it is fine; an alias to a type nobody registers fails the artifacts group,
/// and `plugin check` says so with the original's sentence.
#[test]
fn artifact_type_aliases_resolve_or_fail_the_artifacts_group() {
    let sb = Sandbox::new();
    sh_plugin(
        &sb,
        "web",
        "agentenv-web",
        "[provides.artifacts]\nweb_page = \"WebPage\"\n",
        r#"{"group":"artifacts","name":"web_page","type":"web_page","class":"WebPage","methods":[]}"#,
    );
    let config = sb.dir().join("work/.agentenv/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();

    std::fs::write(
        &config,
        "[artifacts]\ntype_aliases = { webpage = \"web_page\" }\n",
    )
    .unwrap();
    let doc = sb.json(&["plugin", "check", "--json"], 0);
    assert_eq!(doc["ok"], true, "{doc:#}");

    std::fs::write(
        &config,
        "[artifacts]\ntype_aliases = { old = \"nothing_here\" }\n",
    )
    .unwrap();
    let report = sb.json(&["plugin", "list", "--json"], 0);
    let (status, code, reason) = outcome(&report, "agentenv-web", "web_page");
    assert_eq!(
        (status.as_str(), code.as_str()),
        ("blocked", "config-invalid"),
        "{report:#}"
    );
    assert_eq!(
        reason,
        "ConfigError: [artifacts] type_aliases maps 'old' to 'nothing_here', which no artifact registers; declare it under [artifacts].impls or correct the alias"
    );
    let out = sb.run(&["plugin", "check"]);
    assert_eq!(out.status.code(), Some(1));
}

/// A plugin's sandbox provider loads and is `active`, as the original's rules give, but no run here
/// uses it: `list`, `check` and `show` warn so (and `--json` carries the warning), `check` stays ok,
/// and `config check` says why `[sandbox] default` naming it picks nothing.
#[test]
fn a_plugins_sandbox_provider_is_active_but_said_to_be_unused_here() {
    let sb = Sandbox::new();
    sh_plugin(
        &sb,
        "boxes",
        "agentenv-boxes",
        "[provides.sandbox_providers]\nmyprov = \"MyProv\"\n",
        r#"{"group":"sandbox_providers","name":"myprov","type":"myprov","class":"MyProv","methods":["create_sandbox"]}"#,
    );
    let warning = "the sandbox provider 'myprov' of agentenv-boxes is active, but this agent-env does not use plugins' sandbox providers yet: every run deploys its sandboxes with the built-in 'local' provider, so `agent-env run --sandbox myprov` (or [sandbox] default = \"myprov\") cannot pick it";
    let listed = sb.json(&["plugin", "list", "--json"], 0);
    assert_eq!(
        outcome(&listed, "agentenv-boxes", "myprov"),
        ("active".into(), String::new(), String::new())
    );
    assert_eq!(
        listed["warnings"],
        serde_json::json!([warning]),
        "{listed:#}"
    );
    for args in [
        &["plugin", "list"][..],
        &["plugin", "check"][..],
        &["plugin", "show", "agentenv-boxes"][..],
    ] {
        let out = sb.run(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("Warning: {warning}\n")),
            "{args:?}: {err}"
        );
    }
    let checked = sb.json(&["plugin", "check", "--json"], 0);
    assert_eq!(checked["ok"], true, "{checked:#}");
    assert_eq!(
        checked["warnings"],
        serde_json::json!([warning]),
        "{checked:#}"
    );
    // Manifests only: nothing is in effect yet, so nothing is said.
    let out = sb.run(&["plugin", "list", "--no-load"]);
    assert!(String::from_utf8_lossy(&out.stderr).is_empty());

    std::fs::create_dir_all(sb.dir().join("work/.agentenv")).unwrap();
    std::fs::write(
        sb.dir().join("work/.agentenv/config.toml"),
        "[sandbox]\ndefault = \"myprov\"\n",
    )
    .unwrap();
    let out = sb.run(&["config", "check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("[sandbox] default 'myprov': no sandbox provider of that name is available; the built-in one is 'local' ('myprov' is a sandbox provider of the plugin agentenv-boxes, and this agent-env does not use plugins' sandbox providers yet)"),
        "{text}"
    );
    // A run asked for it says the same.
    std::fs::remove_file(sb.dir().join("work/.agentenv/config.toml")).unwrap();
    let out = sb.run(&["run", "hello", "--sandbox", "myprov"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--sandbox 'myprov': no sandbox provider of that name is available; the built-in one is 'local' ('myprov' is a sandbox provider of the plugin agentenv-boxes, and this agent-env does not use plugins' sandbox providers yet)"),
        "{err}"
    );
}

/// `plugin list` has no room for reasons and exits 0: a package with a contribution that did not
/// take effect is named on stderr with where to read why; one that is fine, or not loaded, is not.
#[test]
fn plugin_list_says_where_to_read_why_a_package_failed() {
    let sb = Sandbox::new();
    works(&sb);
    sb.plugin_dir_manifest(
        "gone",
        &format!(
            "{}[provides.envs]\ngone_env = \"E\"\n",
            plugin_table("agentenv-gone", "1", "[\"./bin/nope\"]")
        ),
    );
    let out = sb.run(&["plugin", "list"]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("note: agentenv-gone: 1 failed; agent-env plugin show agentenv-gone says why (agent-env plugin check lists every problem, and exits 1)\n"),
        "{stderr}"
    );
    assert!(!stderr.contains("note: agentenv-fixture-works"), "{stderr}");
    let out = sb.run(&["plugin", "list", "--no-load"]);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("says why"),
        "not loaded is not a failure"
    );
}

/// With many packages failing, `plugin list` names the first few on stderr and counts the rest in
/// one line that names `plugin check`, rather than a note per package (the table marks each row).
#[test]
fn plugin_list_counts_the_failed_packages_past_the_first_few() {
    let sb = Sandbox::new();
    for n in 1..=50 {
        let name = format!("agentenv-pp{n:02}");
        sb.path_manifest(
            &name,
            &format!(
                "{}[provides.envs]\npp{n:02}_env = \"E\"\n",
                plugin_table(&name, "1", "[\"/nonexistent/agentenv-pp\"]")
            ),
        );
    }
    let out = sb.run(&["plugin", "list"]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let notes: Vec<&str> = stderr.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(notes.len(), 6, "{stderr}");
    for (note, n) in notes.iter().zip(1..=5) {
        assert_eq!(
            *note,
            format!("note: agentenv-pp{n:02}: 1 failed; agent-env plugin show agentenv-pp{n:02} says why (agent-env plugin check lists every problem, and exits 1)")
        );
    }
    assert_eq!(
        notes[5],
        "note: 45 more packages failed, conflict or are blocked: agent-env plugin check lists every problem"
    );
    let list = String::from_utf8_lossy(&out.stdout);
    assert_eq!(list.matches("failed").count(), 50, "{list}");
}

/// `plugin show` names the defect of a stdout line meant as a protocol message (here one without
/// "jsonrpc"), under the line itself; a log line gets no such note.
#[test]
fn show_names_the_defect_of_a_stdout_line_meant_as_a_message() {
    let sb = Sandbox::new();
    let script = sb.script(
        "malformed",
        r#"echo "hello from a stray print"
echo '{"id":7,"error":{"code":1,"message":"not yet"}}'
IFS= read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"plugin":{"name":"agentenv-malformed","version":"1"},"contributions":[{"group":"envs","name":"malformed_env","type":"malformed_env","class":"MalformedEnv","methods":["from_dict"]}]}}'
while IFS= read -r line; do
  rest=${line#*\"id\":}
  id=${rest%%[!0-9]*}
  [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"result":null}\n' "$id"
done
"#,
    );
    sb.plugin_dir_manifest(
        "malformed",
        &format!(
            "{}[provides.envs]\nmalformed_env = \"MalformedEnv\"\n",
            plugin_table(
                "agentenv-malformed",
                "1",
                &format!("[\"/bin/sh\", \"{}\"]", script.display())
            )
        ),
    );
    let human = sb.stdout(&["plugin", "show", "agentenv-malformed"], 0);
    assert!(
        human.contains(
            "  stdout:   2 line(s) that are not protocol messages:\n            | hello from a stray print\n            \
             | {\"id\":7,\"error\":{\"code\":1,\"message\":\"not yet\"}}\n              \
             (meant as a message: it lacks \"jsonrpc\":\"2.0\": every message must carry it)\n"
        ),
        "{human}"
    );
}
