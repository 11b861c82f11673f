//! `HostStoreDispatcher` answers a plugin's `host.store.<kind>.<op>` requests against the host's
//! configured stores: the kits pass through it, and errors keep their kind and code.

use std::path::PathBuf;
use std::sync::Arc;

use agent_env::stores::kits;
use agent_env::stores::remote::{Direction, StoreTransport};
use agent_env::stores::{
    AnyStore, HostStoreDispatcher, LocalFilesystemObjectStore, LocalSqliteDocumentStore,
    PluginDocumentStore, PluginObjectStore, StoreError, StoreKind, StoreResult, StoreSet,
};
use agent_env_host::HostServices;
use agent_env_protocol::codes::ErrorKind;
use serde_json::{json, Value};

fn dispatcher(root: PathBuf) -> Arc<HostStoreDispatcher> {
    let stores = StoreSet::new(move |kind| match kind {
        StoreKind::Object => Ok(AnyStore::Object(Arc::new(LocalFilesystemObjectStore::new(
            root.join("objects"),
        )))),
        StoreKind::Document => Ok(AnyStore::Document(Arc::new(LocalSqliteDocumentStore::new(
            root.join("docs.db"),
        )))),
        other => Err(StoreError::NotSupported(format!(
            "no {other} store in this test"
        ))),
    });
    Arc::new(HostStoreDispatcher::new(Arc::new(stores)))
}

struct ToHost(Arc<HostStoreDispatcher>);

impl StoreTransport for ToHost {
    fn call(&self, method: &str, params: Value) -> StoreResult<Value> {
        assert!(method.starts_with("host.store."), "{method}");
        self.0
            .handle("agentenv-test", method, params)
            .map_err(StoreError::from)
    }
}

#[test]
fn the_kits_pass_through_the_host_dispatcher() {
    let dir = tempfile::tempdir().unwrap();
    let host = dispatcher(dir.path().to_path_buf());
    let objects =
        PluginObjectStore::with_direction(Arc::new(ToHost(host.clone())), Direction::ToHost);
    let report = kits::run(&kits::object::cases(), &objects, "ns/");
    assert!(report.all_passed(), "{:?}", report.lines());
    let docs = PluginDocumentStore::with_direction(Arc::new(ToHost(host)), Direction::ToHost);
    let report = kits::run(&kits::document::cases(), &docs, "coll");
    assert!(report.all_passed(), "{:?}", report.lines());
}

#[test]
fn errors_keep_their_kind_and_code() {
    let dir = tempfile::tempdir().unwrap();
    let host = dispatcher(dir.path().to_path_buf());
    let put = json!({"key": "a.txt", "data": "aGk=", "content_type": "text/plain"});
    let url = host.dispatch("host.store.object.put", &put).unwrap()["url"].clone();
    let again = host.dispatch("host.store.object.put", &put).unwrap_err();
    assert_eq!(
        (again.kind(), again.code),
        (Some(ErrorKind::AlreadyExists), -32001)
    );
    let got = host
        .dispatch("host.store.object.get", &json!({ "url": url }))
        .unwrap();
    assert_eq!(got, json!({"data": "aGk="}));
    let missing = host
        .dispatch(
            "host.store.object.get",
            &json!({"url": format!("{}x", url.as_str().unwrap())}),
        )
        .unwrap_err();
    assert_eq!(missing.kind(), Some(ErrorKind::NotFound));
    assert!(
        missing.message.starts_with("No object at file://"),
        "{}",
        missing.message
    );
    let escape = host
        .dispatch("host.store.object.put", &json!({"key": "../x", "data": ""}))
        .unwrap_err();
    assert_eq!(escape.kind(), Some(ErrorKind::InvalidValue));
    let no_key = host
        .dispatch("host.store.object.put", &json!({}))
        .unwrap_err();
    assert_eq!(no_key.kind(), Some(ErrorKind::InvalidParams));
    assert_eq!(no_key.message, "host.store.object.put needs a string 'key'");
    let unknown = host
        .dispatch("host.store.object.delete", &json!({}))
        .unwrap_err();
    assert_eq!(unknown.kind(), Some(ErrorKind::MethodNotFound));
    let other = host.handle("p", "host.settings", json!({})).unwrap_err();
    assert_eq!(other.kind(), Some(ErrorKind::MethodNotFound));
    let unbuilt = host
        .dispatch("host.store.secret.get", &json!({"name": "x"}))
        .unwrap_err();
    assert_eq!(unbuilt.kind(), Some(ErrorKind::NotSupported));
    let meta = host
        .dispatch(
            "host.store.object.get_object_metadata",
            &json!({"key": "a.txt"}),
        )
        .unwrap();
    assert_eq!(meta["metadata"]["content_type"], "text/plain");
    assert_eq!(meta["metadata"]["size"], 2);
    assert!(meta["metadata"]["last_modified"]
        .as_str()
        .unwrap()
        .ends_with('Z'));
}

/// `host.store.document.drop_collection` is not offered: a plugin cannot drop a collection of the
/// user's store, and its documents stay.
#[test]
fn a_plugin_cannot_drop_a_collection_of_the_configured_store() {
    let dir = tempfile::tempdir().unwrap();
    let host = dispatcher(dir.path().to_path_buf());
    let insert = json!({"collection": "runs", "doc": {"id": "r1"}});
    host.dispatch("host.store.document.insert", &insert)
        .unwrap();
    let refused = host
        .dispatch(
            "host.store.document.drop_collection",
            &json!({"collection": "runs"}),
        )
        .unwrap_err();
    assert_eq!(
        (refused.kind(), refused.code),
        (Some(ErrorKind::MethodNotFound), -32601)
    );
    let count = host
        .dispatch(
            "host.store.document.count",
            &json!({"collection": "runs", "filter": {}}),
        )
        .unwrap();
    assert_eq!(count, json!({"count": 1}));
}
