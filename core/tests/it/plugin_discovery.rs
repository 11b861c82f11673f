//! Black-box: discovery, compatibility, precedence and the report layouts, with `--no-load` (no plugin
//! process is started; the manifests' executables do not even exist).

use crate::support::plugins::{outcome, package_row, plugin_table, Sandbox};
use serde_json::Value;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn step_plugin(name: &str, version: &str, steps: &[&str]) -> String {
    let mut text = plugin_table(name, version, "[\"./bin/none\"]");
    text.push_str("[provides.task_steps]\n");
    for s in steps {
        text.push_str(&format!("{s} = \"{}\"\n", class_of(s)));
    }
    text
}

fn class_of(step: &str) -> String {
    step.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn scenario_14_no_load_lists_manifests_only() {
    let sb = Sandbox::new();
    sb.plugin_dir_manifest(
        "grader",
        &step_plugin("agentenv-grader", "0.3.1", &["grade_essay"]),
    );
    let text = sb.stdout(&["plugin", "list", "--no-load"], 0);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "agent-env {VERSION} \u{b7} plugins dir at {}",
            sb.plugins_dir().display()
        )
    );
    assert_eq!(lines[1], "config: (none)");
    assert_eq!(lines[2], "");
    assert_eq!(
        lines[3],
        "PACKAGE             VERSION  PROVIDES               STATUS"
    );
    assert_eq!(
        lines[4],
        format!("agentenv-framework  {VERSION:<7}  bundle hello           ok")
    );
    assert_eq!(
        lines[5],
        "agentenv-grader     0.3.1    task step grade_essay  not loaded"
    );
    assert_eq!(lines[6], "");
    assert_eq!(
        lines[7],
        "--no-load: no plugin was started (manifests only)."
    );
    assert_eq!(lines.len(), 8);

    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    assert_eq!(report["loaded"], false);
    assert_eq!(
        outcome(&report, "agentenv-grader", "grade_essay"),
        (
            "unloaded".into(),
            "not-loaded".into(),
            "not imported (installed metadata only)".into()
        )
    );
}

#[test]
fn a_package_of_stores_shows_them_under_provides_and_not_in_the_json() {
    let sb = Sandbox::new();
    let mut stores = plugin_table("agentenv-stores", "1.0.0", "[\"./bin/none\"]");
    stores.push_str("[provides.stores]\nBucketStore = \"object\"\nVault = \"secret\"\n");
    sb.plugin_dir_manifest("stores", &stores);
    let mut many = step_plugin("agentenv-many", "2.0.0", &["grade_a", "grade_b", "grade_c"]);
    many.push_str("[provides.stores]\nDocs = \"document\"\n");
    sb.plugin_dir_manifest("many", &many);
    let text = sb.stdout(&["plugin", "list", "--no-load"], 0);
    let row = |package: &str| {
        text.lines()
            .find(|l| l.starts_with(package))
            .unwrap_or_else(|| panic!("no row for {package} in {text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        row("agentenv-stores"),
        "agentenv-stores 1.0.0 object store BucketStore, secret store Vault ok"
    );
    assert_eq!(
        row("agentenv-many"),
        "agentenv-many 2.0.0 3 task steps, 1 store not loaded"
    );
    // Stores are not contributions in the report's format: the JSON row keeps its keys.
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    let row = report["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "agentenv-stores")
        .unwrap();
    assert_eq!(row["contributions"], serde_json::json!([]));
}

#[test]
fn json_format_1_has_every_key_in_order() {
    let sb = Sandbox::new();
    sb.plugin_dir_manifest(
        "grader",
        &step_plugin("agentenv-grader", "0.3.1", &["grade_essay"]),
    );
    let text = sb.stdout(&["plugin", "list", "--json", "--no-load"], 0);
    assert!(
        text.starts_with("{\n  \"format_version\": 1,\n  \"agent_env\": {\n    \"version\""),
        "{text}"
    );
    let order = [
        "\"format_version\"",
        "\"agent_env\"",
        "\"environment\"",
        "\"location\"",
        "\"config\"",
        "\"error\"",
        "\"loaded\"",
        "\"group_errors\"",
        "\"discovery_errors\"",
        "\"plugins\"",
        "\"contributions\"",
        "\"group\"",
        "\"name\"",
        "\"value\"",
        "\"status\"",
        "\"code\"",
        "\"reason\"",
        "\"replaced_by\"",
        "\"conflicts_with\"",
    ];
    let mut at = 0;
    for key in order {
        let found = text[at..]
            .find(key)
            .unwrap_or_else(|| panic!("{key} after {at}:\n{text}"));
        at += found;
    }
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        report["agent_env"],
        serde_json::json!({"version": VERSION, "environment": "plugins dir", "location": sb.plugins_dir().display().to_string()})
    );
    assert_eq!(
        report["config"],
        serde_json::json!({"path": null, "error": null})
    );
    let core = package_row(&report, "agentenv-framework");
    assert_eq!(core["version"], VERSION);
    assert_eq!(core["contributions"][0]["group"], "agent_env.bundles");
    assert_eq!(core["contributions"][0]["name"], "hello");
    assert_eq!(core["contributions"][0]["status"], "active");
}

#[test]
fn a_broken_manifest_is_its_own_row_and_hides_nothing() {
    let sb = Sandbox::new();
    sb.plugin_dir_manifest("good", &step_plugin("agentenv-good", "1.0", &["good_step"]));
    let path = sb.path_manifest(
        "agentenv-broken",
        "[plugin]\nname = \"agentenv-broken\"\nversion = \"1\"\nprotocol = [1, 1]\n",
    );
    sb.plugin_dir_manifest(
        "badgroup",
        &format!(
            "{}[provides.task_stepz]\nx = \"X\"\n",
            plugin_table("agentenv-badgroup", "1", "[\"x\"]")
        ),
    );
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    let (status, code, reason) = outcome(
        &report,
        "agentenv-broken",
        "agent-env-plugin-agentenv-broken.toml",
    );
    assert_eq!(
        (status.as_str(), code.as_str()),
        ("failed", "manifest-invalid")
    );
    assert!(
        reason.starts_with(&format!("{}:1:1: ", path.display())),
        "{reason}"
    );
    assert!(reason.contains("missing field 'exec'"), "{reason}");
    let (_, code, reason) = outcome(&report, "badgroup", "agent-env-plugin.toml");
    assert_eq!(code, "manifest-invalid");
    assert!(
        reason.contains(":6:") && reason.contains("task_stepz"),
        "{reason}"
    );
    assert_eq!(outcome(&report, "agentenv-good", "good_step").0, "unloaded");
    assert_eq!(
        package_row(&report, "agentenv-broken")["version"],
        "unknown"
    );

    let out = sb.run(&["plugin", "check", "--no-load"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "agentenv-broken unknown: manifest agent-env-plugin-agentenv-broken.toml: failed: "
        ),
        "{stdout}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error: 2 plugin contribution(s) did not take effect"
    );
}

/// A manifest a user wrote with `plugin --agent-env-manifest > FILE` for a plugin that prints at
/// import starts with that print: the report says so, as `plugin add` does, beside TOML's words.
#[test]
fn a_manifest_starting_with_a_stray_print_says_where_it_came_from() {
    let sb = Sandbox::new();
    sb.plugin_dir_manifest(
        "noisy",
        &format!(
            "init: debug banner\n{}",
            step_plugin("agentenv-noisy", "1.0", &["noisy_step"])
        ),
    );
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    let (_, code, reason) = outcome(&report, "noisy", "agent-env-plugin.toml");
    assert_eq!(code, "manifest-invalid");
    assert!(
        reason.ends_with(
            "; its first line, 'init: debug banner', is no manifest line: something in the plugin writes to stdout before serve is called (a print at import or in an init function); write it to stderr instead"
        ),
        "{reason}"
    );
}

#[test]
fn a_name_that_is_not_a_package_name_makes_the_manifest_invalid() {
    let sb = Sandbox::new();
    sb.plugin_dir_manifest("spaced", &step_plugin("my plugin", "1.0", &["spaced_step"]));
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    let (status, code, reason) = outcome(&report, "spaced", "agent-env-plugin.toml");
    assert_eq!(
        (status.as_str(), code.as_str()),
        ("failed", "manifest-invalid")
    );
    assert!(
        reason.ends_with(
            ":2:8: plugin.name \"my plugin\" is not a package name: it holds a character other than a letter, a digit, '-', '_' or '.'; write letters, digits, '-', '_' and '.', starting and ending with a letter or digit (for example \"agentenv-my-plugin\")"
        ),
        "{reason}"
    );
}

#[test]
fn the_first_copy_wins_and_later_ones_are_shadowed() {
    let mut sb = Sandbox::new();
    let first = sb.plugin_dir_manifest(
        "grader",
        &step_plugin("agentenv-grader", "1.0", &["a_step"]),
    );
    let second = sb.path_manifest(
        "grader",
        &step_plugin("Agentenv_Grader", "2.0", &["b_step"]),
    );
    let share = sb.dir().join("share/agent-env/plugins");
    std::fs::create_dir_all(&share).unwrap();
    std::fs::write(
        share.join("grader.toml"),
        step_plugin("agentenv.grader", "3.0", &["c_step"]),
    )
    .unwrap();
    std::fs::write(
        share.join("other.toml"),
        step_plugin("agentenv-other", "0.1", &["o_step"]),
    )
    .unwrap();
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    let names: Vec<&str> = report["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["agentenv-framework", "agentenv-grader", "agentenv-other"]
    );
    assert_eq!(package_row(&report, "agentenv-grader")["version"], "1.0");

    let show = sb.json(
        &["plugin", "show", "AGENTENV_GRADER", "--json", "--no-load"],
        0,
    );
    assert_eq!(show["manifest"]["path"], first.display().to_string());
    assert_eq!(show["manifest"]["source"], "plugins dir");
    let shadowed = show["manifest"]["shadowed"].as_array().unwrap();
    assert_eq!(shadowed.len(), 2);
    assert_eq!(
        shadowed[0]["path"],
        second.canonicalize().unwrap().display().to_string()
    );
    assert_eq!(shadowed[0]["version"], "2.0");
    assert_eq!(shadowed[1]["version"], "3.0");
    assert_eq!(show["config_effect"], Value::Null);
    assert_eq!(show["process"], Value::Null);
    let human = sb.stdout(&["plugin", "show", "agentenv-grader", "--no-load"], 0);
    assert!(
        human.contains(&format!(
            "  shadowed: {} 2.0 (not used)",
            second.canonicalize().unwrap().display()
        )),
        "{human}"
    );

    // With the plugins-dir copy gone, PATH's copy is used.
    std::fs::remove_dir_all(first.parent().unwrap()).unwrap();
    sb.set(
        "AGENT_ENV_PLUGIN_DIR",
        sb.dir().join("none").to_str().unwrap(),
    );
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    assert_eq!(package_row(&report, "Agentenv_Grader")["version"], "2.0");
}

#[cfg(unix)]
#[test]
fn each_path_directory_is_read_once() {
    let mut sb = Sandbox::new();
    sb.path_manifest(
        "grader",
        &step_plugin("agentenv-grader", "1.0", &["a_step"]),
    );
    let link = sb.dir().join("bin-link");
    std::os::unix::fs::symlink(sb.bin(), &link).unwrap();
    let bin = sb.bin();
    sb.path = vec![
        bin.clone(),
        std::path::PathBuf::from(""),
        std::path::PathBuf::from("relative/bin"),
        link.clone(),
        bin.join("."),
        bin,
    ];
    std::fs::create_dir_all(sb.dir().join("work/relative/bin")).unwrap();
    std::fs::write(
        sb.dir().join("work/relative/bin/agent-env-plugin-rel.toml"),
        step_plugin("agentenv-relative", "1", &["r_step"]),
    )
    .unwrap();
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    assert_eq!(report["plugins"].as_array().unwrap().len(), 2, "{report:#}");
    let show = sb.json(
        &["plugin", "show", "agentenv-grader", "--json", "--no-load"],
        0,
    );
    assert_eq!(show["manifest"]["shadowed"], serde_json::json!([]));
    assert_eq!(show["manifest"]["source"], "PATH");
}

/// A conflict with a package found through PATH says how to leave that one out: `plugin remove`
/// refuses a package agent-env did not install.
#[test]
fn a_conflict_with_a_plugin_on_path_names_its_manifest() {
    let sb = Sandbox::new();
    sb.plugin_dir_manifest("a", &step_plugin("agentenv-a", "1", &["dup"]));
    let on_path = sb.path_manifest("b", &step_plugin("agentenv-b", "1", &["dup"]));
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    let (status, _, reason) = outcome(&report, "agentenv-a", "dup");
    assert_eq!(status, "conflict");
    assert_eq!(
        reason,
        format!(
            "also registered by 'dup' from agentenv-b 1 (Dup); remove all but one: `agent-env plugin remove <package>` removes a package it installed, but agentenv-b ({}) was found through PATH and agent-env did not install it: remove it with the tool that installed it, or take it off PATH",
            on_path.display()
        )
    );
    // A run names the step type as known, and unusable for that reason.
    let bundle = sb.dir().join("uses-dup");
    std::fs::create_dir_all(bundle.join("tasks")).unwrap();
    std::fs::write(
        bundle.join("tasks/t.json"),
        r#"[{"id": "d", "type": "dup"}]"#,
    )
    .unwrap();
    let ran = sb.run(&["run", bundle.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert_eq!(ran.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the step type 'dup' can't be used: 2 plugins register 'dup'"),
        "{stderr}"
    );
}

#[test]
fn incompatible_core_claims_nothing() {
    let sb = Sandbox::new();
    let mut old = plugin_table("agentenv-old", "0.1", "[\"x\"]");
    old = old.replace(
        "protocol = [1, 1]\n",
        "protocol = [1, 1]\nrequires = { agentenv-framework = \">=99.0\", AgentEnv_Framework_Protocol = \"<1\" }\n",
    );
    old.push_str("[provides.task_steps]\ndup = \"Old\"\n");
    sb.plugin_dir_manifest("old", &old);
    sb.plugin_dir_manifest("a", &step_plugin("agentenv-a", "1", &["dup"]));
    sb.plugin_dir_manifest("b", &step_plugin("agentenv-b", "1", &["dup"]));
    let future = plugin_table("agentenv-future", "9", "[\"x\"]")
        .replace("protocol = [1, 1]", "protocol = [5, 6]")
        + "[provides.envs]\nfuture_env = \"F\"\n";
    sb.plugin_dir_manifest("future", &future);
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    assert_eq!(
        outcome(&report, "agentenv-old", "dup"),
        (
            "failed".into(),
            "incompatible-core".into(),
            format!("needs agentenv-framework>=99.0 (installed: {VERSION}); agentenv-framework-protocol<1 (installed: 1.0.0)")
        )
    );
    // Scenario 5: the incompatible claim takes no part in the conflict.
    let (status, code, reason) = outcome(&report, "agentenv-a", "dup");
    assert_eq!(
        (status.as_str(), code.as_str()),
        ("conflict", "name-conflict")
    );
    assert_eq!(
        reason,
        "also registered by 'dup' from agentenv-b 1 (Dup); remove all but one with `agent-env plugin remove <package>`"
    );
    let (_, code, reason) = outcome(&report, "agentenv-future", "future_env");
    assert_eq!(code, "incompatible-core");
    assert_eq!(reason, "needs agent-env protocol 5-6 (installed: 1)");

    // Scenario 16: show matches by canonical name; requires: lists the core requirement verbatim.
    let show = sb.stdout(&["plugin", "show", "AgentEnv_Old", "--no-load"], 0);
    assert!(show.starts_with("agentenv-old 0.1\n"), "{show}");
    assert!(
        show.contains(&format!("  requires: agentenv-framework>=99.0 (installed {VERSION}); AgentEnv_Framework_Protocol<1 (installed 1.0.0)\n")),
        "{show}"
    );
    // As the original: a plugin that declares nothing still shows the installed core.
    let show = sb.stdout(&["plugin", "show", "agentenv-b", "--no-load"], 0);
    assert!(
        show.contains(&format!(
            "  requires: no agent-env requirement declared (installed {VERSION})\n"
        )),
        "{show}"
    );

    // A requirement that does not parse is a manifest error.
    let bad = plugin_table("agentenv-bad", "1", "[\"x\"]").replace(
        "protocol = [1, 1]\n",
        "protocol = [1, 1]\nrequires = { agentenv-framework = \"latest please\" }\n",
    );
    sb.plugin_dir_manifest("bad", &bad);
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    let (_, code, reason) = outcome(&report, "bad", "agent-env-plugin.toml");
    assert_eq!(code, "manifest-invalid");
    assert!(
        reason.contains("plugin.requires.agentenv-framework"),
        "{reason}"
    );
}

#[test]
fn scenarios_2_and_3_builtin_names_and_conflicts() {
    let sb = Sandbox::new();
    let env = |name: &str| {
        format!(
            "{}[provides.envs]\nmcp_server = \"GradeEssay\"\nbrowser = \"Browser\"\n",
            plugin_table(name, "1.0", "[\"x\"]")
        )
    };
    sb.plugin_dir_manifest("a", &env("agentenv-a"));
    sb.plugin_dir_manifest("b", &env("agentenv-b"));
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    let (s, c, r) = outcome(&report, "agentenv-a", "mcp_server");
    assert_eq!(
        (s.as_str(), c.as_str(), r.as_str()),
        ("skipped", "builtin-name", "reserved for a built-in env type of the Python agent-env, which this agent-env does not have; the plugin must use another name")
    );
    let mcp = crate::support::plugins::contribution(&report, "agentenv-a", "mcp_server");
    assert_eq!(mcp["conflicts_with"], serde_json::json!([]));
    let browser = crate::support::plugins::contribution(&report, "agentenv-a", "browser");
    assert_eq!(browser["status"], "conflict");
    assert_eq!(
        browser["conflicts_with"],
        serde_json::json!([{"package": "agentenv-b", "version": "1.0", "value": "Browser"}])
    );
    let browser_b = crate::support::plugins::contribution(&report, "agentenv-b", "browser");
    assert_eq!(browser_b["conflicts_with"][0]["package"], "agentenv-a");

    let text = sb.stdout(&["plugin", "list", "--no-load"], 0);
    assert!(
        text.contains(
            "agentenv-a          1.0      env browser, env mcp_server  1 conflict, 1 skipped"
        ),
        "{text}"
    );
    let out = sb.run(&["plugin", "check", "--no-load"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error: 4 plugin contribution(s) did not take effect"
    );
}

#[test]
fn cli_commands_and_root_options_keep_the_cores_names() {
    let sb = Sandbox::new();
    let text = format!(
        "{}[provides.cli_plugins]\nplugin = \"tools\"\nmy-tools = \"tools\"\n[provides.cli_root_options]\nverbose = \"v\"\ntenant = \"TenantOption\"\n",
        plugin_table("agentenv-demo", "1.0", "[\"x\"]")
    );
    sb.plugin_dir_manifest("demo", &text);
    sb.plugin_dir_manifest(
        "opts",
        &format!(
            "{}[provides.cli_root_options]\ntenant = \"Tenant2\"\n",
            plugin_table("agentenv-opts", "2.0", "[\"x\"]")
        ),
    );
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    assert_eq!(
        outcome(&report, "agentenv-demo", "plugin"),
        (
            "skipped".into(),
            "builtin-name".into(),
            "clashes with existing command 'plugin'".into()
        )
    );
    assert_eq!(
        outcome(&report, "agentenv-demo", "verbose"),
        (
            "skipped".into(),
            "builtin-name".into(),
            "clashes with core root option '--verbose'".into()
        )
    );
    assert_eq!(
        outcome(&report, "agentenv-demo", "tenant"),
        (
            "conflict".into(),
            "name-conflict".into(),
            "root option '--tenant' is also registered by 'tenant' from 'agentenv-opts'".into()
        )
    );
    assert_eq!(outcome(&report, "agentenv-demo", "my-tools").0, "unloaded");
    // The core's own plugin command still works.
    sb.stdout(&["plugin", "check", "--help"], 0);
}

#[test]
fn bundles_resolve_to_folders_even_without_loading() {
    let sb = Sandbox::new();
    let text = format!(
        "{}[provides.bundles]\ntriage = \"bundles/triage\"\nmissing = \"bundles/missing\"\nempty = \"bundles/empty\"\nhello = \"bundles/hello\"\n",
        plugin_table("agentenv-demo", "1.0", "[\"x\"]")
    );
    let manifest = sb.plugin_dir_manifest("demo", &text);
    let root = manifest.parent().unwrap();
    std::fs::create_dir_all(root.join("bundles/triage/tasks")).unwrap();
    std::fs::create_dir_all(root.join("bundles/hello/tasks")).unwrap();
    std::fs::create_dir_all(root.join("bundles/empty")).unwrap();
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    assert_eq!(outcome(&report, "agentenv-demo", "triage").0, "active");
    let (s, c, r) = outcome(&report, "agentenv-demo", "missing");
    assert_eq!((s.as_str(), c.as_str()), ("failed", "invalid-plugin"));
    assert!(r.contains("does not exist"), "{r}");
    let (_, _, r) = outcome(&report, "agentenv-demo", "empty");
    assert!(r.starts_with("it isn't a valid bundle: "), "{r}");
    assert_eq!(
        outcome(&report, "agentenv-demo", "hello"),
        (
            "active".into(),
            "qualified-only".into(),
            "another package also installs 'hello', so run this one as 'agentenv-demo/hello'"
                .into()
        )
    );
    let out = sb.run(&["plugin", "check", "--no-load"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn check_passes_when_everything_is_in_effect() {
    let sb = Sandbox::new();
    let text = format!(
        "{}[provides.bundles]\ntriage = \"bundles/triage\"\n",
        plugin_table("agentenv-demo", "1.0", "[\"x\"]")
    );
    let manifest = sb.plugin_dir_manifest("demo", &text);
    std::fs::create_dir_all(manifest.parent().unwrap().join("bundles/triage/evals")).unwrap();
    let text = sb.stdout(&["plugin", "check", "--no-load"], 0);
    assert_eq!(
        text,
        "ok: 2 plugin package(s), 2 contribution(s), all in effect\n"
    );
    let doc = sb.json(&["plugin", "check", "--no-load", "--json"], 0);
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["problems"], serde_json::json!([]));
}

#[test]
fn scenario_13_a_missing_config_blocks_every_group_with_claims() {
    let mut sb = Sandbox::new();
    sb.plugin_dir_manifest(
        "grader",
        &step_plugin("agentenv-grader", "1.0", &["grade_essay"]),
    );
    sb.set("AGENT_ENV_CONFIG", "/nope.toml");
    let text = sb.stdout(&["plugin", "list", "--no-load"], 0);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1], "config: (none)");
    assert_eq!(
        lines[2],
        "(error) AGENT_ENV_CONFIG='/nope.toml' does not point to an existing file; unset AGENT_ENV_CONFIG or point it at a config file [config-not-found]"
    );
    assert!(text.contains("\n(error) nothing in agent_env.task_steps loads: ConfigError: AGENT_ENV_CONFIG='/nope.toml' does not point to an existing file; unset AGENT_ENV_CONFIG or point it at a config file [config-not-found]\n"), "{text}");
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    assert_eq!(report["config"]["error"]["code"], "config-not-found");
    assert_eq!(
        report["group_errors"]["agent_env.task_steps"]["code"],
        "config-not-found"
    );
    assert_eq!(
        outcome(&report, "agentenv-grader", "grade_essay").0,
        "blocked"
    );
    let out = sb.run(&["plugin", "check", "--no-load"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the config could not be read"), "{stderr}");
}

/// With no plugin installed, `plugin show` of a name that is not there lists the packages `plugin
/// list` lists, agent-env's own `agentenv-framework` (whose bundle `hello` it shows) among them, as
/// `show` takes its name too; it said "installed: none". `plugin verify`, which takes no built-in,
/// says none is installed.
#[test]
fn show_of_an_unknown_package_lists_what_plugin_list_lists() {
    let sb = Sandbox::new();
    let listed = sb.stdout(&["plugin", "list"], 0);
    assert!(listed.contains("\nagentenv-framework "), "{listed}");
    let out = sb.run(&["plugin", "show", "nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error: no installed plugin package named 'nosuch' (installed: agentenv-framework)"
    );
    let out = sb.run(&["plugin", "verify", "nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no installed plugin package named 'nosuch'")
            && stderr.contains("(installed: none)"),
        "{stderr}"
    );
}

/// `plugin show | verify | remove | approve` of a name no installed package has say it in one sentence,
/// and offer the installed package a near miss was meant to name.
#[test]
fn every_plugin_command_says_not_installed_alike_and_offers_a_near_miss() {
    let sb = Sandbox::new();
    sb.plugin_dir_manifest(
        "grader",
        &step_plugin("agentenv-grader", "1.0", &["grade_essay"]),
    );
    for command in ["show", "verify", "remove", "approve"] {
        let out = sb.run(&["plugin", command, "agentenv-gradr"]);
        assert_eq!(out.status.code(), Some(1), "plugin {command}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        // `show` lists agent-env's own package too, as `plugin list` does: it shows it.
        let installed = match command {
            "show" => "agentenv-framework, agentenv-grader",
            _ => "agentenv-grader",
        };
        assert!(
            stderr.starts_with(&format!("Error: no installed plugin package named 'agentenv-gradr'; did you mean 'agentenv-grader'? (installed: {installed})")),
            "plugin {command}: {stderr}"
        );
    }
    // The name without its prefix is a near miss too.
    // `show` diagnoses agent-env's own built-ins too, so it offers their name.
    let out = sb.run(&["plugin", "show", "agentenv-framwork"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("Error: no installed plugin package named 'agentenv-framwork'; did you mean 'agentenv-framework'? (installed: agentenv-framework, agentenv-grader)"),
        "{stderr}"
    );
    let out = sb.run(&["plugin", "remove", "gradr"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("did you mean 'agentenv-grader'?"),
        "{stderr}"
    );
}

#[test]
fn scenario_15_show_of_an_unknown_package_and_usage_errors() {
    let sb = Sandbox::new();
    sb.plugin_dir_manifest(
        "grader",
        &step_plugin("agentenv-grader", "1.0", &["grade_essay"]),
    );
    let out = sb.run(&["plugin", "show", "nope", "--no-load"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error: no installed plugin package named 'nope' (installed: agentenv-framework, agentenv-grader)"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(
        sb.run(&["plugin", "list", "--bogus"]).status.code(),
        Some(2)
    );
    assert_eq!(sb.run(&["plugin", "show"]).status.code(), Some(2));
    let core = sb.stdout(&["plugin", "show", "agentenv-framework", "--no-load"], 0);
    assert!(
        core.starts_with(&format!(
            "agentenv-framework {VERSION}\n  agent-env itself\n"
        )),
        "{core}"
    );
    assert!(core.contains("  bundle  hello  "), "{core}");
    // agent-env itself has no process of its own to speak of.
    let loaded = sb.stdout(&["plugin", "show", "agentenv-framework"], 0);
    assert!(!loaded.contains("runs in its own process"), "{loaded}");
}

#[test]
fn verbose_prints_the_registry_warnings() {
    let sb = Sandbox::new();
    sb.plugin_dir_manifest(
        "a",
        &format!(
            "{}[provides.envs]\nmcp_server = \"X\"\n",
            plugin_table("agentenv-a", "1.0", "[\"x\"]")
        ),
    );
    let quiet = sb.run(&["plugin", "list", "--no-load"]);
    assert!(quiet.stderr.is_empty());
    let loud = sb.run(&["--verbose", "plugin", "list", "--no-load"]);
    assert_eq!(
        String::from_utf8_lossy(&loud.stderr),
        "Warning: Plugin 'mcp_server' from agentenv-a 1.0 (X) in agent_env.envs was skipped: the name is reserved for a built-in env type of the Python agent-env, which this agent-env does not have; the plugin must use another name\n"
    );
}

/// A plugins folder that cannot be read hides every plugin installed there: the report says so as a
/// failure of its own, and `plugin check` fails, instead of listing none.
#[test]
fn a_plugins_folder_that_cannot_be_read_fails_the_report() {
    let sb = Sandbox::new();
    let dir = sb.plugins_dir();
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    // Root reads any folder, so the folder is made unreadable the way root cannot read it either: a
    // link to itself.
    std::os::unix::fs::symlink(&dir, &dir).unwrap();
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let (status, code, reason) = outcome(&report, &name, &name);
    assert_eq!(
        (status.as_str(), code.as_str()),
        ("failed", "manifest-invalid")
    );
    assert!(
        reason.contains("the plugins folder cannot be read (")
            && reason.contains("so no plugin installed there is found"),
        "{reason}"
    );
    let out = sb.run(&["plugin", "check", "--no-load"]);
    assert_eq!(out.status.code(), Some(1));
}

/// A plugins directory that is a file holds no plugin: every command that reads it warns once, naming
/// the file and what to do, with no package named after the file and no advice about its pins; `plugin
/// add` and `remove` refuse before they plan anything.
#[test]
fn a_plugins_directory_that_is_a_file_is_said_once_and_refuses_changes() {
    let mut sb = Sandbox::new();
    let file = sb.dir().join("afile");
    std::fs::write(&file, "not a folder").unwrap();
    sb.set("AGENT_ENV_PLUGIN_DIR", file.to_str().unwrap());
    let said = format!(
        "the plugins directory {} is a file, not a folder; move the file away, or set AGENT_ENV_PLUGIN_DIR to a folder",
        file.display()
    );
    let out = sb.run(&["plugin", "list", "--no-load"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("Warning: {said} (until then, no plugin installed there is found)\n")
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    // No row of a package named after the file.
    assert!(
        !stdout.contains("\nafile") && !stdout.contains("failed"),
        "{stdout}"
    );
    let show = sb.run(&["plugin", "show", "afile", "--no-load"]);
    assert_eq!(show.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&show.stderr);
    assert!(!stderr.contains("chmod"), "{stderr}");
    let folder = sb.dir().join("x");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("agent-env-plugin.toml"),
        step_plugin("agentenv-x", "1.0", &["x_step"]),
    )
    .unwrap();
    for args in [
        ["plugin", "add", folder.to_str().unwrap(), "--dry-run"],
        ["plugin", "remove", "agentenv-x", "--dry-run"],
    ] {
        let out = sb.run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("Will"), "{args:?}: {stdout}");
        assert!(
            String::from_utf8_lossy(&out.stderr).ends_with(&format!("Error: {said}\n")),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A step name only the Python agent-env has built in (`prompt_agent`) is skipped as reserved, with a
/// reason that says this agent-env does not have the step and the plugin must rename its own; a name
/// this agent-env runs itself (`deploy_sandbox`) still clashes with a built-in.
#[test]
fn a_step_name_reserved_for_the_python_agent_env_says_so() {
    let sb = Sandbox::new();
    sb.plugin_dir_manifest(
        "a",
        &step_plugin("agentenv-a", "1.0", &["prompt_agent", "deploy_sandbox"]),
    );
    let report = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    assert_eq!(
        outcome(&report, "agentenv-a", "prompt_agent"),
        (
            "skipped".to_string(),
            "builtin-name".to_string(),
            "reserved for a built-in step of the Python agent-env, which this agent-env does not have; the plugin must use another name".to_string()
        )
    );
    assert_eq!(
        outcome(&report, "agentenv-a", "deploy_sandbox"),
        (
            "skipped".to_string(),
            "builtin-name".to_string(),
            "clashes with a built-in".to_string()
        )
    );
    let loud = sb.run(&["--verbose", "plugin", "list", "--no-load"]);
    let err = String::from_utf8_lossy(&loud.stderr);
    assert!(
        err.contains("Warning: Plugin 'prompt_agent' from agentenv-a 1.0 (PromptAgent) in agent_env.task_steps was skipped: the name is reserved for a built-in step of the Python agent-env, which this agent-env does not have; the plugin must use another name\n"),
        "{err}"
    );
}

/// A package whose manifest provides nothing (which `plugin add` refuses) but was put in the plugins
/// directory by hand is no plugin: `plugin list` says so in its STATUS, and `list`, `show` and `check`
/// warn of it, coded, with what to do, rather than calling it `ok`.
#[test]
fn a_package_that_provides_nothing_is_warned_of_and_not_ok() {
    let sb = Sandbox::new();
    let manifest = sb.plugin_dir_manifest(
        "nothing",
        &plugin_table("agentenv-nothing", "0.1.0", "[\"x\"]"),
    );
    let warning = format!(
        "agentenv-nothing 0.1.0 declares no contributions and no stores, so it is not an agent-env plugin and \
         nothing here uses it: declare what it provides under [provides.<group>] in its manifest ({}), or remove it \
         [provides-nothing]",
        manifest.display()
    );
    let out = sb.run(&["plugin", "list", "--no-load"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text
        .lines()
        .find(|l| l.starts_with("agentenv-nothing"))
        .unwrap_or_else(|| panic!("no row in {text}"))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(row, "agentenv-nothing 0.1.0 provides nothing");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&warning), "{err}");
    let doc = sb.json(&["plugin", "list", "--json", "--no-load"], 0);
    assert!(
        doc["warnings"]
            .as_array()
            .is_some_and(|w| w.contains(&Value::from(warning.clone()))),
        "{doc:#}"
    );
    let doc = sb.json(&["plugin", "check", "--json", "--no-load"], 0);
    assert!(
        doc["warnings"]
            .as_array()
            .is_some_and(|w| w.contains(&Value::from(warning.clone()))),
        "{doc:#}"
    );
    let out = sb.run(&["plugin", "show", "agentenv-nothing", "--no-load"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&warning), "{err}");
}
