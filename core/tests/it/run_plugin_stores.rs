//! During a run, a plugin step reaches every configured store, built as every configured store is: a
//! secret store a plugin provides, and an image store whose config takes a value through `secret:`.

use crate::support::run::{fixture, Sandboxed};

/// The working fixture plugin, providing the steps and the secret store.
fn install(s: &Sandboxed) {
    s.install_manifest(
        "works",
        &format!(
            r#"[plugin]
name = "agentenv-fixture-works"
version = "0.3.0"
exec = ["{}"]
protocol = [1, 1]

[provides.task_steps]
store_roundtrip = "StoreRoundTrip"
image_ref = "ImageRef"

[provides.stores]
TableSecretStore = "secret"
"#,
            fixture("fixture-works").display()
        ),
    );
}

/// Runs a task of both steps with `config`; the instance's metadata.
fn run_with(config: &str) -> serde_json::Value {
    let s = Sandboxed::new();
    install(&s);
    s.write(".agentenv/config.toml", config);
    s.write(
        "plugged/tasks/p.json",
        r#"[{"id": "store", "type": "store_roundtrip", "text": "kept"},
            {"id": "image", "type": "image_ref", "repository": "envs/p", "tag": "v1"}]"#,
    );
    let r = s.run(&["run", "./plugged"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    r.assert_stdout_has("[tasks/p.json] step 1/2 store done in ");
    r.assert_stdout_has("[tasks/p.json] step 2/2 image done in ");
    let instance = &s.docs("task_instances")[0];
    assert_eq!(instance["status"], "completed");
    instance["context"]["metadata"].clone()
}

#[test]
fn a_plugin_step_reaches_a_secret_store_a_plugin_provides() {
    let metadata = run_with(
        r#"[stores.secret]
impl = "agentenv-fixture-works:TableSecretStore"
config = { values = { token = "from-the-plugin" } }
"#,
    );
    assert_eq!(metadata["roundtrip"]["secret"], "from-the-plugin");
}

#[test]
fn a_plugin_step_reaches_a_store_whose_config_uses_a_secret_reference() {
    let metadata = run_with(
        r#"[stores.secret]
impl = "LocalSecretStore"
config = { values = { token = "local", registry = "registry.example:5000" } }

[stores.image]
impl = "LocalRegistryImageStore"
config = { registry_host = "secret:registry" }
"#,
    );
    assert_eq!(metadata["roundtrip"]["secret"], "local");
    assert_eq!(metadata["image"], "registry.example:5000/envs/p:v1");
}
