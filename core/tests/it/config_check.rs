//! Black-box tests of `agent-env config check`: every problem at once, exit 1; `ok: …`, exit 0.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::IsolatedDirs;

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Project {
    fn new(config: &str) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("proj");
        let home = base.join("home");
        std::fs::create_dir_all(root.join(".agentenv")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(root.join(".agentenv/config.toml"), config).unwrap();
        Project {
            _dir: dir,
            root,
            home,
        }
    }

    fn run_with(&self, vars: &[(&str, &str)], args: &[&str]) -> (i32, String) {
        let (code, stdout, _) = self.run_stderr(vars, args);
        (code, stdout)
    }

    /// Installs a manifest in the plugins directory.
    fn manifest(&self, folder: &str, text: &str) {
        let dir = self.home.join("plugins").join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("agent-env-plugin.toml"), text).unwrap();
    }

    /// `binary` in this project's temp world: its folder, and nothing of the test's environment.
    fn command(&self, binary: &Path) -> Command {
        let mut cmd = Command::new(binary);
        cmd.env_clear();
        IsolatedDirs {
            home: self.home.clone(),
            xdg_data: self.home.join("data"),
            xdg_state: self.home.join(".local/state"),
            xdg_config: self.home.join(".config"),
            plugins: self.home.join("plugins"),
        }
        .apply(&mut cmd)
        .current_dir(&self.root);
        cmd
    }

    /// Configures the local object and document stores under `folder`.
    fn local_stores_under(&self, folder: &Path) {
        std::fs::write(
            self.root.join(".agentenv/config.toml"),
            format!(
                "[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = {{ root = \"{0}/objects\" }}\n[stores.document]\nimpl = \"LocalSqliteDocumentStore\"\nconfig = {{ path = \"{0}/docs/documents.db\" }}\n",
                folder.display()
            ),
        )
        .unwrap();
    }

    fn run_stderr(&self, vars: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
        let mut cmd = self.command(Path::new(env!("CARGO_BIN_EXE_agent-env")));
        cmd.args(args);
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

    fn check(&self, vars: &[(&str, &str)]) -> (i32, serde_json::Value) {
        let (code, out) = self.run_with(vars, &["config", "check", "--json"]);
        (code, serde_json::from_str(&out).unwrap())
    }
}

fn messages(json: &serde_json::Value) -> Vec<String> {
    json["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["message"].as_str().unwrap().to_string())
        .collect()
}

/// The `warnings` of a `config check --json` document.
fn warnings_of(json: &serde_json::Value) -> Vec<&str> {
    json["warnings"]
        .as_array()
        .map(|w| w.iter().filter_map(|w| w.as_str()).collect())
        .unwrap_or_default()
}

#[test]
fn a_clean_config_is_ok() {
    let p = Project::new(
        "[stores.object]\nimpl = \"agent_env.store.object_store:LocalFilesystemObjectStore\"\nconfig = { root = \"env:NOPE?/tmp/x\" }\n[task_steps]\nimpls = [\"agentenv_openciv3:Match\"]\n[plugins.acme]\nurl = \"env:ACME_URL?http://h\"\n",
    );
    p.manifest("openciv3", OPENCIV3);
    let (code, out) = p.run_with(&[], &["config", "check"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.ends_with(": 4 store(s), 1 plugin table(s), 1 registration table(s) checked\n"),
        "{out}"
    );
    assert!(out.contains("ok: "));
}

/// A credential written out in the file is warned of (the check still passes: it works), never
/// repeated in the warning; a reference to the same credential is not.
#[test]
fn a_credential_written_out_in_the_file_is_warned_of() {
    let p = Project::new(
        "[plugins.acme]\napi_token = \"tok-1234567890abcdef\"\nother_token = \"env:ACME_TOKEN?x\"\n",
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json}");
    let warnings = warnings_of(&json);
    assert_eq!(warnings.len(), 2, "{json}");
    assert!(
        warnings[0].starts_with("[plugins.acme] api_token is written out in the config file"),
        "{json}"
    );
    // No plugin named acme is installed: its table is read by nothing, said after.
    assert!(
        warnings[1].starts_with("[plugins.acme]: no installed plugin is named acme"),
        "{json}"
    );
    assert!(!json.to_string().contains("tok-1234567890abcdef"), "{json}");
}

/// A key `[agents]` refuses is said once, as the problem it is, not also as a key left unread.
#[test]
fn a_key_agents_refuses_is_said_once() {
    let p = Project::new("[agents]\nfoo = 1\n");
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json:#}");
    assert_eq!(
        messages(&json),
        ["[agents] has unknown keys ['foo']; allowed: ['default_a2a_agent_id']"]
    );
    assert_eq!(warnings_of(&json), Vec::<&str>::new(), "{json:#}");
}

/// A key that names the credential itself is warned of however short its value, as a URL's password
/// is; a short setting under a merely secret-like key is not.
#[test]
fn a_short_api_key_written_out_is_warned_of() {
    let p = Project::new("[model]\napi_key = \"sk-abc\"\n[plugins.acme]\nauth = \"none\"\n");
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json:#}");
    let warnings = warnings_of(&json);
    // The other is of [plugins.acme], which no installed plugin reads.
    assert_eq!(warnings.len(), 2, "{json:#}");
    assert!(
        warnings[0].starts_with("[model] api_key is written out in the config file"),
        "{json:#}"
    );
    assert!(
        warnings[1].starts_with("[plugins.acme]: no installed plugin is named acme"),
        "{json:#}"
    );
    assert!(!warnings[0].contains("sk-abc"), "{json:#}");
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A secret file in YAML is read when it is a flat mapping, and refused naming the line otherwise.
#[test]
fn a_yaml_secrets_file_is_read_when_flat() {
    let p = Project::new(
        "[stores.secret]\nimpl = \"agent_env.store.secret_store:LocalSecretStore\"\nconfig = { file_path = \"secrets.yaml\" }\n[model]\napi_key = \"secret:tok\"\n",
    );
    let file = p.root.join("secrets.yaml");
    std::fs::write(&file, "tok: abc\n").unwrap();
    set_mode(&file, 0o600);
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json:#}");
    std::fs::write(&file, "tok: abc\ndb:\n  password: x\n").unwrap();
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json:#}");
    assert!(
        messages(&json).iter().any(|m| m.contains(
            "Secret file 'secrets.yaml' must be a flat mapping of name -> value (line 3: an indented line (a nested value or a value over several lines)); write it as a flat JSON object or as simple `name: value` lines"
        )),
        "{json:#}"
    );
}

/// An impl naming one of the original's hosted stores says what to use instead.
#[test]
fn an_originals_hosted_store_says_what_to_use_instead() {
    let p = Project::new(
        "[stores.image]\nimpl = \"agent_env.store.image_store:OciRegistryImageStore\"\n",
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json:#}");
    assert_eq!(
        messages(&json),
        ["Cannot import impl 'agent_env.store.image_store:OciRegistryImageStore': OciRegistryImageStore is a store of the Python agent-env that this one does not have; reach that registry from a plugin's image store (a subclass of the SDK's ImageStore under `@plugin.store`), named impl = \"<package>:<Class>\"; LocalRegistryImageStore talks only to a registry that needs no login"]
    );
}

/// A secrets file other users may read is a warning naming it, its mode and the chmod that closes
/// it; the check still passes. Once only its owner may read it, nothing is said.
#[test]
fn a_secrets_file_others_can_read_is_warned_of() {
    let p = Project::new(
        "[stores.secret]\nimpl = \"agent_env.store.secret_store:LocalSecretStore\"\nconfig = { file_path = \"team secrets.json\" }\n[model]\napi_key = \"secret:proxy_key\"\n",
    );
    let file = p.root.join("team secrets.json");
    std::fs::write(&file, r#"{"proxy_key": "sk-file-0123456789"}"#).unwrap();
    set_mode(&file, 0o644);
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json:#}");
    assert_eq!(
        warnings_of(&json),
        [format!(
            "the secrets file {} ([stores.secret] file_path) can be read by every user on this machine (mode 0644), and so can every secret in it; run `chmod 600 '{}'`",
            file.display(),
            file.display()
        )]
    );
    assert!(!json.to_string().contains("sk-file-0123456789"), "{json}");
    let (code, out) = p.run_with(&[], &["config", "check"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with(&format!("warning: the secrets file {}", file.display())),
        "{out}"
    );
    // Group-readable is enough; only the owner is fine.
    set_mode(&file, 0o640);
    assert!(warnings_of(&p.check(&[]).1)[0].contains("(mode 0640)"));
    set_mode(&file, 0o600);
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json:#}");
    assert!(warnings_of(&json).is_empty(), "{json:#}");
}

/// A credential written out in a config file others may read says that the file is open now, and
/// how to close it; a file only its owner may read says only what its history leaks.
#[test]
fn a_credential_in_a_config_file_others_can_read_says_so() {
    let p = Project::new("[model]\napi_key = \"sk-literal-0123456789\"\n");
    let config = p.root.join(".agentenv/config.toml");
    set_mode(&config, 0o644);
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json:#}");
    let warnings = warnings_of(&json);
    assert_eq!(warnings.len(), 1, "{json:#}");
    assert!(
        warnings[0].starts_with("[model] api_key is written out in the config file: anyone who can read the file, or its history once committed, can read it, and the file can be read by every user on this machine now (mode 0644; `chmod 600 "),
        "{json:#}"
    );
    assert!(
        warnings[0].contains(&format!("chmod 600 {}`", config.display())),
        "{json:#}"
    );
    set_mode(&config, 0o600);
    let (_, json) = p.check(&[]);
    let warnings = warnings_of(&json);
    assert_eq!(warnings.len(), 1, "{json:#}");
    assert!(
        !warnings[0].contains("mode 0") && !warnings[0].contains("chmod"),
        "{json:#}"
    );
    // A file others may read that holds no credential is no warning of its own.
    let p = Project::new("[model]\napi_key = \"env:API_KEY\"\n");
    set_mode(&p.root.join(".agentenv/config.toml"), 0o644);
    assert!(warnings_of(&p.check(&[]).1).is_empty());
}

/// A plugins directory other users can write to is said in the document's warnings, not only on
/// stderr where a script reading the JSON does not look.
#[test]
fn an_unsafe_plugins_directory_is_in_the_json_warnings() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new("");
    p.manifest("openciv3", OPENCIV3);
    let plugins = p.home.join("plugins");
    std::fs::set_permissions(&plugins, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (code, json, stderr) = p.run_stderr(&[], &["config", "check", "--json"]);
    assert_eq!(code, 0, "{json}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let warnings = warnings_of(&json);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains(plugins.to_str().unwrap())),
        "{json:#}"
    );
    assert!(
        !stderr.contains(plugins.to_str().unwrap()),
        "said twice: {stderr}"
    );
    // So do plugin check's and a run's documents (this run reads the manifests for its step type).
    std::fs::create_dir_all(p.root.join("b/tasks")).unwrap();
    std::fs::write(
        p.root.join("b/tasks/t.json"),
        r#"[{"id": "x", "type": "no_such_step"}]"#,
    )
    .unwrap();
    for args in [
        &["plugin", "check", "--json"][..],
        &["run", "./b", "--json"],
    ] {
        let (_, json, _) = p.run_stderr(&[], args);
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(
            json["warnings"]
                .to_string()
                .contains(plugins.to_str().unwrap()),
            "{args:?}: {json:#}"
        );
    }
}

#[test]
fn an_empty_file_keeps_every_default_and_is_ok() {
    let p = Project::new("");
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0);
    assert_eq!(json["ok"], true);
    assert_eq!(json["format_version"], 1);
    assert!(messages(&json).is_empty());
}

#[test]
fn scenario_23_an_unknown_store_key_names_what_the_class_takes() {
    let p = Project::new(
        "[stores.document]\nimpl = \"agent_env.store.document_store:LocalSqliteDocumentStore\"\n[stores.document.config]\nbogus = 1\n",
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1);
    assert_eq!(
        messages(&json),
        ["The config table for 'agent_env.store.document_store:LocalSqliteDocumentStore' has unknown key 'bogus'; it takes path"]
    );
    assert_eq!(json["problems"][0]["code"], "config-invalid");
}

/// `[explorer]` settings `agent-env up` would refuse are problems here too, while a run, which never
/// reads them, still starts.
#[test]
fn explorer_settings_up_would_refuse_are_problems() {
    let p = Project::new("[explorer]\ncors_origins = [\"*\"]\nport = 70000\n");
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json}");
    let found = messages(&json);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("[explorer] port must be a whole number from 0 to 65535, 0 picking a free one (got 70000)")
            && found[0].ends_with("(agent-env up refuses to start until it is fixed)"),
        "{found:?}"
    );
    assert!(
        found[1].starts_with("[explorer] cors_origins cannot contain '*'"),
        "{found:?}"
    );
    let (code, out) = p.run_with(&[], &["run", "hello"]);
    assert_eq!(code, 0, "{out}");
}

/// `[explorer] port = 0` picks a free port, as `up --port 0` does: no problem.
#[test]
fn an_explorer_port_of_0_is_no_problem() {
    for port in ["0", "\"0\""] {
        let p = Project::new(&format!("[explorer]\nport = {port}\n"));
        let (code, json) = p.check(&[]);
        assert_eq!(code, 0, "{json}");
        assert_eq!(messages(&json), Vec::<String>::new(), "{json}");
    }
}

/// A reference in `[explorer]` that does not resolve is said once, with up's refusal, and the table's
/// other keys are still checked; a run, which never reads the table, still starts.
#[test]
fn an_explorer_reference_that_does_not_resolve_is_one_problem_among_the_others() {
    let p = Project::new("[explorer]\nport = \"env:NOPE\"\ncors_origins = [\"*\"]\n");
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json}");
    let found = messages(&json);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(
        found[0],
        "[explorer] port: Unresolved env:NOPE reference (no value and no default); set the environment variable NOPE, or give a default: env:NOPE?DEFAULT (agent-env up refuses to start until it is fixed)"
    );
    assert!(
        found[1].starts_with("[explorer] cors_origins cannot contain '*'"),
        "{found:?}"
    );
    let (code, out) = p.run_with(&[], &["run", "hello"]);
    assert_eq!(code, 0, "{out}");
    // An [explorer] that is not a table is one problem, not one per reader.
    let (code, json) = Project::new("explorer = 5\n").check(&[]);
    assert_eq!(code, 1, "{json}");
    assert_eq!(
        messages(&json),
        ["config.toml [explorer] must be a table, got int"]
    );
}
#[test]
fn every_problem_is_reported_at_once() {
    let p = Project::new(
        r#"
[stores.document.config]
bogus = 1

[stores.object]
impl = "agent_env.store.object_store:LocalFilesystemObjectStore"
config = { root = "env:NOPE", bucket = "b" }

[stores.image]
impl = "fakestore.Store"

[task_steps]
impls = "x"

[envs]
impls = [5]

[sandbox.providers.fly]
impl = "nocolon"

[plugins.acme_browser]
a = 1
[plugins."acme.browser"]
b = 2

[plugins.bar]
x = "env:NOPE"
"#,
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1);
    assert_eq!(
        messages(&json),
        [
            "[stores.document] names no impl, the store it uses (it has config = { bogus = 1 }); write impl = \"LocalSqliteDocumentStore\" for the built-in store, or \"<package>:<Class>\" for a plugin's",
            "[stores.object.config] root: Unresolved env:NOPE reference (no value and no default); set the environment variable NOPE, or give a default: env:NOPE?DEFAULT",
            // The unresolved reference hides none of the store's other settings.
            "The config table for 'agent_env.store.object_store:LocalFilesystemObjectStore' has unknown key 'bucket'; it takes root, grants, grant_bind_host, grant_advertise_host, grant_lifetime_seconds",
            "[stores.image] impl 'fakestore.Store' is neither a built-in store's class nor a plugin's '<package>:<Class>'; write impl = \"LocalRegistryImageStore\" for the built-in store, or \"<package>:<Class>\" for a plugin's",
            "[envs] impl must be a 'module:Class' string, got int: 5",
            "[task_steps] impls must be a list of 'module:Class' strings, got str",
            "[sandbox.providers.fly]: impl must be a plugin's '<package>:<Class>', got 'nocolon'",
        ]
    );
    // The table of a plugin that is not installed is reported, never a problem of the config:
    // nothing reads it.
    let warnings = warnings_of(&json);
    assert_eq!(
        warnings,
        [
            "config.toml sets acme-browser's settings more than once, as [plugins.acme_browser], [plugins.\"acme.browser\"]; keep one; no installed plugin is named acme-browser, so nothing reads the table now; once acme-browser is installed, it does not start until the table is fixed",
            "[plugins.bar]: Unresolved env:NOPE reference (no value and no default); set the environment variable NOPE, or give a default: env:NOPE?DEFAULT; no installed plugin is named bar, so nothing reads the table now; once bar is installed, it does not start until the table is fixed",
        ]
    );
    let (code, text) = p.run_with(&[], &["config", "check"]);
    assert_eq!(code, 1);
    assert!(text.contains("problem: [stores.object.config] root: Unresolved env:NOPE reference (no value and no default); set the environment variable NOPE, or give a default: env:NOPE?DEFAULT [config-invalid]\n"), "{text}");
    assert!(
        text.contains("warning: [plugins.bar]: Unresolved env:NOPE reference"),
        "{text}"
    );
    let path = p.root.join(".agentenv/config.toml");
    assert!(
        text.ends_with(&format!("\n7 problem(s) in {}\n", path.display())),
        "{text}"
    );
}

#[test]
fn unknown_keys_are_checked_once_the_reference_resolves() {
    let p = Project::new(
        "[stores.object]\nimpl = \"agent_env.store.object_store:LocalFilesystemObjectStore\"\nconfig = { root = \"env:ROOT\", bucket = \"b\" }\n",
    );
    let (code, json) = p.check(&[("ROOT", "/srv/o")]);
    assert_eq!(code, 1);
    assert_eq!(
        messages(&json),
        ["The config table for 'agent_env.store.object_store:LocalFilesystemObjectStore' has unknown key 'bucket'; it takes root, grants, grant_bind_host, grant_advertise_host, grant_lifetime_seconds"]
    );
}

/// `[sandbox] default` is read by `run`: a chain naming no provider, or a value that is not a
/// string, is a problem `config check` reports, not only the run that refuses it.
#[test]
fn a_sandbox_default_naming_no_provider_is_a_problem() {
    let (code, json) = Project::new("[sandbox]\ndefault = \"nope\"\n").check(&[]);
    assert_eq!(code, 1);
    assert_eq!(
        messages(&json),
        ["[sandbox] default 'nope': no sandbox provider of that name is available; the built-in one is 'local'"]
    );
    let (code, json) = Project::new("[sandbox]\ndefault = 3\n").check(&[]);
    assert_eq!(code, 1, "{json}");
    let (code, _) = Project::new("[sandbox]\ndefault = \"docker, local\"\n").check(&[]);
    assert_eq!(
        code, 0,
        "a chain with one provider this agent-env has is fine"
    );
}

/// A `secret:` reference the check could not look up says why: here the configured secret store
/// itself could not be built.
#[test]
fn a_secret_not_looked_up_says_the_secret_store_could_not_be_built() {
    let p = Project::new(
        "[stores.secret]\nimpl = \"agentenv-vault:Vault\"\n[stores.image]\nimpl = \"LocalRegistryImageStore\"\nconfig = { registry_host = \"secret:HOST\" }\n",
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json:#}");
    let notes = json["notes"].to_string();
    assert!(
        notes.contains("secret:HOST was not looked up: the configured secret store could not be built (Cannot import impl 'agentenv-vault:Vault'"),
        "{json:#}"
    );
}

/// A reference that does not resolve hides none of the store's other problems.
#[test]
fn an_unresolved_reference_and_the_stores_other_problems_are_said_together() {
    let p = Project::new(
        "[stores.image]\nimpl = \"LocalRegistryImageStore\"\nconfig = { registry_host = \"env:IMG_HOST_UNSET\", foo = 1 }\n[stores.secret]\nimpl = \"LocalSecretStore\"\nconfig = { use_env = \"yes\", file_path = \"env:NOPE_NOT_SET\" }\n",
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1);
    let found = messages(&json);
    assert_eq!(found.len(), 4, "{found:#?}");
    assert!(
        found
            .iter()
            .any(|m| m.contains("Unresolved env:IMG_HOST_UNSET")),
        "{found:#?}"
    );
    assert!(
        found.iter().any(|m| m.contains("has unknown key 'foo'")),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|m| m.contains("Unresolved env:NOPE_NOT_SET")),
        "{found:#?}"
    );
    assert!(
        found.iter().any(|m| m.contains("sets use_env to \"yes\"")),
        "{found:#?}"
    );
}

/// Every reference that does not resolve is said at once, a hosted store's and a plugin table's
/// included, so a new teammate sets every variable in one round.
#[test]
fn every_unresolved_reference_of_every_table_is_said_at_once() {
    let p = Project::new(
        "[stores.object]\nimpl = \"S3ObjectStore\"\nconfig = { bucket = \"team\", region = \"eu-west-3\", access_key_id = \"env:TEAM_S3_KEY\", secret_access_key = \"env:TEAM_S3_SECRET\" }\n[model]\nkey = \"env:MODEL_KEY_UNSET\"\nparams = { base = \"env:MODEL_BASE_UNSET\" }\n[plugins.bar]\nx = \"env:BAR_X_UNSET\"\ny = [\"env:BAR_Y_UNSET\"]\n",
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1);
    let found = messages(&json);
    let unresolved = |name: &str| {
        format!("Unresolved env:{name} reference (no value and no default); set the environment variable {name}, or give a default: env:{name}?DEFAULT")
    };
    assert_eq!(
        found,
        [
            format!(
                "[stores.object.config] access_key_id: {}",
                unresolved("TEAM_S3_KEY")
            ),
            format!(
                "[stores.object.config] secret_access_key: {}",
                unresolved("TEAM_S3_SECRET")
            ),
            format!("[model] key: {}", unresolved("MODEL_KEY_UNSET")),
            format!("[model] params.base: {}", unresolved("MODEL_BASE_UNSET")),
        ]
    );
    let warnings = warnings_of(&json);
    assert!(
        warnings.iter().any(|w| w.contains("env:BAR_X_UNSET")),
        "{warnings:#?}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("env:BAR_Y_UNSET")),
        "{warnings:#?}"
    );
}

/// The @local documents' database (what bundle runs write) is not a configured document store: its
/// ids would mix with a team's.
#[test]
fn a_document_store_on_the_local_database_is_refused() {
    let p = Project::new("");
    let local = p
        .home
        .join(".local/state/agent-env/document_store/local.db");
    std::fs::write(
        p.root.join(".agentenv/config.toml"),
        format!(
            "[stores.document]\nimpl = \"LocalSqliteDocumentStore\"\nconfig = {{ path = \"{}\" }}\n",
            local.display()
        ),
    )
    .unwrap();
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json:#}");
    assert!(
        messages(&json)
            .iter()
            .any(|m| m.contains("which is kept for @local documents")),
        "{json:#}"
    );
}

/// An impl in a registration table whose package is not installed is a problem here, as `plugin
/// check` reports it (a run leaves it to the step that would use it).
#[test]
fn an_impl_of_a_package_not_installed_is_a_problem() {
    let p = Project::new("[task_steps]\nimpls = [\"mycorp_demo.steps:GradeTaskStep\"]\n");
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json:#}");
    assert_eq!(
        messages(&json),
        ["[task_steps] impls: Cannot import impl 'mycorp_demo.steps:GradeTaskStep': no installed plugin package named 'mycorp_demo.steps'; `agent-env plugin list` shows the installed ones"]
    );
    p.manifest("openciv3", OPENCIV3);
    std::fs::write(
        p.root.join(".agentenv/config.toml"),
        "[task_steps]\nimpls = [\"agentenv_openciv3:Match\"]\n",
    )
    .unwrap();
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json:#}");
}

/// The original's `module:Class` in `impls`: when an installed plugin provides the class, the message
/// spells the impl for it, as it does for a store.
#[test]
fn an_impl_in_the_originals_module_form_is_spelled_for_its_package() {
    let p = Project::new(
        "[task_steps]\nimpls = [\"agentenv_demo7.steps:EnvProbe\"]\n[explorer.plugins]\nimpls = [\"agentenv_demo7.web:Board\"]\n",
    );
    p.manifest(
        "demo-7",
        "[plugin]\nname = \"demo-7\"\nversion = \"0.1.0\"\nexec = [\"./bin/none\"]\nprotocol = [1, 1]\n[provides.task_steps]\nenv_probe = \"EnvProbe\"\n[provides.explorer_plugins]\nboard = \"Board\"\n",
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json:#}");
    assert_eq!(
        messages(&json),
        [
            "[task_steps] impls: Cannot import impl 'agentenv_demo7.steps:EnvProbe': no installed plugin package named 'agentenv_demo7.steps'; demo-7 provides EnvProbe: write \"demo-7:EnvProbe\"",
            "[explorer.plugins] impls: Cannot import impl 'agentenv_demo7.web:Board': no installed plugin package named 'agentenv_demo7.web'; demo-7 provides Board: write \"demo-7:Board\"",
        ]
    );
}

#[test]
fn store_variables_are_checked_and_beat_the_file() {
    let p = Project::new("[stores.object]\nimpl = \"fakestore.Store\"\n");
    let (code, json) = p.check(&[("AGENT_ENV_OBJECT_STORE", "bogus")]);
    assert_eq!(code, 1);
    assert_eq!(
        messages(&json),
        ["Unknown AGENT_ENV_OBJECT_STORE='bogus': expected 'local', or a [stores.object] table for a hosted backend (and unset AGENT_ENV_OBJECT_STORE, which overrides it)"]
    );
    // `local` from the variable wins over the broken file table.
    let (code, _) = p.check(&[("AGENT_ENV_OBJECT_STORE", "local")]);
    assert_eq!(code, 0);
}

/// A manifest whose executable does not exist: checks against the manifest fail before anything starts.
const OPENCIV3: &str = "[plugin]\nname = \"agentenv-openciv3\"\nversion = \"0.1.0\"\nexec = [\"./bin/none\"]\nprotocol = [1, 1]\n[provides.stores]\nContentAddressedObjectStore = \"object\"\n";

/// The working fixture plugin: `MemoryObjectStore` takes `root` (required) and `bucket`;
/// `TableSecretStore` takes `values`.
fn works_manifest() -> String {
    format!(
        "[plugin]\nname = \"agentenv-fixture-works\"\nversion = \"0.3.0\"\nexec = [\"{}\"]\nprotocol = [1, 1]\n[provides.stores]\nMemoryObjectStore = \"object\"\nTableSecretStore = \"secret\"\n",
        crate::support::fixture("fixture-works").display()
    )
}

#[test]
fn plugin_stores_are_checked_against_the_installed_manifests() {
    let config = |kind: &str, imp: &str| format!("[stores.{kind}]\nimpl = \"{imp}\"\n");
    let p = Project::new("");
    p.manifest("openciv3", OPENCIV3);
    for (kind, imp, message) in [
        ("object", "agentenv-openciv3:Nope", "Cannot import impl 'agentenv-openciv3:Nope': agentenv-openciv3 0.1.0 lists no store class 'Nope' under [provides.stores] (it lists ContentAddressedObjectStore)"),
        ("object", "nobody:Cas", "Cannot import impl 'nobody:Cas': no installed plugin package named 'nobody'; a plugin's store is named '<package>:<Class>', with the package as `agent-env plugin list` prints it"),
        ("document", "agentenv-openciv3:ContentAddressedObjectStore", "impl 'agentenv-openciv3:ContentAddressedObjectStore' is an object store (agentenv-openciv3 lists it so under [provides.stores]); [stores.document] needs a document store"),
        // The original's impl names a Python module: the package that lists the class is named.
        ("object", "agentenv_openciv3.stores:ContentAddressedObjectStore", "Cannot import impl 'agentenv_openciv3.stores:ContentAddressedObjectStore': no installed plugin package named 'agentenv_openciv3.stores'; agentenv-openciv3 provides ContentAddressedObjectStore: write impl = \"agentenv-openciv3:ContentAddressedObjectStore\""),
    ] {
        std::fs::write(p.root.join(".agentenv/config.toml"), config(kind, imp)).unwrap();
        let (code, json) = p.check(&[]);
        assert_eq!(code, 1);
        assert_eq!(messages(&json), [message]);
    }
}

/// The original's impl, a Python module path, with no plugin installed that provides the class:
/// `config check` and `store check` say the one sentence, which sends the user to porting it.
#[test]
fn a_python_module_path_impl_is_said_to_be_a_python_store_class() {
    let p = Project::new(
        "[stores.object]\nimpl = \"agentenv_openciv3.stores:ContentAddressedObjectStore\"\n",
    );
    let said = "Cannot import impl 'agentenv_openciv3.stores:ContentAddressedObjectStore': 'agentenv_openciv3.stores' is a Python module path, and this agent-env does not load Python store classes: a store written in Python is a plugin (`agent-env plugin new NAME --lang python --kind store --store object` sets one up), named impl = \"<package>:<Class>\" once `agent-env plugin add` installed it; see \"A plugin is a program with a manifest\" in docs/migrating-from-python.md";
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json}");
    assert_eq!(messages(&json), [said]);
    let (code, out, err) = p.run_stderr(&[], &["store", "check", "object"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains(said) || err.contains(said), "{out}\n{err}");
}

#[test]
fn a_plugin_stores_keys_are_held_to_those_its_class_declares() {
    let p = Project::new(
        "[stores.object]\nimpl = \"agentenv_fixture_works:MemoryObjectStore\"\nconfig = { root = \"/x\" }\n",
    );
    p.manifest("works", &works_manifest());
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["notes"], serde_json::json!([]));
    for (config, message) in [
        ("{ bucket = \"b\" }", "[stores.object.config] The config table for 'agentenv-fixture-works:MemoryObjectStore' lacks the required key 'root'; it takes root, bucket (the keys the plugin agentenv-fixture-works declares for MemoryObjectStore in its initialize answer)"),
        ("{ root = \"/x\", colour = 1 }", "[stores.object.config] The config table for 'agentenv-fixture-works:MemoryObjectStore' has unknown key 'colour'; it takes root, bucket (the keys the plugin agentenv-fixture-works declares for MemoryObjectStore in its initialize answer)"),
    ] {
        std::fs::write(
            p.root.join(".agentenv/config.toml"),
            format!("[stores.object]\nimpl = \"agentenv_fixture_works:MemoryObjectStore\"\nconfig = {config}\n"),
        )
        .unwrap();
        let (code, json) = p.check(&[]);
        assert_eq!(code, 1, "{json}");
        assert_eq!(messages(&json), [message]);
    }
}

#[test]
fn a_plugin_store_whose_plugin_cannot_start_is_a_problem() {
    let p =
        Project::new("[stores.object]\nimpl = \"agentenv-openciv3:ContentAddressedObjectStore\"\n");
    p.manifest("openciv3", OPENCIV3);
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json}");
    let problems = messages(&json);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("agentenv-openciv3"), "{problems:?}");
}

#[test]
fn a_local_store_whose_folder_cannot_be_made_is_a_problem() {
    let p = Project::new("");
    let file = p.home.join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    p.local_stores_under(&file);
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json}");
    let file = file.display();
    assert_eq!(
        messages(&json),
        [
            format!("Cannot create the local state directory {file}/docs: {file} is not a folder; point XDG_STATE_HOME (or the store's config) at a writable place"),
            format!("Cannot create the local state directory {file}/objects: {file} is not a folder; point XDG_STATE_HOME (or the store's config) at a writable place"),
        ]
    );
}

/// The user a permission test runs agent-env as: this one, or `nobody` when this one is root (root may
/// write anywhere, so as root the refusal could never be seen).
const NOBODY: u32 = 65534;

#[test]
fn a_local_store_under_a_folder_this_user_cannot_write_in_is_a_problem() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let p = Project::new("");
    let base = p.root.parent().unwrap().to_path_buf();
    // SAFETY: geteuid has no preconditions and cannot fail.
    let as_root = unsafe { libc::geteuid() } == 0;
    let locked = base.join("locked");
    std::fs::create_dir(&locked).unwrap();
    p.local_stores_under(&locked);
    let mut cmd = if as_root {
        // agent-env runs as nobody, from a link to it inside the temp folder (the build's own folder may
        // be closed to other users), and the temp folder is opened to be walked through.
        let binary = base.join("agent-env");
        let built = env!("CARGO_BIN_EXE_agent-env");
        std::fs::hard_link(built, &binary)
            .or_else(|_| std::fs::copy(built, &binary).map(|_| ()))
            .unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::chown(&locked, Some(NOBODY), Some(NOBODY)).unwrap();
        let mut cmd = p.command(&binary);
        cmd.uid(NOBODY).gid(NOBODY);
        cmd
    } else {
        p.command(Path::new(env!("CARGO_BIN_EXE_agent-env")))
    };
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
    cmd.args(["config", "check", "--json"]);
    let out = cmd.output().unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let locked = locked.display();
    assert_eq!(
        messages(&json),
        [
            format!("Cannot create the local state directory {locked}/docs: this user may not write in {locked}; point XDG_STATE_HOME (or the store's config) at a writable place"),
            format!("Cannot create the local state directory {locked}/objects: this user may not write in {locked}; point XDG_STATE_HOME (or the store's config) at a writable place"),
        ]
    );
}

/// A store folder that is there but closed to this user (`chmod 000`) is said to be unusable, not
/// said to need making.
#[test]
fn a_local_store_folder_this_user_cannot_read_is_said_unusable() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let p = Project::new("");
    let base = p.root.parent().unwrap().to_path_buf();
    // SAFETY: geteuid has no preconditions and cannot fail.
    let as_root = unsafe { libc::geteuid() } == 0;
    let stores = base.join("stores");
    let objects = stores.join("objects");
    std::fs::create_dir_all(stores.join("docs")).unwrap();
    std::fs::create_dir_all(&objects).unwrap();
    p.local_stores_under(&stores);
    let mut cmd = if as_root {
        let binary = base.join("agent-env");
        let built = env!("CARGO_BIN_EXE_agent-env");
        std::fs::hard_link(built, &binary)
            .or_else(|_| std::fs::copy(built, &binary).map(|_| ()))
            .unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        for d in [&stores, &stores.join("docs"), &objects] {
            std::os::unix::fs::chown(d, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        let mut cmd = p.command(&binary);
        cmd.uid(NOBODY).gid(NOBODY);
        cmd
    } else {
        p.command(Path::new(env!("CARGO_BIN_EXE_agent-env")))
    };
    std::fs::set_permissions(&objects, std::fs::Permissions::from_mode(0o000)).unwrap();
    cmd.args(["config", "check", "--json"]);
    let out = cmd.output().unwrap();
    std::fs::set_permissions(&objects, std::fs::Permissions::from_mode(0o700)).unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let objects = objects.display();
    assert_eq!(
        messages(&json),
        [format!("The local state directory {objects} can't be used: this user may not read and write in {objects}; let this user read and write in it (chmod u+rwx), or point XDG_STATE_HOME (or the store's config) at a place it may")]
    );
}

#[test]
fn secret_references_go_through_the_secret_store() {
    let p = Project::new(
        "[stores.object]\nimpl = \"agentenv-fixture-works:MemoryObjectStore\"\nconfig = { root = \"/x\" }\n[model]\napi_key = \"secret:proxy_key\"\n",
    );
    p.manifest("works", &works_manifest());
    // The local secret store reads the environment first.
    let (code, json) = p.check(&[("proxy_key", "sk-1")]);
    assert_eq!(code, 0, "{json}");
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1);
    assert_eq!(
        messages(&json),
        ["[model] api_key: Unresolved secret:proxy_key reference (no value and no default); put proxy_key in the configured secret store (the built-in one reads the environment variable proxy_key first, then its values and its file)"]
    );
    // The secret store's own values are used too, a plugin's among them.
    let p = Project::new(
        "[stores.secret]\nimpl = \"agent_env.store.secret_store:LocalSecretStore\"\nconfig = { values = { proxy_key = \"v\" } }\n[model]\napi_key = \"secret:proxy_key\"\n",
    );
    assert_eq!(p.check(&[]).0, 0);
    let p = Project::new(
        "[stores.secret]\nimpl = \"agentenv-fixture-works:TableSecretStore\"\nconfig = { values = { proxy_key = \"v\" } }\n[model]\napi_key = \"secret:proxy_key\"\n",
    );
    p.manifest("works", &works_manifest());
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json}");
}

#[test]
fn checking_builds_nothing_on_disk() {
    let p = Project::new("");
    let (code, _) = p.check(&[]);
    assert_eq!(code, 0);
    assert!(
        !p.home.join(".local").exists(),
        "config check created state"
    );
}

#[test]
fn secret_references_in_the_secret_store_itself_cannot_resolve() {
    let p = Project::new(
        "[stores.secret]\nimpl = \"agent_env.store.secret_store:LocalSecretStore\"\nconfig = { file_path = \"secret:path\" }\n",
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1);
    assert_eq!(
        messages(&json),
        ["[stores.secret.config] file_path: Cannot resolve 'secret:path': no secret store is available for secret: references here"]
    );
}

#[test]
fn scenario_13_a_missing_agent_env_config_fails_the_check() {
    let p = Project::new("");
    let (code, json) = p.check(&[("AGENT_ENV_CONFIG", "/nope.toml")]);
    assert_eq!(code, 1);
    assert_eq!(
        messages(&json),
        ["AGENT_ENV_CONFIG='/nope.toml' does not point to an existing file; unset AGENT_ENV_CONFIG or point it at a config file"]
    );
    assert_eq!(json["problems"][0]["code"], "config-not-found");
    let (code, text) = p.run_with(&[("AGENT_ENV_CONFIG", "/nope.toml")], &["config", "check"]);
    assert_eq!(code, 1);
    assert!(
        text.ends_with("\n1 problem(s) found; no config file was read\n"),
        "{text}"
    );
}

#[test]
fn malformed_toml_fails_the_check_as_unreadable() {
    let p = Project::new("[stores\n");
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1);
    assert_eq!(json["problems"][0]["code"], "config-unreadable");
    assert!(messages(&json)[0].starts_with("Malformed config.toml at "));
}

#[test]
fn run_checks_the_config_before_any_step() {
    let p = Project::new(
        "[stores.secret]\nimpl = \"LocalSecretStore\"\nconfig = { file_path = \"env:NOPE\" }\n[envs]\nimpls = 3\n",
    );
    let (code, out, err) = p.run_stderr(&[], &["run", "hello", "--dry-run"]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(out, "", "nothing may run");
    let path = p.root.join(".agentenv/config.toml");
    assert_eq!(
        err,
        format!(
            "Error: the config at {} has 2 problem(s), so nothing was run:
  [stores.secret.config] file_path: Unresolved env:NOPE reference (no value and no default); set the environment variable NOPE, or give a default: env:NOPE?DEFAULT
  [envs] impls must be a list of 'module:Class' strings, got int
Fix them, then check with `agent-env config check`.
",
            path.display()
        )
    );
    assert!(
        !p.home.join(".local").exists(),
        "the refused run wrote state"
    );
}

/// A bundle run keeps its objects and documents in the local stores, so the shared stores'
/// sections are not its to check: a teammate without their credentials still runs bundles. A
/// stored task's run reads them, and refuses.
#[test]
fn a_bundle_run_is_not_stopped_by_the_shared_stores_credentials() {
    let p = Project::new(
        "[stores.document]\nimpl = \"PostgresDocumentStore\"\nconfig = { dsn = \"env:TEAM_PG_DSN\" }\n[stores.object]\nimpl = \"S3ObjectStore\"\nconfig = { bucket = \"team\", region = \"eu-west-3\", secret_access_key = \"env:TEAM_S3_SECRET\", access_key_id = \"env:TEAM_S3_KEY\" }\n",
    );
    let (code, out, err) = p.run_stderr(&[], &["run", "hello", "-q"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = p.run_stderr(&[], &["task", "run", "team/hello"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("[stores.document.config] dsn: Unresolved env:TEAM_PG_DSN reference"),
        "{err}"
    );
}

#[test]
fn provider_tables_on_built_in_backends() {
    let p = Project::new(
        "[sandbox.providers.local]\nimpl = \"agentenv-alt:Box2\"\n[sandbox.providers.modal]\nconfig = { region = \"x\" }\nextra = 2\n[sandbox.providers.docker.config]\nimage = \"ok\"\n[state.providers.local_postgres]\nconfig = {}\n",
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1);
    assert_eq!(
        messages(&json),
        [
            "config.toml sandbox provider 'local' collides with a built-in backend: a built-in's impl cannot be replaced; supply a config-only table instead",
            "[sandbox.providers.modal] configures a built-in backend and accepts only a 'config' table; got ['extra', 'config']",
            "config.toml state provider 'local_postgres' collides with a built-in backend ('local_postgres' is built into the Python agent-env and reserved here, though this agent-env does not run it: give your provider another name, such as 'my-local_postgres', and use that name)",
        ]
    );
}

/// A config-only table for a sandbox provider only the Python agent-env runs is a warning: nothing
/// here reads it.
#[test]
fn a_provider_only_the_python_agent_env_runs_is_a_warning() {
    let p = Project::new("[sandbox.providers.modal]\nconfig = { region = \"x\" }\n");
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json}");
    let warnings = warnings_of(&json);
    assert_eq!(
        warnings,
        ["[sandbox.providers.modal] configures 'modal', a sandbox provider built into the Python agent-env that this agent-env does not run (its one provider is 'local'), so nothing uses the table; remove it, or keep it for the Python agent-env"],
        "{json}"
    );
}

/// A runner other than the built-in one is one problem whichever way it is chosen (the variable,
/// a `[runner]` table, `runner = "…"`), said in one sentence whose advice never points at a setting
/// that does nothing; runs refuse it alike, and `AGENT_ENV_RUNNER=local` overrides the file's.
#[test]
fn every_spelling_of_a_runner_agent_env_lacks_is_the_same_problem() {
    let why = "chooses a runner this agent-env does not have: it runs every task with its built-in runner (run, task run and the explorer alike), and no plugin can provide another, so no run starts while it is set; ";
    let from_file = |setting: &str| {
        format!("remove {setting} from the config file (the built-in runner needs no setting), or, to keep it for the Python agent-env, set AGENT_ENV_RUNNER=local, which overrides it here")
    };
    let spellings = [
        (
            "",
            Some("foo"),
            format!("AGENT_ENV_RUNNER='foo' {why}unset AGENT_ENV_RUNNER, or set it to 'local'"),
        ),
        (
            "[runner]\nimpl = \"ModalRunner\"\n",
            None,
            format!(
                "[runner] impl = 'ModalRunner' {why}{}",
                from_file("[runner]")
            ),
        ),
        (
            "runner = \"modal\"\n",
            None,
            format!("runner = 'modal' {why}{}", from_file("runner = 'modal'")),
        ),
    ];
    for (config, runner, said) in spellings {
        let p = Project::new(config);
        let vars: Vec<(&str, &str)> = runner
            .map(|r| ("AGENT_ENV_RUNNER", r))
            .into_iter()
            .collect();
        let (code, json) = p.check(&vars);
        assert_eq!(code, 1, "{config}: {json}");
        assert_eq!(
            messages(&json),
            std::slice::from_ref(&said),
            "{config}: {json}"
        );
        assert_eq!(json["problems"][0]["code"], "config-invalid", "{json}");
        assert!(
            !json["warnings"].to_string().contains("runner"),
            "said twice: {json}"
        );
        let (code, out, err) = p.run_stderr(&vars, &["run", "hello", "--dry-run"]);
        assert_eq!(code, 1, "{config}: {out}{err}");
        assert_eq!(out, "", "nothing may run");
        assert!(err.contains(&format!("  {said}\n")), "{config}: {err}");
    }
    // The built-in runner, however it is named, is no problem; nor is a file's other runner that
    // AGENT_ENV_RUNNER=local overrides.
    for (config, runner) in [
        ("[runner]\nimpl = \"LocalRunner\"\n", None),
        ("[runner]\nimpl = \"agent_env.runner:LocalRunner\"\n", None),
        ("runner = \"local\"\n", None),
        ("", None),
        ("", Some("local")),
        ("[runner]\nimpl = \"acme:FastRunner\"\n", Some("local")),
    ] {
        let vars: Vec<(&str, &str)> = runner
            .map(|r| ("AGENT_ENV_RUNNER", r))
            .into_iter()
            .collect();
        let (code, json) = Project::new(config).check(&vars);
        assert_eq!(code, 0, "{config} {runner:?}: {json}");
        assert!(
            !json.to_string().contains("runner"),
            "{config} {runner:?}: {json}"
        );
    }
}

/// Every problem of a built-in store's settings is its own problem, in one run: unknown keys, values
/// of the wrong type and bad values alike, each naming the store and the key.
#[test]
fn every_bad_setting_of_a_local_store_is_its_own_problem() {
    let p = Project::new(
        r#"
[stores.document]
impl = "LocalSqliteDocumentStore"
config = { path = 5, colour = 1 }

[stores.object]
impl = "LocalFilesystemObjectStore"
config = { grants = "on", grant_bind_host = "nowhere", grant_advertise_host = "8.8.8.8", grant_lifetime_seconds = 3, root = 7, bucket = "b" }

[stores.image]
impl = "LocalRegistryImageStore"
config = { registry_host = "http://registry.example/v2" }

[stores.secret]
impl = "LocalSecretStore"
config = { values = 5, use_env = "yes" }
"#,
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json}");
    assert_eq!(
        messages(&json),
        [
            "The config table for 'LocalSqliteDocumentStore' has unknown key 'colour'; it takes path",
            "The config table for 'LocalSqliteDocumentStore' sets path to 5; it must be a string",
            "The config table for 'LocalFilesystemObjectStore' has unknown key 'bucket'; it takes root, grants, grant_bind_host, grant_advertise_host, grant_lifetime_seconds",
            "LocalFilesystemObjectStore: grants must be one of ('auto', 'off'), got 'on'",
            "LocalFilesystemObjectStore: grant_bind_host must be an IP address, got 'nowhere'",
            "LocalFilesystemObjectStore: grant_advertise_host '8.8.8.8' is not a loopback or private address, which the local transfer CA vouches for",
            "LocalFilesystemObjectStore: grant_lifetime_seconds must be at least 900, to outlast a transfer; got 3",
            "The config table for 'LocalFilesystemObjectStore' sets root to 7; it must be a string",
            "LocalRegistryImageStore: registry_host must be an authority without a scheme or path (host[:port], such as localhost:5000), got 'http://registry.example/v2'",
            "The config table for 'LocalSecretStore' sets values to 5; it must be a table",
            "The config table for 'LocalSecretStore' sets use_env to \"yes\"; it must be true or false",
        ]
    );
    // A bundle run refuses to start and names those of the stores it reads (the secret and image
    // stores: its objects and documents are the local stores').
    let (code, _, err) = p.run_stderr(&[], &["run", "hello", "--dry-run"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("has 3 problem(s), so nothing was run"),
        "{err}"
    );
}

/// The local object store's grant settings name the store, as the hosted stores' settings do.
#[test]
fn the_local_object_stores_grant_settings_name_the_store() {
    let p = Project::new(
        "[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = { grant_advertise_host = \"example.com\" }\n",
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json}");
    assert_eq!(
        messages(&json),
        ["LocalFilesystemObjectStore: grant_advertise_host 'example.com' is not a local name; the local transfer CA vouches only for localhost, host.docker.internal and loopback or private addresses"]
    );
}

/// A hosted store's bad settings are each their own problem too, unknown keys among them, and none
/// of them waits on a server.
/// A grant server bound beyond loopback is a warning saying what it exposes and how to keep it to
/// this machine; the check still passes. Loopback says nothing.
#[test]
fn a_grant_server_listening_beyond_this_machine_is_warned_of() {
    let config = |bind: &str| {
        format!("[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = {{ grant_bind_host = \"{bind}\" }}\n")
    };
    for bind in ["0.0.0.0", "::"] {
        let p = Project::new(&config(bind));
        let (code, json) = p.check(&[]);
        assert_eq!(code, 0, "{json:#}");
        let warnings = warnings_of(&json);
        assert_eq!(warnings.len(), 1, "{json:#}");
        assert!(
            warnings[0].starts_with(&format!("[stores.object.config] grant_bind_host = '{bind}' makes the local object store's grant server listen on every network address of this machine: any of them can reach the server and, with a grant URL it gets hold of, read or write the store's objects")),
            "{json:#}"
        );
        assert!(
            warnings[0].contains(
                "set grant_bind_host = \"127.0.0.1\" (the default) to keep it to this machine"
            ),
            "{json:#}"
        );
    }
    let (code, out) = Project::new(&config("10.0.0.7")).run_with(&[], &["config", "check"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with("warning: [stores.object.config] grant_bind_host = '10.0.0.7' makes the local object store's grant server listen on 10.0.0.7, which other machines on its network reach"),
        "{out}"
    );
    // A reference is read as the store reads it.
    let p = Project::new("[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = { grant_bind_host = \"env:BIND?127.0.0.1\" }\n");
    assert!(warnings_of(&p.check(&[]).1).is_empty());
    assert_eq!(warnings_of(&p.check(&[("BIND", "0.0.0.0")]).1).len(), 1);
    for quiet in [config("127.0.0.1"), config("::1"), String::new()] {
        let (code, json) = Project::new(&quiet).check(&[]);
        assert_eq!(code, 0, "{json:#}");
        assert!(warnings_of(&json).is_empty(), "{quiet}: {json:#}");
    }
}

#[test]
fn every_bad_setting_of_a_hosted_store_is_its_own_problem() {
    let p = Project::new(
        "[stores.document]\nimpl = \"PostgresDocumentStore\"\nconfig = { dsn = 5, schema = 6, pool = 2 }\n[stores.object]\nimpl = \"S3ObjectStore\"\nconfig = { region = 5, endpoint = \"ftp://s3.example\", colour = \"red\" }\n",
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json}");
    assert_eq!(
        messages(&json),
        [
            "The config table for 'PostgresDocumentStore' has unknown key 'pool'; it takes dsn, schema",
            "The config table for 'PostgresDocumentStore' sets dsn to 5; it must be a string",
            "The config table for 'PostgresDocumentStore' sets schema to 6; it must be a string",
            "The config table for 'S3ObjectStore' has unknown key 'colour'; it takes bucket, region, endpoint, path_style, access_key_id, secret_access_key, session_token, share_credentials, grant_lifetime_seconds, timeout_seconds",
            "S3ObjectStore: bucket is not set; name the bucket the store keeps its objects in, such as bucket = \"team-agent-env\"",
            "S3ObjectStore: region must be a string, got 5",
            "S3ObjectStore: endpoint must be an http:// or https:// URL, got 'ftp://s3.example'",
        ]
    );
    let p = Project::new(
        "[stores.document]\nimpl = \"PostgresDocumentStore\"\nconfig = { dsn = \"mysql://nowhere\", schema = \"\" }\n",
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json}");
    let found = messages(&json);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("PostgresDocumentStore: dsn does not parse"),
        "{found:?}"
    );
    assert_eq!(
        found[1],
        "PostgresDocumentStore: schema must name a schema, got an empty string"
    );
}

#[test]
fn a_stores_value_that_is_not_a_table_is_one_problem() {
    let p = Project::new("stores = 5\n");
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1);
    assert_eq!(
        messages(&json),
        ["config.toml [stores] must be a table, got int"]
    );
}

/// A bundle run keeps its documents and objects in the local stores, so a bad setting of
/// `[stores.object]` does not stop it; but a `[stores.document]` that selects nothing is the
/// config's own fault on every machine, and the run refuses rather than go on as if it were not
/// written. `config check` names all three, and says what `impl` takes.
#[test]
fn a_store_section_a_bundle_run_does_not_read_stops_it_only_when_it_selects_nothing() {
    let p = Project::new(
        "[stores.document]\nimpl = 5\n[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = { root = 42, bucket = \"b\" }\n",
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1);
    let found = messages(&json);
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(
        found[0],
        "[stores.document] impl must be a string, got int: 5; write impl = \"LocalSqliteDocumentStore\" for the built-in store, or \"<package>:<Class>\" for a plugin's"
    );
    let (code, out, err) = p.run_stderr(&[], &["run", "hello", "-q"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("has 1 problem(s), so nothing was run:\n  [stores.document] impl must be a string, got int: 5"),
        "{err}"
    );
    std::fs::write(
        p.root.join(".agentenv/config.toml"),
        "[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = { root = 42, bucket = \"b\" }\n",
    )
    .unwrap();
    let (code, out, err) = p.run_stderr(&[], &["run", "hello", "-q"]);
    assert_eq!(code, 0, "{out}{err}");
    std::fs::write(
        p.root.join(".agentenv/config.toml"),
        "[stores.document]\nimpl = 5\n",
    )
    .unwrap();
    let (code, _, err) = p.run_stderr(&[], &["task", "run", "team/hello"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("[stores.document] impl must be a string, got int: 5"),
        "{err}"
    );
}

/// A `[stores]` table the user wrote and broke (a section that is not a table, one that names no
/// impl, an impl no one has) refuses a bundle run, as `config check` fails on it: the run does not
/// go on with the local stores as if nothing were written. A missing credential does not (above).
#[test]
fn a_broken_store_section_refuses_a_bundle_run() {
    for (config, said) in [
        (
            "[stores]\nobject = 5\n",
            "config.toml [stores] object must be 'local' or a [stores.object] table naming the implementation (impl) and its config, got int: 5",
        ),
        (
            "[stores.object]\ntype = \"nosuch\"\n",
            "[stores.object] names no impl, the store it uses (it has type = \"nosuch\")",
        ),
        (
            "[stores.document]\nimpl = \"nosuch\"\n",
            "[stores.document] impl 'nosuch' is neither a built-in store's class nor a plugin's '<package>:<Class>'",
        ),
    ] {
        let p = Project::new(config);
        let (code, out) = p.run_with(&[], &["config", "check"]);
        assert_eq!(code, 1, "{config}: {out}");
        assert!(out.contains(said), "{config}: {out}");
        let (code, out, err) = p.run_stderr(&[], &["run", "hello", "-q"]);
        assert_eq!(code, 1, "{config}: {out}{err}");
        assert!(
            err.contains(&format!("has 1 problem(s), so nothing was run:\n  {said}")),
            "{config}: {err}"
        );
        assert!(
            !p.home.join(".local/state/agent-env/document_store").exists(),
            "{config}: the refused run wrote state"
        );
    }
}

/// An installed plugin whose table cannot be read does not start, so a run whose tasks use one of
/// its steps refuses: `config check`, the gate before runs, fails on it too, in the run's words.
#[test]
fn an_installed_plugins_table_that_cannot_be_read_is_a_problem() {
    let p = Project::new(
        "[plugins.agentenv-fixture-works]\ntoken = \"env:NOPE_UNSET\"\n[plugins.agentenv-absent]\ntoken = \"env:NOPE_UNSET\"\n",
    );
    p.manifest("works", &works_manifest());
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json}");
    assert_eq!(json["ok"], false);
    assert_eq!(json["problems"][0]["code"], "config-invalid");
    assert_eq!(
        messages(&json),
        ["[plugins.agentenv-fixture-works]: Unresolved env:NOPE_UNSET reference (no value and no default); set the environment variable NOPE_UNSET, or give a default: env:NOPE_UNSET?DEFAULT (agentenv-fixture-works does not start until it is fixed: a run whose tasks use one of its steps refuses to start, and what else it provides fails to load)"]
    );
    // The table of a package that is not installed stays a warning.
    assert_eq!(
        warnings_of(&json),
        ["[plugins.agentenv-absent]: Unresolved env:NOPE_UNSET reference (no value and no default); set the environment variable NOPE_UNSET, or give a default: env:NOPE_UNSET?DEFAULT; no installed plugin is named agentenv-absent, so nothing reads the table now; once agentenv-absent is installed, it does not start until the table is fixed"]
    );
    let (code, json) = p.check(&[("NOPE_UNSET", "tok")]);
    assert_eq!(code, 0, "{json}");
    // A `[plugins]` that is not a table stops every installed plugin.
    std::fs::write(p.root.join(".agentenv/config.toml"), "plugins = 5\n").unwrap();
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json}");
    assert!(
        messages(&json)[0].starts_with(
            "config.toml [plugins] must be a table, got int (no plugin starts until it is fixed"
        ),
        "{json}"
    );
}

/// A user-level config file is never read; the config commands say so, and how to use it.
#[test]
fn a_user_level_config_file_is_said_to_be_unread() {
    let p = Project::new("");
    std::fs::remove_file(p.root.join(".agentenv/config.toml")).unwrap();
    let user_file = p.home.join(".config/agent-env/config.toml");
    std::fs::create_dir_all(user_file.parent().unwrap()).unwrap();
    std::fs::write(&user_file, "[stores\n").unwrap();
    let said = format!(
        "{} is not read: agent-env reads the nearest .agentenv/config.toml walking up from the working folder, or the file $AGENT_ENV_CONFIG names; point AGENT_ENV_CONFIG at it to use it",
        user_file.display()
    );
    let (code, out) = p.run_with(&[], &["config", "check"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("note: {said}\n")), "{out}");
    assert!(out.contains("ok: (no config file)"), "{out}");
    let (code, json) = p.check(&[]);
    assert_eq!((code, &json["ok"]), (0, &serde_json::json!(true)));
    assert!(
        json["notes"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!(said)),
        "{json}"
    );
    let (code, out) = p.run_with(&[], &["config", "sources"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("   file {}  (not read: ", user_file.display())),
        "{out}"
    );
    let (code, out) = p.run_with(&[], &["config", "debug"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "   {} (user-level, exists: yes): not read: ",
            user_file.display()
        )),
        "{out}"
    );
    // Chosen with $AGENT_ENV_CONFIG, it is read (and this one is malformed), and not said unread.
    let chosen = user_file.display().to_string();
    let (code, out) = p.run_with(&[("AGENT_ENV_CONFIG", &chosen)], &["config", "check"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("Malformed config.toml at"), "{out}");
    assert!(!out.contains("is not read"), "{out}");
    // With $XDG_CONFIG_HOME set, the file under it is the one meant.
    let (_, out) = p.run_with(
        &[("XDG_CONFIG_HOME", "/nonexistent-xdg")],
        &["config", "check"],
    );
    assert!(!out.contains("is not read"), "{out}");
}

/// A plugin's document store with the built-in local object store: nothing says whether other machines
/// share it (the one `plugin new` writes keeps its files on this machine), so `config check` notes what
/// to do if they do, rather than warning that they may; a hosted document store is still warned of.
#[test]
fn a_plugins_document_store_over_local_objects_is_a_note_not_a_warning() {
    let p = Project::new("");
    crate::support::install_store_fixture(
        &p.home.join("plugins"),
        "documents",
        ("agentenv-fixture-documents", "0.1.0"),
        "fixture-documents",
        ("DiskDocumentStore", "document"),
    );
    std::fs::write(
        p.root.join(".agentenv/config.toml"),
        format!(
            "[stores.document]\nimpl = \"agentenv-fixture-documents:DiskDocumentStore\"\nconfig = {{ root = \"{}\" }}\n",
            p.root.join("docs").display()
        ),
    )
    .unwrap();
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json}");
    assert!(
        !warnings_of(&json)
            .iter()
            .any(|w| w.contains("DiskDocumentStore")),
        "{json}"
    );
    let says = "if other machines share the document store DiskDocumentStore ([stores.document]), a plugin's, set [stores.object] to a shared store too (S3ObjectStore, or a plugin's): the object store is LocalFilesystemObjectStore (the built-in default), which keeps its files on this machine";
    assert!(
        json["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with(says)),
        "{json}"
    );
    let (code, out) = p.run_with(&[], &["config", "check"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("note: {says}")), "{out}");
    assert!(!out.contains("warning:"), "{out}");

    // A hosted document store is shared by what it is: warned of.
    std::fs::write(
        p.root.join(".agentenv/config.toml"),
        "[stores.document]\nimpl = \"PostgresDocumentStore\"\nconfig = { dsn = \"postgresql://u@127.0.0.1:1/db\" }\n",
    )
    .unwrap();
    let (_, json) = p.check(&[]);
    assert!(
        warnings_of(&json).iter().any(|w| w.starts_with(
            "the document store is PostgresDocumentStore ([stores.document]), which other machines may share"
        )),
        "{json}"
    );
}

/// An impl one typo away from a built-in class of its kind is named as the likely one, and every
/// built-in class of the kind is offered, not only the local one.
#[test]
fn a_near_miss_of_a_built_in_store_class_says_which_it_likely_means() {
    let p = Project::new("[stores.object]\nimpl = \"S3ObjectStor\"\n");
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json:#}");
    assert_eq!(
        messages(&json),
        ["[stores.object] impl 'S3ObjectStor' is neither a built-in store's class nor a plugin's '<package>:<Class>' (did you mean 'S3ObjectStore'?); write impl = \"LocalFilesystemObjectStore\" or \"S3ObjectStore\" for a built-in store, or \"<package>:<Class>\" for a plugin's"]
    );
}

/// Settings that say where a secret is or how it is used, not the secret, are no credential written
/// out; the credentials themselves still are.
#[test]
fn settings_about_a_secret_are_not_warned_of_as_credentials() {
    let p = Project::new(
        r#"[model]
credentials = "default"
token_url = "https://example.com/oauth/token"
password_file = "/run/secrets/db_password"
api_key_env = "OPENAI_API_KEY"
tokenizer = "cl100k_base"
[plugins.foo]
token_env_var = "GITHUB_TOKEN"
secret_name = "prod/db/pass"
auth_mode = "bearer_token"
[plugins.bar]
api_key = "sk-abc"
password = "hunter22"
token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
"#,
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json:#}");
    let warned: Vec<String> = warnings_of(&json)
        .iter()
        .filter(|w| w.contains(" in the config file: anyone who can read the file"))
        .map(|w| w.split(" is written out").next().unwrap_or(w).to_string())
        .collect();
    assert_eq!(
        warned,
        [
            "[plugins.bar] api_key",
            "[plugins.bar] password",
            "[plugins.bar] token"
        ],
        "{json:#}"
    );
}

/// A `[stores.<kind>]` a bundle run does not read that names a plugin's store no installed plugin
/// provides (a package not installed, a class the package lacks) does not stop the run (a teammate
/// may lack a plugin the shared config names), but the run warns of it before it starts: on the
/// terminal, in `--json`'s warnings and in its log, as `config check` fails on it.
#[test]
fn a_plugin_store_a_bundle_run_does_not_read_and_no_plugin_provides_is_warned_of() {
    let p = Project::new("");
    p.manifest("openciv3", OPENCIV3);
    for (kind, imp, said) in [
        (
            "document",
            "nosuch:Thing",
            "Cannot import impl 'nosuch:Thing': no installed plugin package named 'nosuch'",
        ),
        (
            "object",
            "agentenv-openciv3:NoSuchClass",
            "Cannot import impl 'agentenv-openciv3:NoSuchClass': agentenv-openciv3 0.1.0 lists no store class 'NoSuchClass'",
        ),
    ] {
        std::fs::write(
            p.root.join(".agentenv/config.toml"),
            format!("[stores.{kind}]\nimpl = \"{imp}\"\n"),
        )
        .unwrap();
        let (code, out) = p.run_with(&[], &["config", "check"]);
        assert_eq!(code, 1, "{out}");
        assert!(out.contains(said), "{out}");
        let warned = format!("Warning: [stores.{kind}] {said}");
        let (code, out, err) = p.run_stderr(&[], &["run", "hello", "-q"]);
        assert_eq!(code, 0, "{out}{err}");
        assert!(err.contains(&warned), "{err}");
        assert!(
            err.contains(&format!("this run does not use [stores.{kind}], so it goes on")),
            "{err}"
        );
        let (code, out, err) = p.run_stderr(&[], &["run", "hello", "--json"]);
        assert_eq!(code, 0, "{out}{err}");
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        let warnings = doc["warnings"].as_array().unwrap();
        assert!(
            warnings.iter().any(|w| w["message"]
                .as_str()
                .unwrap()
                .starts_with(&format!("[stores.{kind}] {said}"))),
            "{doc}"
        );
        let log = std::fs::read_to_string(doc["log"].as_str().unwrap()).unwrap();
        assert!(log.contains(&warned), "{log}");
    }
    // A plugin store the installed plugin does provide is said nothing of.
    std::fs::write(
        p.root.join(".agentenv/config.toml"),
        "[stores.object]\nimpl = \"agentenv-openciv3:ContentAddressedObjectStore\"\n",
    )
    .unwrap();
    let (code, out, err) = p.run_stderr(&[], &["run", "hello", "-q"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("Warning"), "{err}");
}

/// Many `[plugins.<package>]` tables are each checked once: the count, a package set twice among
/// them and a reference that does not resolve in the last are all said (the file is read in time
/// linear in its tables, where each table's check read them all again).
#[test]
fn every_one_of_many_plugin_tables_is_checked() {
    let mut config: String = (0..2000)
        .map(|i| format!("[plugins.agentenv-p{i}]\na = {i}\n"))
        .collect();
    config.push_str(
        "[plugins.agentenv_p7]\nb = 1\n[plugins.agentenv-last]\nx = \"env:NOPE_UNSET\"\n",
    );
    let p = Project::new(&config);
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["checked"]["plugin_tables"], 2001, "{json}");
    let warnings = warnings_of(&json);
    assert_eq!(warnings.len(), 2001, "{json}");
    assert!(warnings.contains(&"config.toml sets agentenv-p7's settings more than once, as [plugins.agentenv-p7], [plugins.agentenv_p7]; keep one; no installed plugin is named agentenv-p7, so nothing reads the table now; once agentenv-p7 is installed, it does not start until the table is fixed"), "{json}");
    assert!(
        warnings
            .last()
            .unwrap()
            .starts_with("[plugins.agentenv-last]: Unresolved env:NOPE_UNSET reference"),
        "{json}"
    );
}

/// A `[plugins.<package>]` table no installed plugin reads is a warning of its own (exit 0), with
/// the installed package its name is close to, where `config check` said nothing of it.
#[test]
fn a_plugin_table_no_installed_plugin_reads_is_warned_of() {
    let p = Project::new(
        "[plugins.agentenv-fixture-wroks]\ntoken = \"t\"\n[plugins.agentenv-fixture-works]\ntoken = \"t\"\n[plugins.zebra]\nz = 1\n",
    );
    p.manifest("works", &works_manifest());
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(
        warnings_of(&json),
        [
            "[plugins.agentenv-fixture-wroks]: no installed plugin is named agentenv-fixture-wroks, so nothing reads the table; did you mean [plugins.agentenv-fixture-works]?",
            "[plugins.zebra]: no installed plugin is named zebra, so nothing reads the table; `agent-env plugin list` shows the installed plugins",
        ]
    );
    // A table that cannot be read, of a near miss, says the near miss too.
    std::fs::write(
        p.root.join(".agentenv/config.toml"),
        "[plugins.agentenv-fixture-wroks]\ntoken = \"env:NOPE_UNSET\"\n",
    )
    .unwrap();
    let (code, json) = p.check(&[]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(
        warnings_of(&json),
        ["[plugins.agentenv-fixture-wroks]: Unresolved env:NOPE_UNSET reference (no value and no default); set the environment variable NOPE_UNSET, or give a default: env:NOPE_UNSET?DEFAULT; no installed plugin is named agentenv-fixture-wroks, so nothing reads the table now; once agentenv-fixture-wroks is installed, it does not start until the table is fixed; did you mean [plugins.agentenv-fixture-works]?"]
    );
    let (code, text) = p.run_with(&[], &["config", "check"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("did you mean [plugins.agentenv-fixture-works]?"),
        "{text}"
    );
}

/// What `config check` says of a config path that is not a regular file, or is too large, or is
/// not UTF-8: what is there, and what to do. A device or a named pipe is refused without being
/// read (they were read for ever, or waited on for ever), a file over the bound without being read
/// whole.
#[test]
fn a_config_path_that_is_no_regular_file_or_too_large_is_refused() {
    let p = Project::new("");
    let dir = p.root.join("odd");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo.toml");
    let fifo_c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path it is given.
    assert_eq!(unsafe { libc::mkfifo(fifo_c.as_ptr(), 0o600) }, 0);
    let big = dir.join("big.toml");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(16 * 1024 * 1024 + 1).unwrap();
    std::os::unix::fs::symlink(dir.join("loop-b"), dir.join("loop-a")).unwrap();
    std::os::unix::fs::symlink(dir.join("loop-a"), dir.join("loop-b")).unwrap();
    let not_utf8 = dir.join("latin1.toml");
    std::fs::write(&not_utf8, b"[stores]\nobject = \"caf\xe9\"\n").unwrap();
    let cases = [
        (
            Path::new("/dev/zero").to_path_buf(),
            "it is a character device, not a regular file; the config is a TOML file at that path".to_string(),
        ),
        (
            fifo.clone(),
            "it is a named pipe (FIFO), not a regular file; the config is a TOML file at that path".to_string(),
        ),
        (
            big.clone(),
            "it is 16777217 bytes, over the 16777216 bytes (16 MiB) a config file may hold; check that the path names the config file (a config holds settings, not data)".to_string(),
        ),
        (
            dir.join("loop-a"),
            "it is a link in a loop of symbolic links that never reaches a file; point the link at the config file, or remove it".to_string(),
        ),
    ];
    for (path, said) in cases {
        let (code, json) = p.check(&[("AGENT_ENV_CONFIG", path.to_str().unwrap())]);
        assert_eq!(code, 1, "{json}");
        assert_eq!(
            messages(&json),
            [format!(
                "config.toml at {} could not be read: {said}",
                path.display()
            )]
        );
    }
    let (code, json) = p.check(&[("AGENT_ENV_CONFIG", not_utf8.to_str().unwrap())]);
    assert_eq!(code, 1, "{json}");
    assert_eq!(
        messages(&json),
        [format!(
            "config.toml at {} is not valid UTF-8: can't decode byte 0xe9 at line 2, column 14 (byte 22 of the file); save the file as UTF-8",
            not_utf8.display()
        )]
    );
}

/// Each unknown key of a built-in store's table is a problem of its own, with the key it may be,
/// where two were one problem; a `[runner]` whose impl is no string is named a runner, not a store;
/// a `[stores] <kind>` that is neither `local` nor a table is named as written, with what it takes.
#[test]
fn each_unknown_key_of_a_store_table_is_its_own_problem() {
    let p = Project::new(
        "[stores]\nimage = 5\n[stores.document]\nimpl = \"LocalSqliteDocumentStore\"\nconfig = { colour = 1, pathh = \"d.db\" }\n[runner]\nimpl = true\n",
    );
    let (code, json) = p.check(&[]);
    assert_eq!(code, 1, "{json}");
    assert_eq!(
        messages(&json),
        [
            "The config table for 'LocalSqliteDocumentStore' has unknown key 'colour'; it takes path",
            "The config table for 'LocalSqliteDocumentStore' has unknown key 'pathh'; it takes path; did you mean 'path' for 'pathh'?",
            "config.toml [stores] image must be 'local' or a [stores.image] table naming the implementation (impl) and its config, got int: 5",
            "[runner] impl must be a string, got bool: True; write impl = \"LocalRunner\" for the built-in runner, or \"<package>:<Class>\" for a plugin's",
        ]
    );
}
