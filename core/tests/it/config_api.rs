//! The config library API other areas call: the document, plugin settings (what `initialize` carries), store
//! selection, registration-table parsing and `check_all`.

use agent_env::config::store_builder::StoresBuilder;
use agent_env::config::store_selection::selection_with;
use agent_env::config::{
    check_all, impls, plugin_settings, ConfigDocument, ConfigSource, LayerKind, SecretLookup,
};
use agent_env::environment::Environment;
use std::path::{Path, PathBuf};
use std::sync::Arc;

struct Secrets;
impl SecretLookup for Secrets {
    fn get(&self, name: &str) -> Result<Option<String>, String> {
        match name {
            "token" => Ok(Some("t0k".into())),
            "broken" => Err("the vault is sealed".into()),
            _ => Ok(None),
        }
    }
}

/// A project folder with `.agentenv/config.toml` holding `text`; returns (guard, project root).
fn project(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join(".agentenv")).unwrap();
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::write(root.join(".agentenv/config.toml"), text).unwrap();
    (dir, root)
}

fn doc(text: &str) -> ConfigDocument {
    ConfigDocument::from_text(text, Path::new("/p/.agentenv/config.toml"))
}

#[test]
fn load_walks_up_and_records_how() {
    let (_guard, root) = project("[model]\nbase_url = 'x'\n");
    let env = Environment::from_vars(std::iter::empty::<(&str, &str)>(), &root.join("a/b"));
    let d = ConfigDocument::load(Arc::new(env));
    assert_eq!(d.source, ConfigSource::WalkUp);
    assert_eq!(
        d.path.as_deref(),
        Some(root.join(".agentenv/config.toml").as_path())
    );
    assert_eq!(d.search_root, root.join("a/b"));
    assert!(d.error.is_none());
    assert_eq!(d.table["model"]["base_url"].as_str(), Some("x"));
}

#[test]
fn a_missing_agent_env_config_is_config_not_found() {
    let (_guard, root) = project("");
    let env = Environment::from_vars([("AGENT_ENV_CONFIG", "/nope.toml")], &root);
    let d = ConfigDocument::load(Arc::new(env));
    assert_eq!(d.source, ConfigSource::Error);
    let problem = d.error.clone().unwrap();
    assert_eq!(problem.code, "config-not-found");
    assert_eq!(
        problem.reason,
        "AGENT_ENV_CONFIG='/nope.toml' does not point to an existing file; unset AGENT_ENV_CONFIG or point it at a config file"
    );
    // A command that needs the config gets the same sentence as an error.
    assert_eq!(
        plugin_settings(&d, "x", None).unwrap_err().to_string(),
        problem.reason
    );
}

#[test]
fn settings_resolve_references_and_become_json() {
    let d = doc(
        "[plugins.Acme_Browser]\nroot = 'env:CARGO_MANIFEST_DIR'\ntok = 'secret:token'\nmissing = 'secret:nope?fallback'\nplain = 'env:AGENT_ENV_SURELY_UNSET_X?/tmp/x'\nlist = ['env:AGENT_ENV_SURELY_UNSET_X?', 2]\n[plugins.Acme_Browser.viewport]\nwidth = 1280\n",
    )
    // `env:` reads the environment the document was read in.
    .with_env(Arc::new(Environment::from_vars(
        [("CARGO_MANIFEST_DIR", env!("CARGO_MANIFEST_DIR"))],
        Path::new("/"),
    )));
    let s = plugin_settings(&d, "acme-browser", Some(&Secrets)).unwrap();
    assert_eq!(s["root"], env!("CARGO_MANIFEST_DIR"));
    assert_eq!(s["tok"], "t0k");
    assert_eq!(s["missing"], "fallback");
    assert_eq!(s["plain"], "/tmp/x");
    assert_eq!(s["list"], serde_json::json!(["", 2]));
    assert_eq!(s["viewport"]["width"], 1280);
}

#[test]
fn settings_errors_name_the_table() {
    let d = doc("[plugins.x]\na = 'secret:broken'\nb = 'secret:k'\n");
    assert_eq!(
        plugin_settings(&d, "x", Some(&Secrets))
            .unwrap_err()
            .to_string(),
        "[plugins.x]: Cannot resolve 'secret:broken': the secret store failed: the vault is sealed"
    );
    let d = doc("[plugins.x]\nb = 'secret:k'\n");
    assert_eq!(
        plugin_settings(&d, "x", None).unwrap_err().to_string(),
        "[plugins.x]: Cannot resolve 'secret:k': no secret store is available for secret: references here"
    );
    let d = doc("[plugins.x]\nb = 'secret:k'\n");
    assert_eq!(
        plugin_settings(&d, "x", Some(&Secrets))
            .unwrap_err()
            .to_string(),
        "[plugins.x]: Unresolved secret:k reference (no value and no default); put k in the configured secret store (the built-in one reads the environment variable k first, then its values and its file)"
    );
}

#[test]
fn scenario_11_task_step_impls_parse_as_written() {
    let d = doc("[task_steps]\nimpls = ['pkg.mod:Other']\n");
    assert_eq!(impls(&d, "task_steps").unwrap(), ["pkg.mod:Other"]);
    let d = doc("[task_steps]\nimpls = 'x'\n");
    assert_eq!(
        impls(&d, "task_steps").unwrap_err().to_string(),
        "[task_steps] impls must be a list of 'module:Class' strings, got str"
    );
}

#[test]
fn selection_precedence_and_layers() {
    let d = doc("[stores.object]\nimpl = 'agentenv-openciv3:ContentAddressedObjectStore'\nconfig = { root = 'env:R', bucket = 'b' }\n");
    let state = Path::new("/state");
    let s = selection_with(&d, "object", None, state).unwrap();
    assert_eq!(s.impl_name, "agentenv-openciv3:ContentAddressedObjectStore");
    assert_eq!(
        s.config["root"].as_str(),
        Some("env:R"),
        "config stays unresolved"
    );
    assert_eq!(s.origin.kind, LayerKind::File);
    let s = selection_with(&d, "object", Some("local"), state).unwrap();
    assert_eq!(s.origin.kind, LayerKind::Env);
    assert_eq!(s.shadowed[0].kind, LayerKind::File);
    assert_eq!(s.config["root"].as_str(), Some("/state/object_store"));
    let s = selection_with(&doc(""), "secret", None, state).unwrap();
    assert_eq!(s.origin.kind, LayerKind::Default);
    assert_eq!(s.impl_name, "agent_env.store.secret_store:LocalSecretStore");
}

#[test]
fn check_all_returns_every_error() {
    let d = doc("[stores.image]\nconfig = {}\n[envs]\nimpls = 3\n");
    let errors: Vec<String> = check_all(&d, &StoresBuilder::new(&d, None))
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errors,
        [
            "[stores.image] names no impl, the store it uses (it has config = {}); write impl = \"LocalRegistryImageStore\" for the built-in store, or \"<package>:<Class>\" for a plugin's",
            "[envs] impls must be a list of 'module:Class' strings, got int",
        ]
    );
    assert!(check_all(&doc(""), &StoresBuilder::new(&doc(""), None)).is_empty());
}

#[test]
fn lazy_secrets_build_the_configured_secret_store_on_first_use() {
    use agent_env::config::configured_store::LazySecrets;
    let d = doc("[stores.secret]\nimpl = 'agent_env.store.secret_store:LocalSecretStore'\nconfig = { use_env = false, values = { k = 'v' } }\n[plugins.x]\na = 'secret:k'\nb = 'secret:none?d'\n");
    let secrets = LazySecrets::new(&d, None);
    let s = plugin_settings(&d, "x", Some(&secrets)).unwrap();
    assert_eq!(s["a"], "v");
    assert_eq!(s["b"], "d");
    let d = doc("[stores.secret]\nimpl = 'agent_env.store.secret_store:LocalSecretStore'\nconfig = { bogus = 1 }\n[plugins.x]\na = 'secret:k'\n");
    let secrets = LazySecrets::new(&d, None);
    assert_eq!(
        plugin_settings(&d, "x", Some(&secrets)).unwrap_err().to_string(),
        "[plugins.x]: Cannot resolve 'secret:k': the secret store failed: [stores.secret] could not be built: The config table for 'agent_env.store.secret_store:LocalSecretStore' has unknown key 'bogus'; it takes values, file_path, use_env"
    );
}
