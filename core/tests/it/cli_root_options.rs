//! `[provides.cli_root_options]`: flags that may select the config file for the whole invocation, and the
//! clash and failure rules (reference §7).

use crate::support::cli::{outcome, stderr, stdout, text, Sandbox};

const TENANT: &str = "[provides.cli_plugins]\nput = \"Put\"\nwhich-config = \"Config\"\ntool = \"Tool\"\n[provides.cli_root_options]\ntenant = { class = \"TenantOption\", description = \"Select a tenant\", value = \"NAME\" }\noffline = { class = \"Offline\", description = \"Work offline\" }\n";

fn tenant_sandbox() -> Sandbox {
    let s = Sandbox::new();
    s.tools("agentenv-tenant", TENANT);
    let objects = s.dir().join("acme-objects");
    s.write(
        "data/tenants/acme.toml",
        &format!(
            "[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = {{ root = \"{}\" }}\n",
            objects.display()
        ),
    );
    s.write("data/offline.toml", "");
    s
}

#[test]
fn a_root_option_selects_the_config_for_the_whole_invocation() {
    let s = tenant_sandbox();
    let out = s.run(&["--tenant", "acme", "put", "for acme"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stored = s.dir().join("acme-objects/cli/greeting.txt");
    assert_eq!(std::fs::read_to_string(stored).expect("stored"), "for acme");
    // `--tenant=acme` too, and core commands read the same file.
    let out = s.run(&["--tenant=acme", "config", "show"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(stdout(&out).contains("tenants/acme.toml"), "{}", text(&out));
    // The plugins it starts see it as well.
    let out = s.run(&["--tenant", "acme", "which-config"]);
    let acme = s.data().join("tenants/acme.toml");
    assert_eq!(stdout(&out), format!("config={}\n", acme.display()));
}

#[test]
fn an_unknown_tenant_is_a_config_error_on_first_use_but_help_still_works() {
    let s = tenant_sandbox();
    let out = s.run(&["--tenant", "nope", "put", "x"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(stderr(&out).contains("ConfigError"), "{}", text(&out));
    assert!(
        stderr(&out)
            .contains("CLI root option '--tenant' from 'agentenv-tenant' chose the config file '")
            && stderr(&out).contains("tenants/nope.toml', which does not exist"),
        "{}",
        text(&out)
    );
    assert!(!stderr(&out).contains("AGENT_ENV_CONFIG"), "{}", text(&out));
    let out = s.run(&["--tenant", "nope", "--help"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(stdout(&out).contains("--tenant <NAME>"), "{}", text(&out));
    assert!(stdout(&out).contains("Select a tenant"), "{}", text(&out));
}

/// `config show`, `config sources` and `config debug`, text and JSON, credit the file a root option
/// chose to that option (not to `$AGENT_ENV_CONFIG`, which nobody set), and `config debug` lists it
/// first, chosen over the file walking up finds; with the variable really set, it is credited.
#[test]
fn config_views_credit_the_file_a_root_option_chose_to_the_option() {
    let mut s = tenant_sandbox();
    let walked = s.write("work/.agentenv/config.toml", "");
    let acme = s.data().join("tenants/acme.toml");
    let by = "CLI root option '--tenant' from 'agentenv-tenant'";
    let json = |s: &Sandbox, args: &[&str]| -> serde_json::Value {
        let out = s.run(args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", text(&out)))
    };

    let out = s.run(&["--tenant", "acme", "config", "show"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        stdout(&out).contains(&format!("{}\n", acme.display()))
            && stdout(&out).contains(&format!("via {by}\n")),
        "{}",
        text(&out)
    );
    assert!(!stdout(&out).contains("AGENT_ENV_CONFIG"), "{}", text(&out));
    let show = json(&s, &["--tenant", "acme", "config", "show", "--json"]);
    assert_eq!(show["config_path"], acme.display().to_string(), "{show:#}");
    assert_eq!(show["config_source"], "root-option", "{show:#}");
    assert_eq!(show["config_chosen_by"], by, "{show:#}");

    let out = s.run(&["--tenant", "acme", "config", "sources"]);
    assert!(
        stdout(&out).contains(&format!("-> file {}  (via {by})\n", acme.display())),
        "{}",
        text(&out)
    );
    let layers = json(&s, &["--tenant", "acme", "config", "sources", "--json"]);
    assert_eq!(layers[1]["kind"], "file", "{layers:#}");
    assert_eq!(layers[1]["how"], format!("via {by}"), "{layers:#}");

    let out = s.run(&["--tenant", "acme", "config", "debug"]);
    let listed = stdout(&out);
    assert_eq!(
        listed.lines().next(),
        Some(format!("-> {} (via {by}, exists: yes)", acme.display()).as_str()),
        "{listed}"
    );
    assert_eq!(listed.matches("-> ").count(), 1, "{listed}");
    assert!(
        listed.contains(&format!("   {} (walk-up, exists: yes)", walked.display())),
        "{listed}"
    );
    let candidates = json(&s, &["--tenant", "acme", "config", "debug", "--json"]);
    assert_eq!(
        candidates[0],
        serde_json::json!({"path": acme.display().to_string(), "via": "root-option",
                           "chosen_by": by, "exists": true, "chosen": true}),
        "{candidates:#}"
    );
    let chosen = candidates.as_array().unwrap().iter();
    assert_eq!(chosen.filter(|c| c["chosen"] == true).count(), 1);

    // The variable really set: credited to it, as before.
    s.set("AGENT_ENV_CONFIG", &acme.display().to_string());
    let show = json(&s, &["config", "show", "--json"]);
    assert_eq!(show["config_source"], "env", "{show:#}");
    assert_eq!(show["config_chosen_by"], serde_json::Value::Null);
    assert!(stdout(&s.run(&["config", "show"])).contains("via $AGENT_ENV_CONFIG\n"));
    let candidates = json(&s, &["config", "debug", "--json"]);
    assert_eq!(
        candidates[0],
        serde_json::json!({"path": acme.display().to_string(), "via": "env",
                           "exists": true, "chosen": true}),
        "{candidates:#}"
    );
}

#[test]
fn a_boolean_root_option_takes_no_value() {
    let s = tenant_sandbox();
    let out = s.run(&["--offline", "which-config"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let offline = s.data().join("offline.toml");
    assert_eq!(stdout(&out), format!("config={}\n", offline.display()));
    assert!(stdout(&s.run(&["--help"])).contains("--offline"));
}

#[test]
fn an_absent_flag_starts_no_plugin() {
    let s = Sandbox::new();
    s.tools(
        "agentenv-tools",
        "[provides.cli_plugins]\ntool = \"Tool\"\n",
    );
    s.plugin(
        "agentenv-gone",
        "[\"/nonexistent/agentenv-gone\"]",
        "[provides.cli_root_options]\ntenant = { class = \"T\", value = \"NAME\" }\n",
    );
    let out = s.run(&["tool"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(stderr(&out), "", "{}", text(&out));
    // Given, its failure names the plugin.
    let out = s.run(&["--tenant", "acme", "tool"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).starts_with("Error: CLI root option '--tenant' from 'agentenv-gone' failed: "),
        "{}",
        text(&out)
    );
    // The report still says it cannot work.
    let report = s.report("list");
    let (status, code, reason) = outcome(&report, "agentenv-gone", "cli_root_options", "tenant");
    assert_eq!((status.as_str(), code.as_str()), ("failed", "load-failed"));
    assert!(
        reason.starts_with("its callback failed with the flag absent: "),
        "{reason}"
    );
}

#[test]
fn a_root_option_on_a_core_flag_is_skipped() {
    let s = Sandbox::new();
    s.tools(
        "agentenv-tools",
        "[provides.cli_plugins]\ntool = \"Tool\"\n[provides.cli_root_options]\nverbose = \"V\"\n",
    );
    let out = s.run(&["--verbose", "tool"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        stderr(&out).contains("Warning: CLI root option '--verbose' from 'agentenv-tools' clashes with core root option '--verbose' and was skipped"),
        "{}",
        text(&out)
    );
    for what in ["list", "check"] {
        assert_eq!(
            outcome(
                &s.report(what),
                "agentenv-tools",
                "cli_root_options",
                "verbose"
            ),
            (
                "skipped".into(),
                "builtin-name".into(),
                "clashes with core root option '--verbose'".into()
            )
        );
    }
}

#[test]
fn two_plugins_on_one_flag_are_both_left_off_and_the_cli_still_starts() {
    let s = Sandbox::new();
    s.tools(
        "agentenv-opts",
        "[provides.cli_plugins]\ntool = \"Tool\"\n[provides.cli_root_options]\ntenant = { class = \"T1\", value = \"NAME\" }\n",
    );
    s.tools(
        "agentenv-tenant",
        "[provides.cli_root_options]\n\"--tenant\" = { class = \"T2\", value = \"NAME\" }\n",
    );
    let out = s.run(&["tool"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Neither is attached.
    let out = s.run(&["--tenant", "x", "tool"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!stdout(&s.run(&["--help"])).contains("--tenant"));
    let report = s.report("list");
    let opts = outcome(&report, "agentenv-opts", "cli_root_options", "tenant");
    assert_eq!(
        opts,
        (
            "conflict".into(),
            "name-conflict".into(),
            "root option '--tenant' is also registered by '--tenant' from 'agentenv-tenant'".into()
        )
    );
    let other = outcome(&report, "agentenv-tenant", "cli_root_options", "--tenant");
    assert_eq!(
        other,
        (
            "conflict".into(),
            "name-conflict".into(),
            "root option '--tenant' is also registered by 'tenant' from 'agentenv-opts'".into()
        )
    );
}

#[test]
fn a_callback_that_fails_with_its_flag_absent_is_reported_and_skipped() {
    let s = Sandbox::new();
    s.tools(
        "agentenv-tools",
        "[provides.cli_plugins]\ntool = \"Tool\"\n[provides.cli_root_options]\nboom = \"Boom\"\n",
    );
    // Not `always`: an invocation without the flag does not call it.
    let out = s.run(&["tool"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for what in ["list", "check"] {
        assert_eq!(
            outcome(
                &s.report(what),
                "agentenv-tools",
                "cli_root_options",
                "boom"
            ),
            (
                "failed".into(),
                "load-failed".into(),
                "its callback failed with the flag absent: RuntimeError('boom')".into()
            )
        );
    }
    assert_eq!(s.run(&["plugin", "check"]).status.code(), Some(1));
    // Given, the error names the plugin.
    let out = s.run(&["--boom", "tool"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(
        stderr(&out),
        "Error: CLI root option '--boom' from 'agentenv-tools' failed: RuntimeError('boom')\n"
    );
}

#[test]
fn an_always_option_is_called_with_its_flag_absent_and_skipped_with_a_warning_when_it_fails() {
    let s = Sandbox::new();
    s.tools(
        "agentenv-tools",
        "[provides.cli_plugins]\ntool = \"Tool\"\n[provides.cli_root_options]\nboom = { class = \"Boom\", always = true }\n",
    );
    let out = s.run(&["tool"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(stdout(&out), "agentenv-tools argv=[]\n");
    assert!(
        stderr(&out).contains("Warning: CLI root option '--boom' from 'agentenv-tools' failed with its flag absent and was skipped: RuntimeError('boom')"),
        "{}",
        text(&out)
    );
    // A core command with no plugin flag reads no manifest, so it is not called there.
    let out = s.run(&["config", "show"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!stderr(&out).contains("boom"), "{}", text(&out));
    // Given, it fails the invocation, core command or not.
    let out = s.run(&["--boom", "config", "show"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
}

#[test]
fn a_core_command_after_a_root_option_sees_every_group_of_every_manifest() {
    // The command tree reads the manifests for the CLI groups only; the core command it hands them to
    // must still report the rest.
    let s = Sandbox::new();
    s.tools(
        "agentenv-tenant",
        &format!("{TENANT}[provides.task_steps]\nstamp = \"Stamp\"\n"),
    );
    s.write("data/offline.toml", "");
    let out = s.run(&["--offline", "plugin", "list", "--json", "--no-load"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let (status, _, _) = outcome(&report, "agentenv-tenant", "task_steps", "stamp");
    assert_eq!(status, "unloaded", "{report}");
    let (status, _, _) = outcome(&report, "agentenv-tenant", "cli_plugins", "tool");
    assert_eq!(status, "unloaded", "{report}");
}

/// `plugin show` of a plugin with root options says they can choose the config file, naming their
/// flags; the JSON says it as `config_effect`.
#[test]
fn show_says_a_plugins_root_options_can_choose_the_config() {
    let s = tenant_sandbox();
    let said = "its root options (--offline, --tenant) can choose the config file agent-env reads: a config_path their callback answers becomes AGENT_ENV_CONFIG for the rest of the invocation and every plugin it starts";
    let out = s.run(&["plugin", "show", "agentenv-tenant", "--no-load"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        stdout(&out).contains(&format!("\n  config:   {said}\n")),
        "{}",
        text(&out)
    );
    let out = s.run(&["plugin", "show", "agentenv-tenant", "--no-load", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(doc["config_effect"], said);
}
