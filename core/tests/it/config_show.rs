//! Black-box tests of `agent-env config show` and `config explain`: the built binary, a temporary project,
//! a temporary home, and nothing of the real environment.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::IsolatedDirs;

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Project {
    /// A project whose `.agentenv/config.toml` holds `config`, with a `sub/dir` to run from.
    fn new(config: &str) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("proj");
        let home = base.join("home");
        std::fs::create_dir_all(root.join(".agentenv")).unwrap();
        std::fs::create_dir_all(root.join("sub/dir")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(root.join(".agentenv/config.toml"), config).unwrap();
        Project {
            _dir: dir,
            root,
            home,
        }
    }

    fn config_path(&self) -> PathBuf {
        self.root.join(".agentenv/config.toml")
    }

    fn command(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-env"));
        cmd.env_clear();
        IsolatedDirs {
            home: self.home.clone(),
            xdg_data: self.home.join("data"),
            xdg_state: self.home.join(".local/state"),
            xdg_config: self.home.join("config"),
            plugins: self.home.join("plugins"),
        }
        .apply(&mut cmd)
        .current_dir(cwd)
        .args(args);
        cmd
    }

    /// Runs from `sub/dir` with extra variables; returns (exit code, stdout, stderr).
    fn run_with(&self, vars: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
        let mut cmd = self.command(&self.root.join("sub/dir"), args);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        self.run_with(&[], args)
    }

    fn json(&self, vars: &[(&str, &str)], args: &[&str]) -> serde_json::Value {
        let (code, out, err) = self.run_with(vars, args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    }
}

/// The text after the padded label on the line that starts with `label:`.
fn section_line<'a>(out: &'a str, label: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(&format!("{label}:")))
        .unwrap_or_else(|| panic!("no {label}: line in\n{out}"))
}

#[test]
fn scenario_24_from_a_subdirectory_walks_up_in_fixed_order_with_width_15() {
    let p = Project::new("[model]\nbase_url = \"http://localhost:4000\"\n");
    let (code, out, _) = p.run(&["config", "show"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        format!("config:         {}", p.config_path().display())
    );
    assert_eq!(
        lines[1],
        "                discovered by walking up from the working directory"
    );
    assert_eq!(lines[2], "");
    let order = [
        "document",
        "object",
        "image",
        "secret",
        "runner",
        "model",
        "conversations",
        "agents",
        "sandbox",
        "state",
        "envs",
        "artifacts",
        "task_steps",
        "explorer",
        "plugins",
        "runs",
    ];
    let labels: Vec<&str> = lines
        .iter()
        .filter(|l| !l.starts_with(' ') && !l.is_empty())
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(labels[0], "config");
    assert_eq!(&labels[1..], order);
    // Values start in column 16: the label padded to 15, then one space.
    for line in lines
        .iter()
        .filter(|l| !l.starts_with(' ') && !l.is_empty())
    {
        assert_eq!(line.chars().nth(15), Some(' '), "{line}");
        assert_ne!(line.chars().nth(16), Some(' '), "{line}");
    }
    assert!(out.contains("conversations:  (unset)\n"));
    for store in ["document", "object", "image", "secret"] {
        let at = lines
            .iter()
            .position(|l| l.starts_with(&format!("{store}:")))
            .unwrap();
        assert_eq!(lines[at + 1], "                from built-in default");
    }
    assert_eq!(
        section_line(&out, "object"),
        "object:         LocalFilesystemObjectStore  root=~/.local/state/agent-env/object_store"
    );
    assert_eq!(
        section_line(&out, "image"),
        "image:          LocalRegistryImageStore  registry_host=localhost:5000"
    );
    assert!(out.contains(
        "model:          base_url=http://localhost:4000\n                from [model]\n"
    ));
}

#[test]
fn the_reference_layout_with_warnings_masking_and_plugin_tables() {
    let p = Project::new(
        r#"
[stores.secret]
impl = "agent_env.store.secret_store:LocalSecretStore"

[runner]
impl = "agent_env.runner:LocalRunner"
config = { workers = 2 }

[sandbox]
default = "local"
agent_default = "local"
[sandbox.providers.vercel.config]
region = "iad1"
token = "secret:vercel_token"

[envs]
implz = []

[plugin]
x = 1

[plugins.agentenv_browser]
timeout = 30
api_token = "x"
endpoint = "env:BROWSER_URL?http://u:p@localhost:9222"

[plugins.agentenv-browser2]
x = 1
"#,
    );
    let (code, out, _) = p.run(&["config", "show"]);
    assert_eq!(code, 0);
    assert!(out.contains(
        "                (warning) agent-env does not read [plugin]: a plugin's settings go under [plugins.<package>]. Did you mean [plugins]?\n                (warning) [envs] has a key named 'implz', which agent-env does not read. Did you mean 'impls'?\n\ndocument:"
    ), "{out}");
    assert!(
        out.contains("secret:         LocalSecretStore\n                from [stores.secret]\n")
    );
    assert!(out.contains("runner:         LocalRunner  workers=2\n                from [runner]\n"));
    assert!(
        out.contains(
            "sandbox:        default=local  agent_default=local
                providers:
                  vercel:
                    config:
                      region=iad1
                      token=secret:vercel_token
                from [sandbox]
"
        ),
        "{out}"
    );
    assert!(out.contains(
        "envs:\n                implz:\n                  (empty)\n                from [envs]\n"
    ));
    assert!(
        out.contains(
            "plugins:        agentenv-browser (not installed)
                  timeout=30  api_token=***  endpoint=env:BROWSER_URL?http://***@localhost:9222
                  from [plugins.agentenv_browser]
                agentenv-browser2 (not installed)
                  x=1
                  from [plugins.agentenv-browser2]

runs:           agent-env run BUNDLE writes only to the local stores: ~/.local/state/agent-env/document_store/local.db and ~/.local/state/agent-env/object_store
                agent-env task run ID writes to the document and object stores above
"
        ) && out.ends_with("stores above\n"),
        "{out}"
    );
}

#[test]
fn scenario_21_two_spellings_show_as_unresolved_under_the_package() {
    let p = Project::new("[plugins.acme_browser]\na = 1\n\n[plugins.\"acme.browser\"]\nb = 2\n");
    let (code, out, _) = p.run(&["config", "show"]);
    assert_eq!(code, 0);
    assert!(out.contains(
        "plugins:        acme-browser (not installed)
                  (unresolved) config.toml sets acme-browser's settings more than once, as [plugins.acme_browser], [plugins.\"acme.browser\"]; keep one
                  from [plugins.acme_browser], [plugins.\"acme.browser\"]
"
    ), "{out}");
}

#[test]
fn scenario_22_secret_keys_userinfo_and_header_values_are_masked() {
    let p = Project::new(
        "[plugins.acme]\napi_token = \"x\"\nendpoint = \"env:U?http://u:p@h\"\nheaders = { X-Api-Key = \"k\" }\n",
    );
    let (_, out, _) = p.run(&["config", "show"]);
    assert!(
        out.contains("api_token=***  endpoint=env:U?http://***@h\n"),
        "{out}"
    );
    assert!(
        out.contains("headers:\n                    X-Api-Key=***\n"),
        "{out}"
    );
    assert!(!out.contains("u:p@") && !out.contains("=k\n") && !out.contains("=x "));
    let json = p.json(&[], &["config", "show", "--json"]);
    let value = &json["plugins"]["tables"][0]["value"];
    assert_eq!(value["api_token"], "***");
    assert_eq!(value["endpoint"], "env:U?http://***@h");
    assert_eq!(value["headers"]["X-Api-Key"], "***");
}

#[test]
fn the_environment_variable_beats_the_file_and_the_file_is_shadowed() {
    let p = Project::new(
        "[stores.document]\nimpl = \"agent_env.store.document_store:LocalSqliteDocumentStore\"\nconfig = { path = \"/srv/docs.db\" }\n",
    );
    let (_, out, _) = p.run(&["config", "show"]);
    assert!(out.contains(
        "document:       LocalSqliteDocumentStore  path=/srv/docs.db\n                from [stores.document]\n"
    ), "{out}");
    let (_, out, _) = p.run_with(
        &[("AGENT_ENV_DOCUMENT_STORE", "local")],
        &["config", "show"],
    );
    assert!(out.contains(
        "document:       LocalSqliteDocumentStore  path=~/.local/state/agent-env/document_store/documents.db
                from $AGENT_ENV_DOCUMENT_STORE; LocalSqliteDocumentStore in [stores.document], shadowed
"
    ), "{out}");
    let json = p.json(
        &[("AGENT_ENV_DOCUMENT_STORE", "local")],
        &["config", "show", "--json"],
    );
    let document = &json["sections"][0];
    assert_eq!(document["name"], "document");
    assert_eq!(document["winner"]["kind"], "env");
    assert_eq!(document["winner"]["where"], "$AGENT_ENV_DOCUMENT_STORE");
    assert_eq!(document["shadowed"][0]["where"], "[stores.document]");
    assert_eq!(
        document["shadowed"][0]["value"]["config"]["path"],
        "/srv/docs.db"
    );
}

/// An S3 store's settings the AWS variables fill in are each said with the variable they come from,
/// in the text and the JSON, the credentials masked; what the table sets is its own.
#[test]
fn s3_settings_from_the_environment_say_their_variable() {
    let p = Project::new(
        "[stores.object]\nimpl = \"S3ObjectStore\"\nconfig = { bucket = \"team-bucket\", endpoint = \"http://127.0.0.1:9000\" }\n",
    );
    let env = [
        ("AWS_ACCESS_KEY_ID", "AKIAENVKEY0123456789"),
        ("AWS_SECRET_ACCESS_KEY", "EnvSecretKey/0123456789abcdef"),
        ("AWS_SESSION_TOKEN", "EnvSessionToken0123456789"),
        ("AWS_DEFAULT_REGION", "eu-west-3"),
        ("AWS_ENDPOINT_URL", "http://10.1.1.1:9000"),
    ];
    let (code, out, err) = p.run_with(&env, &["config", "show"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(
            "object:         S3ObjectStore  bucket=team-bucket  endpoint=http://127.0.0.1:9000
                from [stores.object]
                region=eu-west-3  from $AWS_DEFAULT_REGION
                access_key_id=***  from $AWS_ACCESS_KEY_ID
                secret_access_key=***  from $AWS_SECRET_ACCESS_KEY
                session_token=***  from $AWS_SESSION_TOKEN
image:"
        ),
        "{out}"
    );
    let json = p.json(&env, &["config", "show", "--json"]);
    let object = &json["sections"][1];
    assert_eq!(object["name"], "object");
    assert_eq!(
        object["from_env"],
        serde_json::json!([
            {"key": "region", "kind": "env", "where": "$AWS_DEFAULT_REGION", "value": "eu-west-3"},
            {"key": "access_key_id", "kind": "env", "where": "$AWS_ACCESS_KEY_ID", "value": "***"},
            {"key": "secret_access_key", "kind": "env", "where": "$AWS_SECRET_ACCESS_KEY", "value": "***"},
            {"key": "session_token", "kind": "env", "where": "$AWS_SESSION_TOKEN", "value": "***"},
        ])
    );
    for args in [&["config", "show"][..], &["config", "show", "--json"]] {
        let (_, out, err) = p.run_with(&env, args);
        for secret in ["AKIAENVKEY", "EnvSecretKey", "EnvSessionToken"] {
            assert!(
                !out.contains(secret) && !err.contains(secret),
                "{args:?}: {out}"
            );
        }
    }
    // `config explain` says the same of the section and of one setting, which it used to call unset.
    let (code, out, err) = p.run_with(&env, &["config", "explain", "stores.object"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("\n  region=eu-west-3  from $AWS_DEFAULT_REGION\n")
            && out.contains("\n  access_key_id=***  from $AWS_ACCESS_KEY_ID\n"),
        "{out}"
    );
    let (_, out, _) = p.run_with(&env, &["config", "explain", "stores.object.config.region"]);
    assert_eq!(
        out,
        "stores.object.config.region = eu-west-3\n  from $AWS_DEFAULT_REGION (the table leaves it to the environment)\n"
    );
    let (_, out, _) = p.run_with(
        &env,
        &["config", "explain", "stores.object.secret_access_key"],
    );
    assert!(
        out.starts_with("stores.object.secret_access_key = ***\n"),
        "{out}"
    );
    let json = p.json(
        &env,
        &["config", "explain", "stores.object.region", "--json"],
    );
    assert_eq!(
        json["from_env"],
        serde_json::json!([{"key": "region", "kind": "env", "where": "$AWS_DEFAULT_REGION", "value": "eu-west-3"}])
    );
    // What the table sets is explained from the table.
    let (_, out, _) = p.run_with(
        &env,
        &["config", "explain", "stores.object.config.endpoint"],
    );
    assert!(!out.contains("$AWS_"), "{out}");

    // With no variable set, nothing comes from the environment; other sections never say so.
    let (_, out, _) = p.run(&["config", "show"]);
    assert!(!out.contains("from $AWS_"), "{out}");
    let json = p.json(&[], &["config", "show", "--json"]);
    assert!(json["sections"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["from_env"] == serde_json::json!([])));
}

#[test]
fn an_unknown_object_store_alias_is_unresolved_with_the_reference_message() {
    let p = Project::new("");
    let (code, out, _) = p.run_with(&[("AGENT_ENV_OBJECT_STORE", "bogus")], &["config", "show"]);
    assert_eq!(code, 0);
    assert_eq!(
        section_line(&out, "object"),
        "object:         (unresolved) Unknown AGENT_ENV_OBJECT_STORE='bogus': expected 'local', or a [stores.object] table for a hosted backend (and unset AGENT_ENV_OBJECT_STORE, which overrides it)"
    );
    let (_, out, _) = p.run_with(
        &[("AGENT_ENV_DOCUMENT_STORE", "mongo")],
        &["config", "show"],
    );
    assert!(section_line(&out, "document").ends_with(
        "(unresolved) The 'mongo' document backend is not supported by this agent-env: for a shared document store, configure a [stores.document] table with impl = \"PostgresDocumentStore\" and config = { dsn = \"postgresql://…\" } (and unset AGENT_ENV_DOCUMENT_STORE, which overrides it)."
    ));
}

/// `impl = "local"` in a `[stores.<kind>]` table (the alias only `[stores] object = "local"` takes),
/// which `config check` refuses, is flagged on its section's line with what `config check` says, in
/// the text and as the section's `problem` in `--json`; a store that names a class has none.
#[test]
fn an_impl_alias_in_a_store_table_is_flagged_with_what_config_check_says() {
    let p = Project::new("[stores.object]\nimpl = \"local\"\n");
    let said = "[stores.object] impl 'local' is neither a built-in store's class nor a plugin's '<package>:<Class>'; write impl = \"LocalFilesystemObjectStore\" or \"S3ObjectStore\" for a built-in store, or \"<package>:<Class>\" for a plugin's";
    let (code, out, err) = p.run(&["config", "check"]);
    assert!(out.contains(said) || err.contains(said), "{out}{err}");
    assert_ne!(code, 0, "{out}{err}");
    let (code, out, err) = p.run(&["config", "show"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        section_line(&out, "object"),
        format!("object:         local  (problem) {said}")
    );
    assert_eq!(
        section_line(&out, "document"),
        "document:       LocalSqliteDocumentStore  path=~/.local/state/agent-env/document_store/documents.db"
    );
    let doc = p.json(&[], &["config", "show", "--json"]);
    let sections = doc["sections"].as_array().unwrap();
    let section = |name: &str| sections.iter().find(|s| s["name"] == name).unwrap();
    assert_eq!(section("object")["problem"], said, "{doc:#}");
    assert_eq!(section("document")["problem"], serde_json::Value::Null);
}

/// A runner other than the built-in one, which `config check` refuses, is flagged on the runner's
/// line and in its `problem` as a store section's impl is, whether the file or the variable chose it.
#[test]
fn a_runner_config_check_refuses_is_flagged_with_what_it_says() {
    let p = Project::new("[runner]\nimpl = \"ModalRunner\"\n");
    let said = |written: &str, remedy: &str| {
        format!("{written} chooses a runner this agent-env does not have: it runs every task with its built-in runner (run, task run and the explorer alike), and no plugin can provide another, so no run starts while it is set; {remedy}")
    };
    let in_file = said("[runner] impl = 'ModalRunner'", "remove [runner] from the config file (the built-in runner needs no setting), or, to keep it for the Python agent-env, set AGENT_ENV_RUNNER=local, which overrides it here");
    let by_variable = said(
        "AGENT_ENV_RUNNER='foo'",
        "unset AGENT_ENV_RUNNER, or set it to 'local'",
    );
    for (vars, headline, said) in [
        (vec![], "ModalRunner", &in_file),
        (vec![("AGENT_ENV_RUNNER", "foo")], "foo", &by_variable),
    ] {
        let (code, out, err) = p.run_with(&vars, &["config", "show"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            section_line(&out, "runner"),
            format!("runner:         {headline}  (problem) {said}")
        );
        let doc = p.json(&vars, &["config", "show", "--json"]);
        let runner = doc["sections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "runner")
            .unwrap();
        assert_eq!(runner["problem"], said.as_str(), "{doc:#}");
        assert_eq!(runner["error"], serde_json::Value::Null, "{doc:#}");
    }
    // The built-in runner is no problem.
    let doc = Project::new("runner = \"local\"\n").json(&[], &["config", "show", "--json"]);
    let sections = doc["sections"].as_array().unwrap();
    let runner = sections.iter().find(|s| s["name"] == "runner").unwrap();
    assert_eq!(runner["problem"], serde_json::Value::Null, "{doc:#}");
}

#[test]
fn scenario_13_a_missing_agent_env_config_prints_only_the_config_block() {
    let p = Project::new("");
    let (code, out, _) = p.run_with(&[("AGENT_ENV_CONFIG", "/nope.toml")], &["config", "show"]);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "config:         (none)
                discovery failed
                (error) AGENT_ENV_CONFIG='/nope.toml' does not point to an existing file; unset AGENT_ENV_CONFIG or point it at a config file
"
    );
    let (code, out, _) = p.run_with(
        &[("AGENT_ENV_CONFIG", "/nope.toml")],
        &["config", "show", "--json"],
    );
    assert_eq!(code, 1, "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["config_source"], "error");
    assert_eq!(json["config_path"], serde_json::Value::Null);
    assert_eq!(json["sections"], serde_json::json!([]));
}

#[test]
fn agent_env_config_names_the_file_and_says_so() {
    let p = Project::new("");
    let other = p.root.join("other.toml");
    std::fs::write(&other, "[explorer]\nport = 9\n").unwrap();
    let (_, out, _) = p.run_with(
        &[("AGENT_ENV_CONFIG", other.to_str().unwrap())],
        &["config", "show"],
    );
    assert!(out.starts_with(&format!(
        "config:         {}\n                via $AGENT_ENV_CONFIG\n",
        other.display()
    )));
    assert!(out.contains("explorer:       port=9\n"));
}

#[test]
fn no_file_anywhere_walks_to_the_root() {
    let p = Project::new("");
    std::fs::remove_file(p.config_path()).unwrap();
    let (_, out, _) = p.run(&["config", "show"]);
    if std::path::Path::new("/.agentenv/config.toml").exists() {
        return; // a machine-wide file above every temp dir; nothing to assert
    }
    let start = p.root.join("sub/dir");
    assert!(
        out.starts_with(&format!(
            "config:         (none)\n                none found — walked up from {} to /\n",
            start.display()
        )),
        "{out}"
    );
    assert_eq!(
        section_line(&out, "document"),
        "document:       LocalSqliteDocumentStore  path=~/.local/state/agent-env/document_store/documents.db"
    );
}

#[test]
fn malformed_toml_fails_every_section_with_line_and_column() {
    let p = Project::new("[model]\nbase_url = \"x\"\nbroken = \n");
    let (code, out, _) = p.run(&["config", "show"]);
    // The file's error is said once and is the command's failure.
    assert_eq!(code, 1, "{out}");
    let prefix = format!("Malformed config.toml at {}: ", p.config_path().display());
    assert!(
        out.contains(&format!("                (error) {prefix}")),
        "{out}"
    );
    assert!(out.contains("(at line 3, column"), "{out}");
    for label in ["document", "model", "explorer"] {
        assert!(
            section_line(&out, label).ends_with("(unresolved) see the config error above"),
            "{out}"
        );
    }
    assert_eq!(out.matches(&prefix).count(), 1, "{out}");
}

#[test]
fn scenario_12_a_non_list_impls_is_unresolved() {
    let p = Project::new("[task_steps]\nimpls = \"x\"\n[envs]\nimpls = [5]\n");
    let (_, out, _) = p.run(&["config", "show"]);
    assert_eq!(
        section_line(&out, "task_steps"),
        "task_steps:     (unresolved) [task_steps] impls must be a list of 'module:Class' strings, got str"
    );
    assert_eq!(
        section_line(&out, "envs"),
        "envs:           (unresolved) [envs] impl must be a 'module:Class' string, got int: 5"
    );
}

#[test]
fn unread_tables_and_keys_get_hints() {
    let p = Project::new(
        "stray = 1\nport = 3\n[bogus]\na = 1\n[sandbox]\nenvs = 1\n[stores.document]\nimpl = \"m:C\"\npath = \"a\"\nconfig = { path = \"b\" }\n",
    );
    let json = p.json(&[], &["config", "show", "--json"]);
    let warnings: Vec<&str> = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(
        warnings,
        [
            "[sandbox] has a key named 'envs', which is also a top-level section — a bare key binds to the table above it. Did you mean [envs]?",
            "[stores.document] sets 'path' both beside its config table and inside it; only [stores.document.config] path is read.",
            "The top-level key 'stray' is outside every table, and agent-env does not read it.",
            "The top-level key 'port' is outside every table, and agent-env does not read it; [explorer] takes a key of that name.",
            "agent-env does not read [bogus]: it has no such table, and a plugin's own settings go under [plugins.<package>].",
        ]
    );
}

#[test]
fn json_has_the_reference_keys() {
    let p = Project::new("[plugins.x]\na = 1\n");
    let json = p.json(&[], &["config", "show", "--json"]);
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    for key in [
        "config_path",
        "config_source",
        "search_root",
        "error",
        "warnings",
        "sections",
        "plugins",
    ] {
        assert!(json.get(key).is_some(), "{key} missing from {keys:?}");
    }
    assert_eq!(json["config_source"], "walk-up");
    let section = &json["sections"][0];
    for key in [
        "name", "winner", "shadowed", "impl", "config", "value", "error",
    ] {
        assert!(section.get(key).is_some(), "section key {key}");
    }
    for key in ["kind", "where", "value"] {
        assert!(section["winner"].get(key).is_some(), "winner key {key}");
    }
    let table = &json["plugins"]["tables"][0];
    for key in [
        "name",
        "installed",
        "version",
        "plugin",
        "keys",
        "value",
        "error",
    ] {
        assert!(table.get(key).is_some(), "plugin table key {key}");
    }
    assert_eq!(table["name"], "x");
    assert_eq!(table["installed"], false);
    assert_eq!(table["keys"], serde_json::json!(["x"]));
}

/// An empty HOME is not the home folder (the session uses the user database's): the `runs:` paths are
/// not shown under a `~` made of it (`~//tmp/…`).
#[test]
fn an_empty_home_leaves_the_runs_paths_whole() {
    let p = Project::new("");
    let json = p.json(&[("HOME", "")], &["config", "show", "--json"]);
    let state = p.home.join(".local/state/agent-env");
    assert_eq!(
        json["runs"]["bundle_run"]["documents"],
        state.join("document_store/local.db").display().to_string(),
        "{json:#}"
    );
    assert_eq!(
        json["runs"]["bundle_run"]["objects"],
        state.join("object_store").display().to_string(),
        "{json:#}"
    );
}

#[test]
fn references_print_as_written_and_nothing_is_created() {
    let p = Project::new("[stores.object]\nimpl = \"agent_env.store.object_store:LocalFilesystemObjectStore\"\nconfig = { root = \"env:NOPE?/tmp/x\" }\n");
    let (code, out, _) = p.run(&["config", "show"]);
    assert_eq!(code, 0);
    assert_eq!(
        section_line(&out, "object"),
        "object:         LocalFilesystemObjectStore  root=env:NOPE?/tmp/x"
    );
    assert!(!p.home.join(".local").exists(), "config show created state");
}

#[test]
fn explain_sections_paths_and_ancestors() {
    let p = Project::new(
        "[stores.object]\nimpl = \"agent_env.store.object_store:LocalFilesystemObjectStore\"\nconfig = { root = \"/srv/o\" }\n[model]\napi_key = \"sk-live\"\n[bogus]\nx = 2\n",
    );
    let (code, out, _) = p.run(&["config", "explain", "stores.object"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "stores.object = LocalFilesystemObjectStore  root=/srv/o\n  from [stores.object]\n"
    );
    let (_, same, _) = p.run(&["config", "explain", "object"]);
    assert_eq!(same.replacen("object", "stores.object", 1), out);
    let (_, out, _) = p.run(&["config", "explain", "stores.object.config.root"]);
    assert_eq!(
        out,
        "stores.object.config.root = /srv/o\n  from [stores.object]\n"
    );
    let (_, out, _) = p.run(&["config", "explain", "model.api_key"]);
    assert_eq!(out, "model.api_key = ***\n  from [model]\n");
    let (_, out, _) = p.run(&["config", "explain", "stores"]);
    assert!(
        out.starts_with("stores covers 4 sections, each resolving on its own:\n"),
        "{out}"
    );
    assert!(out.contains("  image: LocalRegistryImageStore  (from built-in default)\n"));
    let (_, out, _) = p.run(&["config", "explain", "bogus.x"]);
    assert_eq!(
        out,
        "bogus.x = 2; read from the file only — no resolver owns this path\n"
    );
    let (_, out, _) = p.run(&["config", "explain", "bogus.y"]);
    assert!(
        out.starts_with(
            "bogus.y: (unset) — no layer supplies this path; agent-env reads no section 'bogus' (it reads stores, "
        ),
        "{out}"
    );
    let json = p.json(&[], &["config", "explain", "document", "--json"]);
    for key in [
        "path",
        "section",
        "value",
        "winner",
        "shadowed",
        "error",
        "file_only",
        "plugin",
        "children",
    ] {
        assert!(json.get(key).is_some(), "explain key {key}");
    }
    assert_eq!(json["winner"]["where"], "built-in default");
}

#[test]
fn explain_plugin_paths_end_with_the_ownership_note() {
    let p = Project::new(
        "[plugins.acme_browser]\ntimeout = 30\napi_token = \"t\"\n[plugins.agentenv-framework]\nx = 1\n",
    );
    let (_, out, _) = p.run(&["config", "explain", "plugins.acme-browser.timeout"]);
    assert_eq!(
        out,
        "plugins.acme-browser.timeout = 30; in the table of acme-browser, which is not installed; agent-env does not read it\n  from [plugins.acme_browser]\n"
    );
    let (_, out, _) = p.run(&["config", "explain", "plugins.\"acme.browser\".api_token"]);
    assert!(
        out.starts_with("plugins.\"acme.browser\".api_token = ***; in the table of acme-browser"),
        "{out}"
    );
    let (_, out, _) = p.run(&["config", "explain", "plugins.agentenv_framework.x"]);
    assert!(
        out.contains(", which is agent-env itself, not a plugin; agent-env does not read it"),
        "{out}"
    );
    let (_, out, _) = p.run(&["config", "explain", "plugins"]);
    assert!(out.starts_with("plugins has 2 table(s):\n"), "{out}");
    assert!(out.contains("  acme-browser (not installed): timeout=30  api_token=***  (from [plugins.acme_browser])\n"), "{out}");
    assert!(
        out.contains(&format!(
            "agentenv-framework {} (agent-env itself)",
            env!("CARGO_PKG_VERSION")
        )),
        "{out}"
    );
}

fn manifest(home: &Path, folder: &str, text: &str) {
    let dir = home.join("plugins").join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("agent-env-plugin.toml"), text).unwrap();
}

#[test]
fn plugin_tables_are_labelled_with_their_installed_owner() {
    let p = Project::new(
        "[plugins.agentenv_browser]\ntimeout = 30\n[plugins.acme-stores]\nx = 1\n[plugins.acme-empty]\nw = 0\n[plugins.agentenv-framework]\ny = 2\n[plugins.gone]\nz = 3\n",
    );
    manifest(
        &p.home,
        "browser",
        "[plugin]\nname = \"agentenv-browser\"\nversion = \"2.1.0\"\nexec = [\"./bin/none\"]\nprotocol = [1, 1]\n[provides.envs]\nbrowser = \"Browser\"\n",
    );
    manifest(
        &p.home,
        "stores",
        "[plugin]\nname = \"acme-stores\"\nversion = \"0.2.0\"\nexec = [\"./bin/none\"]\nprotocol = [1, 1]\n[provides.stores]\nCas = \"object\"\n",
    );
    manifest(
        &p.home,
        "empty",
        "[plugin]\nname = \"acme-empty\"\nversion = \"0.3.0\"\nexec = [\"./bin/none\"]\nprotocol = [1, 1]\n",
    );
    let (_, out, _) = p.run(&["config", "show"]);
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        out.contains(&format!(
            "plugins:        agentenv-browser 2.1.0
                  timeout=30
                  from [plugins.agentenv_browser]
                acme-stores 0.2.0
                  x=1
                  from [plugins.acme-stores]
                acme-empty 0.3.0 (provides nothing: no contributions, no stores)
                  w=0
                  from [plugins.acme-empty]
                agentenv-framework {version} (agent-env itself)
                  y=2
                  from [plugins.agentenv-framework]
                gone (not installed)
                  z=3
                  from [plugins.gone]
"
        )),
        "{out}"
    );
    let (_, out, _) = p.run(&["config", "explain", "plugins.agentenv-browser.timeout"]);
    assert_eq!(
        out,
        "plugins.agentenv-browser.timeout = 30; in the table of the plugin agentenv-browser 2.1.0, which gets it when it starts: agent-env resolves its env: and secret: references but leaves its keys to the plugin, and a table it cannot read or resolve stops the plugin from loading (load-failed)\n  from [plugins.agentenv_browser]\n"
    );
    // A plugin that provides only a store is a plugin: its table is handed to it.
    let (_, out, _) = p.run(&["config", "explain", "plugins.acme-stores.x"]);
    assert!(
        out.contains(
            "; in the table of the plugin acme-stores 0.2.0, which gets it when it starts"
        ),
        "{out}"
    );
    let (_, out, _) = p.run(&["config", "explain", "plugins.acme-empty.w"]);
    assert!(out.contains("; in the table of acme-empty 0.3.0, which is installed but provides nothing (its manifest declares no contributions and no stores), so it is not a plugin; agent-env does not read it\n"), "{out}");
    let json = p.json(&[], &["config", "show", "--json"]);
    let browser = &json["plugins"]["tables"][0];
    assert_eq!(browser["name"], "agentenv-browser");
    assert_eq!(browser["installed"], true);
    assert_eq!(browser["version"], "2.1.0");
    assert_eq!(browser["plugin"], true);
    assert_eq!(json["plugins"]["tables"][1]["name"], "acme-stores");
    assert_eq!(json["plugins"]["tables"][1]["plugin"], true);
    assert_eq!(json["plugins"]["tables"][2]["name"], "acme-empty");
    assert_eq!(json["plugins"]["tables"][2]["plugin"], false);
}

#[test]
fn debug_marks_the_file_discovery_uses() {
    let p = Project::new("");
    let (code, out, _) = p.run(&["config", "debug"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "   {} (walk-up, exists: no)",
            p.root.join("sub/dir/.agentenv/config.toml").display()
        )
    );
    assert_eq!(
        lines[2],
        format!("-> {} (walk-up, exists: yes)", p.config_path().display())
    );
    assert_eq!(
        lines
            .last()
            .map(|l| l.contains(" /.agentenv/config.toml (walk-up, exists: ")),
        Some(true),
        "the walk ends at /"
    );
    let (_, out, _) = p.run_with(&[("AGENT_ENV_CONFIG", "/nope.toml")], &["config", "debug"]);
    assert!(
        out.starts_with("   /nope.toml (env, exists: no)\n"),
        "{out}"
    );
}

#[test]
fn sources_lists_layers_lowest_first_with_referenced_variables() {
    let p = Project::new(
        "[model]\napi_key = \"env:MY_PROXY_KEY\"\n[stores.object]\nimpl = \"agent_env.store.object_store:LocalFilesystemObjectStore\"\nconfig = { root = \"env:NOPE?/tmp/x\" }\n",
    );
    let (code, out, _) = p.run_with(
        &[
            ("AGENT_ENV_OBJECT_STORE", "local"),
            ("MY_PROXY_KEY", "sk-secret"),
        ],
        &["config", "sources"],
    );
    assert_eq!(code, 0);
    assert_eq!(
        out,
        format!(
            "-> default  built-in defaults
-> file {}  (discovered by walking up)
   $AGENT_ENV_DOCUMENT_STORE (unset)  would shadow [stores.document]
-> $AGENT_ENV_OBJECT_STORE=local  shadows [stores.object]
   $AGENT_ENV_IMAGE_STORE (unset)  would shadow [stores.image]
   $AGENT_ENV_SECRET_STORE (unset)  would shadow [stores.secret]
   $AGENT_ENV_RUNNER (unset)  would shadow [runner]
-> $MY_PROXY_KEY  referenced by [model.api_key]
   $NOPE  referenced by [stores.object.config.root], unset
",
            p.config_path().display()
        )
    );
    assert!(!out.contains("sk-secret"));
}

#[test]
fn a_password_in_a_store_string_is_masked_and_a_file_string_is_told_as_the_files() {
    let p = Project::new("[stores]\nobject = \"s3://AKIAKEY:S3StrSecret77@bucket\"\n");
    let env = [(
        "AGENT_ENV_DOCUMENT_STORE",
        "postgres://alice:EnvOverridePw55@127.0.0.1:5432/db",
    )];
    for args in [
        &["config", "sources"][..],
        &["config", "show"],
        &["config", "show", "--json"],
        &["config", "check"],
    ] {
        let (_, out, err) = p.run_with(&env, args);
        let both = format!("{out}{err}");
        assert!(
            !both.contains("EnvOverridePw55") && !both.contains("S3StrSecret77"),
            "{args:?}: {both}"
        );
    }
    let (code, out, _) = p.run(&["config", "check"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("problem: [stores] object = 's3://***@bucket': expected 'local', or a [stores.object] table"),
        "{out}"
    );
    assert!(!out.contains("AGENT_ENV_OBJECT_STORE"), "{out}");
}

#[test]
fn a_relative_store_path_in_the_project_config_is_taken_from_the_project_folder() {
    let p = Project::new(
        "[stores.document]\nimpl = \"LocalSqliteDocumentStore\"\nconfig = { path = \"team/docs.db\" }\n",
    );
    let task = p.root.join("t.json");
    std::fs::write(
        &task,
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    )
    .unwrap();
    let task = task.display().to_string();
    // Put from a subfolder, read from the project's folder: one store.
    let (code, _, err) = p.run(&["task", "put", &task, "--id", "team/check"]);
    assert_eq!(code, 0, "{err}");
    assert!(p.root.join("team/docs.db").exists());
    assert!(!p.root.join("sub/dir/team").exists());
    let out = p
        .command(&p.root, &["task", "get", "team/check"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A built-in store's relative path in a project's config is shown with the path it resolves to,
/// the project's folder joined to it, by `config show` and `config explain`, text and JSON (a key
/// of its own, the written value left as it is); an absolute path, a `~` one and a reference have
/// none.
#[test]
fn a_relative_store_path_is_shown_with_where_it_resolves() {
    let p = Project::new(
        "[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = { root = \"objs\" }\n\
         [stores.document]\nimpl = \"LocalSqliteDocumentStore\"\nconfig = { path = \"env:DOCS_DB?docs.db\" }\n\
         [stores.secret]\nimpl = \"LocalSecretStore\"\nconfig = { file_path = \"~/secrets.json\" }\n",
    );
    let resolved = p.root.join("objs").display().to_string();
    let (code, out, err) = p.run(&["config", "show"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        section_line(&out, "object"),
        format!("object:         LocalFilesystemObjectStore  root=objs (= {resolved})")
    );
    assert_eq!(
        section_line(&out, "document"),
        "document:       LocalSqliteDocumentStore  path=env:DOCS_DB?docs.db"
    );
    assert_eq!(
        section_line(&out, "secret"),
        "secret:         LocalSecretStore  file_path=~/secrets.json"
    );
    let doc = p.json(&[], &["config", "show", "--json"]);
    let sections = doc["sections"].as_array().unwrap();
    let section = |name: &str| sections.iter().find(|s| s["name"] == name).unwrap();
    assert_eq!(section("object")["config"]["root"], "objs", "{doc:#}");
    assert_eq!(
        section("object")["resolved_paths"],
        serde_json::json!({ "root": resolved }),
        "{doc:#}"
    );
    for name in ["document", "secret", "image", "runner", "model"] {
        assert_eq!(
            section(name)["resolved_paths"],
            serde_json::json!({}),
            "{name}: {doc:#}"
        );
    }

    let (code, out, err) = p.run(&["config", "explain", "object"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(&format!(
            "object = LocalFilesystemObjectStore  root=objs (= {resolved})\n"
        )),
        "{out}"
    );
    for path in ["stores.object.config.root", "object.root"] {
        let (code, out, err) = p.run(&["config", "explain", path]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.starts_with(&format!("{path} = objs (= {resolved})\n")),
            "{out}"
        );
        let doc = p.json(&[], &["config", "explain", path, "--json"]);
        assert_eq!(doc["value"], "objs", "{doc:#}");
        assert_eq!(
            doc["resolved_paths"],
            serde_json::json!({ "root": resolved }),
            "{doc:#}"
        );
    }
    let doc = p.json(&[], &["config", "explain", "object.impl", "--json"]);
    assert_eq!(doc["resolved_paths"], serde_json::json!({}), "{doc:#}");
}

#[test]
fn an_empty_store_path_is_a_problem_not_a_throwaway_store() {
    let p = Project::new(
        "[stores.document]\nimpl = \"LocalSqliteDocumentStore\"\nconfig = { path = \"env:TEAM_DB\" }\n",
    );
    let (code, out, _) = p.run_with(&[("TEAM_DB", "")], &["config", "check"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("sets path to an empty string; it must name a path"),
        "{out}"
    );
}

#[test]
fn explain_tries_the_first_segment_then_dotted_names_longest_first() {
    let p = Project::new("[plugins.acme]\nbrowser = 1\n[plugins.acme-browser-x]\ntimeout = 2\n");
    let (_, out, _) = p.run(&["config", "explain", "plugins.acme.browser"]);
    assert!(
        out.starts_with("plugins.acme.browser = 1; in the table of acme,"),
        "{out}"
    );
    let (_, out, _) = p.run(&["config", "explain", "plugins.acme.browser.x.timeout"]);
    assert!(
        out.starts_with("plugins.acme.browser.x.timeout = 2; in the table of acme-browser-x,"),
        "{out}"
    );
}

/// `config show` and `config explain` read the configuration and the manifests only: the plugin that
/// provides the configured store is not started (it would leave a marker), and nothing appears under HOME.
/// `store check`, which does build the store, starts it: the marker is a working witness.
#[test]
fn show_and_explain_start_no_plugin_and_build_no_store() {
    let p =
        Project::new("[stores.object]\nimpl = \"acme-stores:Cas\"\nconfig = { bucket = \"b\" }\n");
    let marker = p.home.join("started");
    manifest(
        &p.home,
        "stores",
        &format!(
            "[plugin]\nname = \"acme-stores\"\nversion = \"0.2.0\"\nexec = [\"/usr/bin/touch\", \"{}\"]\nprotocol = [1, 1]\n[provides.stores]\nCas = \"object\"\n",
            marker.display()
        ),
    );
    let listing = |dir: &Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = listing(&p.home);
    for args in [
        &["config", "show"][..],
        &["config", "show", "--json"],
        &["config", "explain", "stores.object"],
    ] {
        let (code, out, err) = p.run(args);
        assert_eq!(code, 0, "{args:?}: {out}{err}");
        assert!(!marker.exists(), "{args:?} started the store's plugin");
        assert_eq!(listing(&p.home), before, "{args:?} wrote under HOME");
    }
    p.run(&["store", "check", "object"]);
    assert!(marker.exists(), "store check should start the plugin");
}

/// Each secret the masking rule covers, once; every value holds `LEAK` so a test can look for it.
const SECRETS_CONFIG: &str = r#"
[stores.secret]
impl = "local"
config = { values = { db = "LEAK-values-1", vercel = "LEAK-values-2" } }

[sandbox]
apikey = "LEAK-apikey"
api-key = "LEAK-api-key"
private-key = "LEAK-private-key"
pwd = "LEAK-pwd"
cookie = "LEAK-cookie"
dsn = "Server=h;Password=LEAK-conn;Database=x"
url = "https://h/x?token=LEAK-query&page=2"
endpoint = "env:AGENT_ENV_TEST_UNSET?Password=LEAK-default"
fallback = "env:AGENT_ENV_TEST_UNSET?sk-LEAKabcdefghijkl"
"#;

fn assert_no_leak(what: &str, code: i32, out: &str, err: &str) {
    assert!(
        !out.contains("LEAK") && !err.contains("LEAK"),
        "{what} printed a secret (exit {code}):\n{out}{err}"
    );
}

#[test]
fn config_show_and_explain_never_print_a_secret() {
    let p = Project::new(SECRETS_CONFIG);
    for args in [
        &["config", "show"][..],
        &["config", "show", "--json"],
        &["config", "explain", "stores.secret"],
        &["config", "explain", "stores.secret.config.values"],
        &["config", "explain", "stores.secret.config.values.db"],
        &["config", "explain", "sandbox"],
        &["config", "explain", "sandbox.dsn"],
        &["config", "explain", "sandbox.url"],
        &["config", "explain", "sandbox.endpoint"],
    ] {
        let (code, out, err) = p.run(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert_no_leak(&args.join(" "), code, &out, &err);
    }
    let (_, out, _) = p.run(&["config", "show"]);
    let sandbox = section_line(&out, "sandbox");
    for shown in [
        "apikey=***",
        "dsn=Server=h;Password=***;Database=x",
        "url=https://h/x?token=***&page=2",
        "endpoint=env:AGENT_ENV_TEST_UNSET?Password=***",
        "fallback=env:AGENT_ENV_TEST_UNSET?***",
    ] {
        assert!(sandbox.contains(shown), "{shown} in {sandbox}");
    }
}

#[test]
fn a_secret_store_table_without_impl_is_reported_without_its_values() {
    for config in [
        "[stores.secret]\nconfig = { values = { db = \"LEAK-1\" } }\n",
        "[stores.secret]\nvalues = { db = \"LEAK-2\" }\n",
        "[stores.secret]\nimpl = { api_key = \"LEAK-3\" }\n",
    ] {
        let p = Project::new(config);
        for args in [
            &["config", "show"][..],
            &["config", "show", "--json"],
            &["config", "check"],
            &["config", "explain", "stores.secret"],
            &["store", "check", "secret"],
        ] {
            let (code, out, err) = p.run(args);
            assert!(
                format!("{out}{err}").contains("impl"),
                "{args:?} says what is missing: {out}{err}"
            );
            assert_no_leak(&args.join(" "), code, &out, &err);
        }
    }
    // The same for an `impls` entry that is a table rather than a `module:Class` string.
    let p = Project::new("[envs]\nimpls = [{ api_key = \"LEAK-4\" }]\n");
    for args in [&["config", "show"][..], &["config", "check"]] {
        let (code, out, err) = p.run(args);
        assert!(format!("{out}{err}").contains("impl must be"), "{out}{err}");
        assert_no_leak(&args.join(" "), code, &out, &err);
    }
}

#[test]
fn verbose_config_and_store_commands_say_more_on_stderr_and_mask_secrets() {
    let p = Project::new(
        "[stores.secret]\nimpl = \"LocalSecretStore\"\nconfig = { values = { api_key = \"sk-live-123\" } }\n",
    );
    let (code, out, err) = p.run(&["-v", "config", "show"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("config:"), "stdout is unchanged: {out}");
    assert!(
        err.contains(&format!(
            "-> {} (walk-up, exists: yes)",
            p.config_path().display()
        )),
        "{err}"
    );
    let (_, quiet_out, quiet_err) = p.run(&["config", "show"]);
    assert_eq!(quiet_out, out);
    assert!(!quiet_err.contains("walk-up"), "{quiet_err}");

    let (code, _, err) = p.run(&["store", "check", "secret", "--seed", "-v"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("secret store config: values={ api_key = \"***\" }"),
        "{err}"
    );
    assert!(!err.contains("sk-live-123"), "{err}");
}

#[test]
fn a_plugin_tables_json_has_the_originals_keys_and_values() {
    let p = Project::new("[plugins.agentenv-absent]\nkey = \"v\"\n");
    let explained = p.json(
        &[],
        &["config", "explain", "plugins.agentenv-absent", "--json"],
    );
    assert_eq!(explained["section"], "plugins", "{explained}");
    assert_eq!(explained["file_only"], false, "{explained}");
    assert_eq!(
        explained["plugin"],
        serde_json::json!({"name": "agentenv-absent", "installed": false, "version": null, "plugin": false}),
        "{explained}"
    );
    let shown = p.json(&[], &["config", "show", "--json"]);
    let table = &shown["plugins"]["tables"][0];
    assert_eq!(table["name"], "agentenv-absent");
    assert_eq!(table["installed"], false);
    assert_eq!(table["plugin"], false, "{shown}");
}

/// A key of a built-in store's table that no layer sets is explained by the default the store uses
/// for it; a key the store does not read (a typo) is said to be one, with the key it may be, as
/// `config check` reports it. Explain is a view: it exits 0 either way.
#[test]
fn explain_says_a_store_keys_default_and_a_key_the_store_does_not_read() {
    let p = Project::new(
        "[stores.document]\nimpl = \"PostgresDocumentStore\"\nconfig = { dsn = \"env:TEAM_PG_DSN\" }\n",
    );
    let (code, out, err) = p.run(&["config", "explain", "stores.document.config.schema"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "stores.document.config.schema = public — the default PostgresDocumentStore uses when no layer sets it\n"
    );
    let (code, out, err) = p.run(&["config", "explain", "stores.document.config.dsnn"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "stores.document.config.dsnn: (unset) — PostgresDocumentStore reads no key 'dsnn' in its config table: did you mean 'dsn'? (it takes dsn, schema)\n"
    );
    let json = p.json(&[], &["config", "explain", "document.schema", "--json"]);
    assert_eq!(
        json["default"],
        serde_json::json!({"class": "PostgresDocumentStore", "value": "public", "unless": null}),
        "{json}"
    );
    assert_eq!(json["value"], serde_json::Value::Null, "{json}");
    let json = p.json(
        &[],
        &["config", "explain", "stores.document.config.dsnn", "--json"],
    );
    assert_eq!(json["default"], serde_json::Value::Null, "{json}");
    assert!(
        json["not_taken"]
            .as_str()
            .is_some_and(|t| t.contains("did you mean 'dsn'?")),
        "{json}"
    );
    // A key with no default the store exposes stays unset; S3's region names the variables first.
    let (_, out, _) = p.run(&[
        "config",
        "explain",
        "stores.object.config.grant_lifetime_seconds",
    ]);
    assert_eq!(
        out,
        "stores.object.config.grant_lifetime_seconds = 43200 — the default LocalFilesystemObjectStore uses when no layer sets it\n"
    );
    let s3 =
        Project::new("[stores.object]\nimpl = \"S3ObjectStore\"\nconfig = { bucket = \"b\" }\n");
    let (_, out, _) = s3.run(&["config", "explain", "stores.object.config.endpoint"]);
    assert_eq!(
        out,
        "stores.object.config.endpoint: (unset) — no layer supplies this path\n"
    );
    let (_, out, _) = s3.run(&["config", "explain", "stores.object.region"]);
    assert_eq!(
        out,
        "stores.object.region = us-east-1 — the default S3ObjectStore uses when no layer sets it and neither AWS_REGION nor AWS_DEFAULT_REGION is set\n"
    );
}

/// A view that could not read the config the user chose prints what it can and exits 1, text and JSON,
/// whichever view it is; `debug` and `sources`, whose output has no place for it, say why on stderr.
#[test]
fn every_config_view_exits_1_when_the_config_it_was_given_cannot_be_read() {
    let p = Project::new("[model]\nbroken = \n");
    let malformed = format!("Malformed config.toml at {}", p.config_path().display());
    let missing = "AGENT_ENV_CONFIG='/nope.toml' does not point to an existing file";
    for (vars, why) in [
        (vec![], malformed.as_str()),
        (vec![("AGENT_ENV_CONFIG", "/nope.toml")], missing),
    ] {
        for view in [
            vec!["show"],
            vec!["explain", "stores.object.root"],
            vec!["debug"],
            vec!["sources"],
        ] {
            for json in [false, true] {
                let mut args = vec!["config"];
                args.extend(&view);
                if json {
                    args.push("--json");
                }
                let (code, out, err) = p.run_with(&vars, &args);
                assert_eq!(code, 1, "{args:?} {vars:?}: {out}{err}");
                assert!(
                    out.contains(why) || err.contains(why),
                    "{args:?}: {out}{err}"
                );
                if json {
                    serde_json::from_str::<serde_json::Value>(&out)
                        .unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"));
                }
            }
        }
    }
    // A config that reads is no failure.
    std::fs::write(p.config_path(), "").unwrap();
    for view in ["debug", "sources"] {
        let (code, _, err) = p.run(&["config", view]);
        assert_eq!((code, err.as_str()), (0, ""));
    }
}

/// `config explain` refuses a path it cannot read as written, as a wrong command line (exit 2), saying
/// how a path is written, rather than explaining another path.
#[test]
fn explain_refuses_an_empty_path_or_an_empty_part() {
    let p = Project::new("[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\n");
    for path in ["", "stores..object", "stores.object.", ".document"] {
        for json in [false, true] {
            let mut args = vec!["config", "explain", path];
            if json {
                args.push("--json");
            }
            let (code, out, err) = p.run(&args);
            assert_eq!(code, 2, "{args:?}: {out}{err}");
            assert!(err.contains("'stores.object.root'"), "{args:?}: {err}");
            if json {
                let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
                assert_eq!(doc["exit_code"], 2, "{doc:#}");
            } else {
                assert_eq!(out, "", "{args:?}");
            }
        }
    }
    let (code, out, _) = p.run(&["config", "explain", "stores.object.impl"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("stores.object.impl = LocalFilesystemObjectStore"),
        "{out}"
    );
}

/// A root option that chooses a config file that is not there: the views say the option chose it
/// (nothing was discovered), and the JSON names the option beside the error.
#[test]
fn a_missing_file_a_root_option_chose_is_credited_to_the_option() {
    use crate::support::cli::{stderr, stdout, text, Sandbox};
    let s = Sandbox::new();
    s.tools(
        "agentenv-tenant",
        "[provides.cli_root_options]\ntenant = { class = \"TenantOption\", description = \"Select a tenant\", value = \"NAME\" }\n",
    );
    let by = "CLI root option '--tenant' from 'agentenv-tenant'";
    let out = s.run(&["--tenant", "acme", "config", "show"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let shown = stdout(&out);
    assert!(
        shown.contains(&format!("\n                via {by}\n")),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("(error) {by} chose the config file '")),
        "{shown}"
    );
    assert!(!shown.contains("discover"), "{shown}");

    let out = s.run(&["--tenant", "acme", "config", "show", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let show: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(show["config_source"], "error", "{show:#}");
    assert_eq!(show["config_chosen_by"], by, "{show:#}");
    assert!(show["error"]
        .as_str()
        .unwrap()
        .contains("which does not exist"));

    let out = s.run(&["--tenant", "acme", "config", "sources"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stdout(&out).contains(&format!("(via {by}: {by} chose the config file '")),
        "{}",
        text(&out)
    );
    assert!(!stdout(&out).contains("discover"), "{}", text(&out));
    assert!(
        stderr(&out).contains("which does not exist"),
        "{}",
        text(&out)
    );
}
