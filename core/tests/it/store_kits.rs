//! Every built-in store passes its conformance kit, directly and through the plugin-store proxies
//! (an in-process transport that serializes each request and answer as the pipe would).

use std::collections::HashMap;
use std::sync::Arc;

use agent_env::stores::kits::{self, CaseOutcome, KitReport};
use agent_env::stores::remote::{Direction, StoreTransport};
use agent_env::stores::{
    serve, DocumentStore, Filter, LocalFilesystemObjectStore, LocalRegistryImageStore,
    LocalSecretStore, LocalSqliteDocumentStore, ObjectStore, PluginDocumentStore,
    PluginObjectStore, PluginSecretStore, SecretStore, StoreError, StoreResult,
};
use agent_env_protocol::message::RpcError;
use serde_json::Value;

fn assert_passed(report: &KitReport, expected_cases: usize) {
    for line in report.lines() {
        println!("{line}");
    }
    assert!(
        report.all_passed(),
        "{} kit failed: {:?}",
        report.kit,
        report.lines()
    );
    let ran = report.count(|o| *o == CaseOutcome::Passed);
    assert_eq!(ran, expected_cases, "{} kit cases that passed", report.kit);
}

#[test]
fn local_object_store_passes_the_object_kit() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalFilesystemObjectStore::new(dir.path().join("objects"));
    let report = kits::run(&kits::object::cases(), &store, "");
    assert_passed(&report, 27);
    assert_eq!(
        report.count(|o| matches!(o, CaseOutcome::Skipped(_))),
        3,
        "the grant cases are skipped"
    );
}

#[test]
fn local_object_store_passes_the_object_kit_in_a_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalFilesystemObjectStore::new(dir.path());
    let ns = kits::unique_namespace(agent_env::stores::StoreKind::Object);
    assert_passed(&kits::run(&kits::object::cases(), &store, &ns), 27);
    assert!(store.list("").unwrap().iter().all(|k| k.starts_with(&ns)));
}

#[test]
fn sqlite_document_store_passes_the_document_kit() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalSqliteDocumentStore::new(dir.path().join("docs.db"));
    assert_passed(&kits::run(&kits::document::cases(), &store, "coll"), 45);
    assert_kit_left_no_document(&store, "coll");
}

/// Every collection the document kit wrote in under `ns` (each case's, and the two beside
/// `collections_are_separate`'s) holds no document once the kit ended.
fn assert_kit_left_no_document(store: &dyn DocumentStore, ns: &str) {
    let mut collections = Vec::new();
    for case in kits::document::cases().cases {
        let own = format!("{ns}__{}", case.name);
        collections.push(format!("{own}_left"));
        collections.push(format!("{own}_right"));
        collections.push(own);
    }
    for collection in collections {
        let left = store.count(&collection, &Filter::all()).unwrap();
        assert_eq!(left, 0, "the kit left {left} document(s) in {collection}");
    }
}

#[test]
fn local_image_store_passes_the_image_kit_without_docker() {
    let store = LocalRegistryImageStore::new("localhost:5000").unwrap();
    let report = kits::run(&kits::image::cases(), &store, "agent-env-kit-test");
    for line in report.lines() {
        println!("{line}");
    }
    assert!(report.all_passed(), "{:?}", report.lines());
    assert!(report.count(|o| *o == CaseOutcome::Passed) >= 3);
}

fn seeded_secret_store() -> LocalSecretStore {
    let values: HashMap<String, String> = kits::secret::FIXTURE
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    LocalSecretStore::new(values, None, None).unwrap()
}

#[test]
fn seeded_secret_store_passes_the_secret_kit() {
    assert_passed(
        &kits::run(&kits::secret::cases(), &seeded_secret_store(), ""),
        3,
    );
}

#[test]
fn an_unseeded_secret_store_fails_the_kit_saying_how_to_seed_it() {
    let store = LocalSecretStore::new(HashMap::new(), None, None).unwrap();
    let report = kits::run(&kits::secret::cases(), &store, "");
    assert!(!report.all_passed());
    let lines = report.lines().join("\n");
    assert!(lines.contains("FAILED get_returns_value: get(\"conformance_present\") is None: the store is not seeded"), "{lines}");
    assert!(
        lines.contains("PASSED get_returns_none_for_absent"),
        "{lines}"
    );
}

/// Serves requests in-process, through JSON text both ways, as the pipe would carry them.
struct Loopback<F: Fn(&str, &Value) -> Result<Value, RpcError> + Send + Sync> {
    serve: F,
}

impl<F: Fn(&str, &Value) -> Result<Value, RpcError> + Send + Sync> StoreTransport for Loopback<F> {
    fn call(&self, method: &str, params: Value) -> StoreResult<Value> {
        let params: Value = serde_json::from_str(&params.to_string()).unwrap();
        let op = method.rsplit('.').next().unwrap();
        match (self.serve)(op, &params) {
            Ok(v) => Ok(serde_json::from_str(&v.to_string()).unwrap()),
            Err(e) => {
                let wire: RpcError =
                    serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
                Err(StoreError::from(wire))
            }
        }
    }
}

#[test]
fn object_kit_passes_through_the_plugin_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let inner = LocalFilesystemObjectStore::new(dir.path());
    let transport = Arc::new(Loopback {
        serve: move |op: &str, p: &Value| {
            serve::object(&inner, &format!("store.object.{op}"), op, p)
        },
    });
    let proxy = PluginObjectStore::new(transport);
    assert_passed(&kits::run(&kits::object::cases(), &proxy, ""), 27);
}

#[test]
fn document_kit_passes_through_the_plugin_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let inner = LocalSqliteDocumentStore::new(dir.path().join("d.db"));
    let transport = Arc::new(Loopback {
        serve: move |op: &str, p: &Value| {
            serve::document(&inner, &format!("store.document.{op}"), op, p)
        },
    });
    let proxy = PluginDocumentStore::with_direction(transport, Direction::ToHost);
    assert_passed(&kits::run(&kits::document::cases(), &proxy, "coll"), 45);
    assert_kit_left_no_document(&proxy, "coll");
}

#[test]
fn secret_kit_passes_through_the_plugin_proxy() {
    let inner = seeded_secret_store();
    let transport = Arc::new(Loopback {
        serve: move |op: &str, p: &Value| {
            serve::secret(&inner, &format!("store.secret.{op}"), op, p)
        },
    });
    let proxy = PluginSecretStore::new(transport);
    assert_passed(&kits::run(&kits::secret::cases(), &proxy, ""), 3);
    assert_eq!(
        proxy.get("conformance_present_empty").unwrap(),
        Some(String::new())
    );
}

#[test]
fn a_missing_object_is_not_found_on_the_host_side_of_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let inner = LocalFilesystemObjectStore::new(dir.path());
    let url = inner.object_url("absent.bin").unwrap();
    let transport = Arc::new(Loopback {
        serve: move |op: &str, p: &Value| {
            serve::object(&inner, &format!("store.object.{op}"), op, p)
        },
    });
    let proxy = PluginObjectStore::new(transport);
    let err = proxy.get(&url).unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    assert_eq!(err.to_string(), format!("No object at {url}."));
    let dest = dir.path().join("a-directory");
    std::fs::create_dir(&dest).unwrap();
    proxy
        .put("x.bin", b"x", "application/octet-stream", false)
        .unwrap();
    let err = proxy
        .download_to_file(&proxy.object_url("x.bin").unwrap(), &dest)
        .unwrap_err();
    assert_eq!(
        err.io_kind(),
        Some(std::io::ErrorKind::IsADirectory),
        "{err:?}"
    );
}
