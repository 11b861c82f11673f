//! The SQLite document store beyond the kit: several processes writing one brand-new database, the id
//! rules of versioned entities (scenario 11), and what it creates on disk.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_env::stores::{
    DocumentStore, Filter, LocalSqliteDocumentStore, StoreError, VersionedEntityStore,
};
use serde_json::{json, Value};

const DB_VAR: &str = "AGENT_ENV_TEST_WRITER_DB";
const WRITER_VAR: &str = "AGENT_ENV_TEST_WRITER_NAME";
const PER_WRITER: u64 = 50;

fn doc(v: Value) -> agent_env::stores::Document {
    v.as_object().cloned().unwrap()
}

/// Run by `two_processes_write_one_new_database`, in a child process: 50 plain inserts and 50 versions of
/// a shared entity, then waits until the other writer's rows are visible too.
#[test]
#[ignore = "a helper that the two-process test runs in child processes"]
fn child_writer() {
    let (Some(db), Some(name)) = (std::env::var_os(DB_VAR), std::env::var(WRITER_VAR).ok()) else {
        panic!("run by two_processes_write_one_new_database, with {DB_VAR} and {WRITER_VAR} set");
    };
    let store: Arc<dyn DocumentStore> = Arc::new(LocalSqliteDocumentStore::new(PathBuf::from(db)));
    let entities = VersionedEntityStore::new(store.clone(), "entities", &[]).unwrap();
    for i in 0..PER_WRITER {
        store
            .insert("rows", &doc(json!({"writer": name, "i": i})))
            .unwrap();
        entities
            .put(&doc(json!({"id": "shared", "writer": name})), 1000)
            .unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let rows = store.count("rows", &Filter::all()).unwrap();
        if rows == 2 * PER_WRITER {
            println!("writer {name} sees {rows} rows");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "writer {name} saw only {rows} rows"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn spawn_writer(db: &Path, name: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "store_documents::child_writer",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DB_VAR, db)
        .env(WRITER_VAR, name)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn two_processes_write_one_new_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state").join("documents.db");
    let writers = [spawn_writer(&db, "a"), spawn_writer(&db, "b")];
    for (child, name) in writers.into_iter().zip(["a", "b"]) {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "writer {name} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(&format!("writer {name} sees 100 rows")),
            "{stdout}"
        );
    }
    let store = LocalSqliteDocumentStore::new(&db);
    assert_eq!(store.count("rows", &Filter::all()).unwrap(), 2 * PER_WRITER);
    for name in ["a", "b"] {
        assert_eq!(
            store.count("rows", &Filter::eq("writer", name)).unwrap(),
            PER_WRITER
        );
        assert_eq!(
            store
                .count("entities", &Filter::eq("writer", name))
                .unwrap(),
            PER_WRITER
        );
    }
    let mut versions: Vec<i64> = store
        .query("entities", &Filter::eq("id", "shared"), None, None, 0)
        .unwrap()
        .iter()
        .map(|d| d["version"].as_i64().unwrap())
        .collect();
    versions.sort_unstable();
    assert_eq!(
        versions,
        (1..=2 * PER_WRITER as i64).collect::<Vec<_>>(),
        "every version once"
    );
}

#[test]
fn the_configured_store_refuses_local_and_encoded_ids() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn DocumentStore> =
        Arc::new(LocalSqliteDocumentStore::new(dir.path().join("d.db")));
    let entities = VersionedEntityStore::new(store, "tasks", &[]).unwrap();
    let err = entities
        .put(&doc(json!({"id": "@local/x/y"})), 5)
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidValue(_)));
    assert_eq!(
        err.to_string(),
        "id '@local/x/y' is an @local id, which only the @local namespace's store holds; the agent-env CLI writes @local ids there"
    );
    let err = entities.put(&doc(json!({"id": "local/x"})), 5).unwrap_err();
    assert!(
        err.to_string()
            .contains("is spelled like an encoded @local id"),
        "{err}"
    );
    let err = entities.put(&doc(json!({"id": "@acme/x"})), 5).unwrap_err();
    assert!(err.to_string().contains("reserved '@' prefix"), "{err}");
    let err = entities.put(&doc(json!({"id": 7})), 5).unwrap_err();
    assert_eq!(
        err.to_string(),
        "an entity in 'tasks' needs a string id, got 7"
    );
    assert_eq!(entities.put(&doc(json!({"id": "plain"})), 5).unwrap(), 1);
}

#[test]
fn the_local_namespace_store_holds_only_local_ids() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn DocumentStore> = Arc::new(LocalSqliteDocumentStore::local_namespace(
        dir.path().join("local.db"),
    ));
    let entities = VersionedEntityStore::new(store, "tasks", &[]).unwrap();
    assert_eq!(
        entities
            .put(&doc(json!({"id": "@local/~/demo/t"})), 5)
            .unwrap(),
        1
    );
    let err = entities.put(&doc(json!({"id": "bare"})), 5).unwrap_err();
    assert_eq!(
        err.to_string(),
        "id 'bare' isn't an @local id, and the @local namespace's store holds only those"
    );
}

#[test]
fn versions_are_refused_out_of_order() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn DocumentStore> =
        Arc::new(LocalSqliteDocumentStore::new(dir.path().join("d.db")));
    let entities = VersionedEntityStore::new(store, "artifacts", &[&["type"]]).unwrap();
    entities.put(&doc(json!({"id": "g"})), 5).unwrap();
    let err = entities
        .insert_next(&doc(json!({"id": "g"})), 5)
        .unwrap_err();
    assert!(matches!(err, StoreError::ConcurrentModification(_)));
    assert_eq!(
        err.to_string(),
        "'g' in 'artifacts' is at version 1, so its next version is 2, not 5"
    );
    assert_eq!(
        entities
            .put(&doc(json!({"id": "g", "version": 2})), 5)
            .unwrap(),
        2
    );
}

#[test]
fn reads_create_nothing_and_writes_create_a_private_wal_database() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("document_store");
    let db = folder.join("documents.db");
    let store = LocalSqliteDocumentStore::new(&db);
    assert_eq!(store.count("tasks", &Filter::all()).unwrap(), 0);
    assert_eq!(store.find_one("tasks", &Filter::all(), None).unwrap(), None);
    assert!(!folder.exists(), "a read created {}", folder.display());
    store
        .insert("task instances", &doc(json!({"id": "t"})))
        .unwrap();
    assert!(db.exists());
    assert_eq!(
        std::fs::read_to_string(folder.join(".gitignore")).unwrap(),
        "*\n"
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='docs_task_instances'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 1);
}

#[test]
fn a_collection_created_by_another_connection_is_visible() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let first = LocalSqliteDocumentStore::new(&db);
    let second = LocalSqliteDocumentStore::new(&db);
    first.insert("warmup", &doc(json!({"a": 1}))).unwrap();
    assert_eq!(second.count("late", &Filter::all()).unwrap(), 0);
    first.insert("late", &doc(json!({"a": 1}))).unwrap();
    assert_eq!(second.count("late", &Filter::all()).unwrap(), 1);
    first.ensure_index("late", &["a"], true).unwrap();
    let err = second.insert("late", &doc(json!({"a": 1}))).unwrap_err();
    assert!(matches!(err, StoreError::DuplicateKey(_)), "{err:?}");
}
