//! During a run, a plugin step reaches every configured store, built as every configured store is: a
//! secret store a plugin provides, and an image store whose config takes a value through `secret:`.

use crate::support::run::{fixture, Sandboxed};
use crate::support::shell_store::ShellStore;

/// The working fixture plugin, providing the steps and the secret store.
fn install(s: &Sandboxed) {
    s.install_fixture_works(
        r#"[provides.task_steps]
store_roundtrip = "StoreRoundTrip"
image_ref = "ImageRef"

[provides.stores]
TableSecretStore = "secret"
"#,
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
    // The step read the secret and wrote it in its metadata; the stored instance masks it (a value
    // masked is one the run knows as its secret).
    assert_eq!(metadata["roundtrip"]["secret"], "***");
    // One pool per invocation: the plugin that serves the secret store and runs the step is one
    // process (the step's nested secret call went through the host to that same process).
    assert_eq!(
        metadata["roundtrip"]["store_pid"], metadata["roundtrip"]["pid"],
        "{metadata}"
    );
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
    // "local" is too short to be masked; the registry host came through `secret:`, so the stored
    // instance masks it where the step quoted it.
    assert_eq!(metadata["roundtrip"]["secret"], "local");
    assert_eq!(metadata["image"], "***/envs/p:v1");
}

/// A store's queued warning (no local registry answers) reaches the user once, on stderr, after a
/// plugin step's `host.store.image.ensure_repository`: the store never prints it itself.
#[test]
fn a_store_warning_raised_by_a_plugin_step_is_shown_once() {
    let s = Sandboxed::new();
    install(&s);
    // Port 1 on loopback: nothing answers there.
    s.write(
        ".agentenv/config.toml",
        "[stores.image]\nimpl = \"LocalRegistryImageStore\"\nconfig = { registry_host = \"127.0.0.1:1\" }\n",
    );
    s.write(
        "plugged/tasks/p.json",
        r#"[{"id": "image", "type": "image_ref", "repository": "envs/p", "tag": "v1", "ensure": true},
            {"id": "again", "type": "image_ref", "repository": "envs/q", "tag": "v1", "ensure": true}]"#,
    );
    let r = s.run(&["run", "./plugged"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let warning = "Warning: no registry answers at 127.0.0.1:1; pushes will fail";
    assert_eq!(r.stderr.matches(warning).count(), 1, "{}", r.stderr);
    assert!(!r.stdout.contains("no registry answers"), "{}", r.stdout);
}

/// A plugin step's own `[plugins.<package>]` settings may take a value through `secret:` from a
/// secret store another plugin provides: the step's plugin starts with the value resolved.
#[test]
fn a_plugin_steps_settings_resolve_through_a_secret_store_a_plugin_provides() {
    let s = Sandboxed::new();
    install(&s);
    s.install_manifest(
        "reader",
        &format!(
            r#"[plugin]
name = "agentenv-fixture-reader"
version = "0.1.0"
exec = ["{}", "agentenv-fixture-reader"]
protocol = [1, 1]

[provides.task_steps]
reader_step = "NamedStep"
"#,
            fixture("fixture-named").display()
        ),
    );
    s.write(
        ".agentenv/config.toml",
        r#"[stores.secret]
impl = "agentenv-fixture-works:TableSecretStore"
config = { values = { token = "from-the-plugin" } }

[plugins.agentenv-fixture-reader]
token = "secret:token"
plain = "as written"
"#,
    );
    s.write(
        "reading/tasks/r.json",
        r#"[{"id": "read", "type": "reader_step"}]"#,
    );
    let r = s.run(&["run", "./reading"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let instance = &s.docs("task_instances")[0];
    assert_eq!(instance["status"], "completed");
    let settings = &instance["context"]["metadata"]["settings"];
    // The plugin started with the secret's value, which the stored instance masks.
    assert_eq!(settings["token"], "***", "{instance}");
    assert_eq!(settings["plain"], "as written");
}

/// A built-in store whose setting is a `secret:` reference the configured secret store answers, that
/// store being a plugin's: the run's check of the config does not start the plugin, and does not
/// refuse the setting for the empty stand-in it used ("sets root to an empty string").
#[test]
fn a_setting_a_plugin_secret_store_answers_passes_the_runs_check() {
    let s = Sandboxed::new();
    let objects = s.dir.path().join("objects-from-vault");
    let answer = format!(
        r#"printf '{{"jsonrpc":"2.0","id":%s,"result":{{"value":"{}"}}}}\n' "$id""#,
        objects.display()
    );
    ShellStore {
        package: "agentenv-vault",
        class: "Vault",
        kind: "secret",
        on_open: "",
        on_call: &answer,
    }
    .install(&s.plugins(), "vault");
    s.write(
        ".agentenv/config.toml",
        "[stores.secret]\nimpl = \"agentenv-vault:Vault\"\n\n[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\n[stores.object.config]\nroot = \"secret:OBJROOT\"\n",
    );
    let r = s.run(&["run", "hello"]);
    assert_eq!(r.code, 0, "{}", r.both());
}

/// The same store with a mistake of its own besides: `config check` (which starts the secret store)
/// and the run's check (which leaves out only what the secret's stand-in caused) name it.
#[test]
fn a_setting_from_a_plugin_secret_store_does_not_hide_the_sections_other_problems() {
    let s = Sandboxed::new();
    ShellStore {
        package: "agentenv-vault",
        class: "Vault",
        kind: "secret",
        on_open: "",
        on_call: r#"printf '{"jsonrpc":"2.0","id":%s,"result":{"value":"/tmp"}}\n' "$id""#,
    }
    .install(&s.plugins(), "vault");
    s.write(
        ".agentenv/config.toml",
        "[stores.secret]\nimpl = \"agentenv-vault:Vault\"\n\n[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\n[stores.object.config]\nroot = \"secret:OBJROOT\"\nrooot_mode = \"x\"\n",
    );
    let r = s.run(&["config", "check"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stdout.contains("unknown key 'rooot_mode'"),
        "{}",
        r.both()
    );
    // A stored task's run reads the object store (a bundle run keeps its objects locally).
    let r = s.run(&["task", "run", "team/any"]);
    assert_ne!(r.code, 0, "{}", r.both());
    assert!(
        r.stderr.contains("unknown key 'rooot_mode'"),
        "{}",
        r.both()
    );
    assert!(!r.both().contains("empty string"), "{}", r.both());
}

/// A store plugin that crashes as it opens its store: `config check` says so under the section
/// that chose the plugin.
#[test]
fn a_store_plugin_that_crashes_on_open_is_named_by_its_section() {
    let s = Sandboxed::new();
    ShellStore {
        package: "agentenv-brittle",
        class: "Brittle",
        kind: "object",
        on_open: "exit 11;",
        on_call: "",
    }
    .install(&s.plugins(), "brittle");
    s.write(
        ".agentenv/config.toml",
        "[stores.object]\nimpl = \"agentenv-brittle:Brittle\"\n",
    );
    let r = s.run(&["config", "check"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stdout
            .contains("problem: [stores.object] plugin agentenv-brittle"),
        "{}",
        r.both()
    );
    assert!(r.stdout.contains("store.open"), "{}", r.both());
}

/// A store plugin that refuses to open its store (a `config-error` answer to `store.open`):
/// `config check` names the section, the plugin and its store, and says what was refused, before
/// the plugin's own words; the kind of the answer stays `config-invalid`.
#[test]
fn a_store_plugin_that_refuses_to_open_is_named_with_its_store() {
    let s = Sandboxed::new();
    ShellStore {
        package: "agentenv-picky",
        class: "Picky",
        kind: "object",
        on_open: r#"printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32003,"message":"nope","data":{"kind":"config-error"}}}\n' "$id"; continue;"#,
        on_call: "",
    }
    .install(&s.plugins(), "picky");
    s.write(
        ".agentenv/config.toml",
        "[stores.object]\nimpl = \"agentenv-picky:Picky\"\nconfig = { colour = \"blue\" }\n",
    );
    let r = s.run(&["config", "check"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stdout.contains(
            "problem: the plugin agentenv-picky refused to open its object store agentenv-picky:Picky with the settings in [stores.object]: nope [config-invalid]\n"
        ),
        "{}",
        r.both()
    );
}

/// Several tasks whose plugin steps ask for the secret store a plugin provides while it is still
/// opening: the host, waiting for the plugin's `store.open` answer, answers the other steps' requests
/// for that store on the waiting thread, which once deadlocked the run (the store set's lock was held
/// through the build). Every task gets its secret and the run ends.
#[test]
fn steps_asking_for_a_plugin_store_while_it_opens_all_get_it() {
    let s = Sandboxed::new();
    install(&s);
    s.write(
        ".agentenv/config.toml",
        r#"[stores.secret]
impl = "agentenv-fixture-works:TableSecretStore"
config = { values = { token = "from-the-plugin" }, open_delay_ms = 300 }
"#,
    );
    for task in ["a", "b", "c", "d"] {
        s.write(
            &format!("plugged/tasks/{task}.json"),
            r#"[{"id": "store", "type": "store_roundtrip", "text": "kept"}]"#,
        );
    }
    let mut child = s
        .command(&["run", "./plugged"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "the run did not end in 60 s: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let both = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{both}");
    let instances = s.docs("task_instances");
    assert_eq!(instances.len(), 4, "{both}");
    for instance in &instances {
        assert_eq!(instance["status"], "completed", "{instance}");
        assert_eq!(
            instance["context"]["metadata"]["roundtrip"]["secret"], "***",
            "{instance}"
        );
    }
}
