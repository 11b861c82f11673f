//! `agent-env store check KIND` as a user runs it: the built binary against a temp state root, with the
//! store selected by the environment or `.agentenv/config.toml` (scenarios 12 and 14 of §12).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::IsolatedDirs;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn state(&self) -> std::path::PathBuf {
        self.path().join("state").join("agent-env")
    }

    fn config(&self, text: &str) {
        let folder = self.path().join("work").join(".agentenv");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("config.toml"), text).unwrap();
    }

    fn run(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        let work = self.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-env"));
        cmd.args(args).current_dir(&work).env_clear();
        IsolatedDirs {
            home: self.path().join("home"),
            xdg_data: self.path().join("data"),
            xdg_state: self.path().join("state"),
            xdg_config: self.path().join("config"),
            plugins: self.path().join("data/agent-env/plugins"),
        }
        .apply(&mut cmd)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        for (k, v) in vars {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn object_check_passes_against_the_default_store_in_its_own_namespace() {
    let env = Env::new();
    let out = env.run(&["store", "check", "object"], &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert!(
        text.contains(
            "Checking the object store LocalFilesystemObjectStore (from built-in default)"
        ),
        "{text}"
    );
    // The 27 cases and the 3 grant cases, over HTTPS to the grant server the store starts.
    assert_eq!(
        text.lines().filter(|l| l.starts_with("PASSED ")).count(),
        30,
        "{text}"
    );
    assert!(
        text.contains("PASSED read_grant_fetches_the_object"),
        "{text}"
    );
    assert!(
        text.contains("object kit: 30 passed, 0 failed, 0 skipped"),
        "{text}"
    );
    let root = env.state().join("object_store");
    let top: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    // The kit's folder is removed once it is done (this store is agent-env's own), with what the
    // store kept beside its objects; the kit wrote nowhere else.
    assert!(top.is_empty(), "left in the store: {top:?}");
    assert!(
        !root.join(".agentenv-meta/agent-env-kit").exists(),
        "the kit's sidecars were left"
    );
    let again = env.run(&["store", "check", "object"], &[]);
    assert_eq!(
        again.status.code(),
        Some(0),
        "a second check against the same store: {}",
        stdout(&again)
    );
}

#[test]
fn json_output_lists_every_case() {
    let env = Env::new();
    let out = env.run(&["store", "check", "document", "--json"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["format_version"], 1);
    assert_eq!(report["kind"], "document");
    assert_eq!(report["passed"], true);
    assert_eq!(report["from"], "built-in default");
    // A built-in store by its class alone, as `config show` names it.
    assert_eq!(report["impl"], "LocalSqliteDocumentStore");
    assert_eq!(report["cases"].as_array().unwrap().len(), 45);
    assert!(env.state().join("document_store/documents.db").exists());
}

#[test]
fn secret_check_skips_unseeded_and_passes_seeded() {
    let env = Env::new();
    let out = env.run(&["store", "check", "secret"], &[]);
    // A store on its defaults holds neither secret the kit reads: those cases are skipped, not
    // failed, so a check of each store kind passes on defaults.
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // Named as `config show` names it, not by the original's module path.
    assert!(
        stdout(&out)
            .starts_with("Checking the secret store LocalSecretStore (from built-in default)\n"),
        "{}",
        stdout(&out)
    );
    let shown = stdout(&env.run(&["config", "show"], &[]));
    assert!(
        shown.contains("secret:         LocalSecretStore"),
        "{shown}"
    );
    assert!(
        stdout(&out).contains("SKIPPED get_returns_value: the store is not seeded; seed the store")
            && stdout(&out).contains("pass --seed")
            && stdout(&out).contains("secret kit: 1 passed, 0 failed, 2 skipped"),
        "{}",
        stdout(&out)
    );
    let json = env.run(&["store", "check", "secret", "--json"], &[]);
    assert_eq!(json.status.code(), Some(0), "{}", stdout(&json));
    let report: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(report["passed"], true);
    let outcomes: Vec<(&str, &str)> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["outcome"].as_str().unwrap()))
        .collect();
    // In the kit's order, as a seeded store lists them.
    assert_eq!(
        outcomes,
        [
            ("get_returns_value", "skipped"),
            ("get_returns_none_for_absent", "passed"),
            ("get_returns_empty_string_verbatim", "skipped"),
        ]
    );
    // One of the two secrets held is a store seeded wrong: every case runs, and the other fails.
    let half = env.run(
        &["store", "check", "secret"],
        &[("conformance_present", "value-1")],
    );
    assert_eq!(half.status.code(), Some(1), "{}", stdout(&half));
    assert!(
        stdout(&half).contains("FAILED get_returns_empty_string_verbatim"),
        "{}",
        stdout(&half)
    );
    let seeded = env.run(
        &["store", "check", "secret"],
        &[
            ("conformance_present", "value-1"),
            ("conformance_present_empty", ""),
        ],
    );
    assert_eq!(seeded.status.code(), Some(0), "{}", stdout(&seeded));
    let flag = env.run(&["store", "check", "secret", "--seed"], &[]);
    assert_eq!(flag.status.code(), Some(0), "{}", stdout(&flag));
    let json = env.run(&["store", "check", "secret", "--seed", "--json"], &[]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let seeded_order: Vec<&str> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let unseeded_order: Vec<&str> = outcomes.iter().map(|(name, _)| *name).collect();
    assert_eq!(seeded_order, unseeded_order);
}

/// `--seed` for a kit other than the secret one's is a wrong command line (exit 2) saying which kit
/// it is for; for a secret store other than the built-in one, it says to seed the store by hand,
/// naming the store by its class as `config show` does.
#[test]
fn seed_is_for_the_secret_kit_and_the_built_in_secret_store() {
    let env = Env::new();
    for kind in ["object", "document", "image"] {
        let out = env.run(&["store", "check", kind, "--seed"], &[]);
        assert_eq!(out.status.code(), Some(2), "{kind}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            "Error: --seed is for the secret kit only (store check secret --seed)\n",
            "{kind}"
        );
    }
    env.config("[stores.secret]\nimpl = \"mypkg:VaultSecrets\"\n");
    let out = env.run(&["store", "check", "secret", "--seed"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "--seed works only for the secret kit with the built-in LocalSecretStore; the secret store is VaultSecrets: store conformance_present=value-1"
        ),
        "{}",
        stderr(&out)
    );
    let shown = stdout(&env.run(&["config", "show"], &[]));
    assert!(shown.contains("secret:         VaultSecrets"), "{shown}");
}

#[test]
fn an_env_var_shadows_the_secret_file() {
    let env = Env::new();
    let file = env.path().join("secrets.json");
    std::fs::write(
        &file,
        r#"{"conformance_present": "from-file", "conformance_present_empty": ""}"#,
    )
    .unwrap();
    env.config(&format!(
        "[stores.secret]\nimpl = \"LocalSecretStore\"\nconfig = {{ file_path = \"{}\" }}\n",
        file.display()
    ));
    let out = env.run(&["store", "check", "secret"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("FAILED get_returns_value: get(\"conformance_present\"): expected \"value-1\", got \"from-file\""), "{}", stdout(&out));
    let shadowed = env.run(
        &["store", "check", "secret"],
        &[("conformance_present", "value-1")],
    );
    assert_eq!(shadowed.status.code(), Some(0), "{}", stdout(&shadowed));
}

/// A secret file written as flat YAML, as the original read it, is read (its values, quoted or not).
#[test]
fn a_flat_yaml_secret_file_is_read() {
    let env = Env::new();
    let file = env.path().join("secrets.yaml");
    std::fs::write(
        &file,
        "# team secrets\n---\nconformance_present: from-file   # a comment\nconformance_present_empty: ''\n",
    )
    .unwrap();
    env.config(&format!(
        "[stores.secret]\nimpl = \"agent_env.store.secret_store:LocalSecretStore\"\nconfig = {{ file_path = \"{}\" }}\n",
        file.display()
    ));
    let out = env.run(&["store", "check", "secret"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("FAILED get_returns_value: get(\"conformance_present\"): expected \"value-1\", got \"from-file\""), "{}", stdout(&out));
    // The impl written in the original's module:Class form is named by its class, as config show does.
    assert!(
        stdout(&out)
            .starts_with("Checking the secret store LocalSecretStore (from [stores.secret])\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn image_check_needs_no_docker() {
    let env = Env::new();
    let out = env.run(&["store", "check", "image"], &[("PATH", "/nonexistent")]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert!(
        text.contains("SKIPPED push_pull_roundtrip: docker is not on PATH"),
        "{text}"
    );
    assert!(
        text.contains("image kit: 6 passed, 0 failed, 1 skipped"),
        "{text}"
    );
    // The store's own warning (no registry answers at port 1, which none listens on) is on stderr
    // for a person, in the notes for --json.
    env.config(
        "[stores.image]\nimpl = \"LocalRegistryImageStore\"\nconfig = { registry_host = \"127.0.0.1:1\" }\n",
    );
    let said = env.run(&["store", "check", "image"], &[("PATH", "/nonexistent")]);
    assert!(
        stderr(&said).contains("no registry answers"),
        "{}",
        stderr(&said)
    );
    let json = env.run(
        &["store", "check", "image", "--json"],
        &[("PATH", "/nonexistent")],
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert!(
        doc["notes"].to_string().contains("no registry answers"),
        "{doc:#}"
    );
    assert!(
        !stderr(&json).contains("no registry answers"),
        "{}",
        stderr(&json)
    );
}

#[test]
fn a_bogus_store_alias_names_the_variable_and_the_table() {
    let env = Env::new();
    let out = env.run(
        &["store", "check", "object"],
        &[("AGENT_ENV_OBJECT_STORE", "bogus")],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("AGENT_ENV_OBJECT_STORE") && err.contains("[stores.object]"),
        "{err}"
    );
}

#[test]
fn an_unknown_config_key_is_refused_with_the_keys_it_takes() {
    let env = Env::new();
    env.config(
        "[stores.object]\nimpl = \"agent_env.store.object_store:LocalFilesystemObjectStore\"\nconfig = { bucket = \"x\" }\n",
    );
    let out = env.run(&["store", "check", "object"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(
        "The config table for 'agent_env.store.object_store:LocalFilesystemObjectStore' has unknown key 'bucket'; it takes root, grants, grant_bind_host, grant_advertise_host, grant_lifetime_seconds"
    ), "{}", stderr(&out));
    let beaten = env.run(
        &["store", "check", "object"],
        &[("AGENT_ENV_OBJECT_STORE", "local")],
    );
    assert_eq!(
        beaten.status.code(),
        Some(0),
        "the variable should beat the file: {}",
        stderr(&beaten)
    );
    assert!(
        stdout(&beaten).contains("(from $AGENT_ENV_OBJECT_STORE)"),
        "{}",
        stdout(&beaten)
    );
}

#[test]
fn env_references_resolve_or_say_why_not() {
    let env = Env::new();
    env.config("[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = { root = \"env:NOPE\" }\n");
    let out = env.run(&["store", "check", "object"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("Unresolved env:NOPE reference"),
        "{}",
        stderr(&out)
    );
    let fallback = env.path().join("fallback-objects");
    env.config(&format!(
        "[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = {{ root = \"env:NOPE?{}\" }}\n",
        fallback.display()
    ));
    let out = env.run(&["store", "check", "object"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The check ran there, and took its folder away after.
    assert!(fallback.join(".agentenv-tmp").is_dir());
    assert!(!fallback.join("agent-env-kit").exists());
    let set = env.path().join("from-var");
    let out = env.run(
        &["store", "check", "object"],
        &[("NOPE", set.to_str().unwrap())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(set.join(".agentenv-tmp").is_dir());
    assert!(!set.join("agent-env-kit").exists());
}

#[test]
fn a_plugin_store_without_a_host_says_so() {
    let env = Env::new();
    env.config("[stores.object]\nimpl = \"agentenv-openciv3:ContentAddressedObjectStore\"\n");
    let out = env.run(&["store", "check", "object"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("agentenv-openciv3"),
        "{}",
        stderr(&out)
    );
}

/// A `file://` URL under the local object store's folder whose key the store refuses (a part longer
/// than a file name may be) is said in the store's words, not called no store's URL; one of
/// another place is still no store's.
#[test]
fn store_get_says_why_the_local_store_refuses_a_url_under_its_folder() {
    let env = Env::new();
    let root = env.state().join("object_store");
    let long = format!("file://{}/{}", root.display(), "y".repeat(300));
    let out = env.run(&["store", "get", &long], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.starts_with("Error: Key 'yyyy")
            && said.contains("has a part of 300 bytes")
            && said.contains("longer than the filesystem's limit for a name (255 bytes)")
            && !said.contains("is not a URL of"),
        "{said}"
    );
    let elsewhere = format!("file://{}/x.txt", env.path().join("elsewhere").display());
    let out = env.run(&["store", "get", &elsewhere], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "'{elsewhere}' is not a URL of the configured object store or of the local one"
        )),
        "{}",
        stderr(&out)
    );
}
