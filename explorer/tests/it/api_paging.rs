//! Paging the task instances: by `offset`, and by the `next_cursor` each page answers, which keeps
//! its place while runs record more instances between pages. The instances are written to the
//! stores directly, half to the @local store and half to the configured one, so every page is
//! merged from both.

use std::collections::HashSet;

use agent_env::run::local_stores;
use agent_env::run::recorder::INSTANCES;
use agent_env::stores::local::LocalSqliteDocumentStore;
use agent_env_store::document::DocumentStore;
use serde_json::{json, Value};

use crate::support::{Explorer, World};

/// The world's two record stores: the @local one (`local.db`) and the configured one (the default,
/// `documents.db` beside it).
struct Stores {
    local: std::sync::Arc<dyn DocumentStore>,
    configured: LocalSqliteDocumentStore,
}

impl Stores {
    fn of(world: &World) -> Stores {
        let root = world.state_root();
        Stores {
            local: local_stores::open(&root).documents,
            configured: LocalSqliteDocumentStore::new(root.join("document_store/documents.db")),
        }
    }

    /// Records instance `n`, started in second `n` of the day (in the @local store when `n` is
    /// even, else in the configured one); its id.
    fn record(&self, n: u32) -> String {
        let (minute, second) = (n / 60, n % 60);
        let (id, store): (String, &dyn DocumentStore) = if n.is_multiple_of(2) {
            (format!("@local/paging/task-{n:05}"), self.local.as_ref())
        } else {
            (format!("paging/task-{n:05}"), &self.configured)
        };
        let doc = json!({
            "instance_id": id, "task_id": "paging/task", "task_version": 1,
            "status": "completed",
            "created_at_utc": format!("2026-12-07 {:02}:{:02} UTC", minute / 60, minute % 60),
            "started_at_utc": format!("2026-12-07T{:02}:{:02}:{second:02}.000000+00:00", minute / 60, minute % 60),
            "context": {"metadata": {"run_group_id": "rg-paging"}},
        });
        let Value::Object(doc) = doc else {
            unreachable!()
        };
        store.insert(INSTANCES, &doc).expect("recorded");
        id
    }
}

fn ids(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["instance_id"].as_str().expect("an id").to_string())
        .collect()
}

/// Paging by cursor while instances are recorded between pages, newer ones and older ones, lists
/// each instance there was, and each one recorded meanwhile older than all listed so far, exactly
/// once, in order.
#[test]
fn paging_by_cursor_while_runs_record_lists_each_instance_once() {
    let world = World::new();
    let stores = Stores::of(&world);
    // Instances 1000..1060 are there before; after each page two newer ones are recorded, and one
    // older than every one before it.
    let before: Vec<String> = (1000..1060).map(|n| stores.record(n)).collect();
    let server = Explorer::start(&world);
    let mut seen: Vec<String> = Vec::new();
    let mut older: Vec<String> = Vec::new();
    let mut page = server
        .get("/api/v1/task-instances?limit=7")
        .expect(200)
        .json();
    let mut turns = 0u32;
    loop {
        seen.extend(ids(&page));
        let Some(cursor) = page["next_cursor"].as_str().map(String::from) else {
            assert_eq!(page["has_more"], false, "{page}");
            break;
        };
        turns += 1;
        assert!(turns < 40, "paging does not end: {page}");
        stores.record(5000 + 2 * turns);
        stores.record(5001 + 2 * turns);
        older.push(stores.record(900 - turns));
        page = server
            .get(&format!("/api/v1/task-instances?limit=7&cursor={cursor}"))
            .expect(200)
            .json();
    }
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "listed twice: {seen:?}");
    let mut expected: Vec<String> = before.into_iter().chain(older).collect();
    expected.sort_by(|a, b| b[b.len() - 5..].cmp(&a[a.len() - 5..]));
    assert_eq!(seen, expected, "newest first, each once");
}

/// An offset still pages as it did, and its page answers the cursor of its end too; a deep page
/// merged from both stores is the same by either.
#[test]
fn an_offset_pages_as_before_and_answers_a_cursor_too() {
    let world = World::new();
    let stores = Stores::of(&world);
    for n in 0..300 {
        stores.record(n);
    }
    let server = Explorer::start(&world);
    let deep = server
        .get("/api/v1/task-instances?limit=5&offset=250")
        .expect(200)
        .json();
    let expected: Vec<String> = (45..50)
        .rev()
        .map(|n| match n % 2 {
            0 => format!("@local/paging/task-{n:05}"),
            _ => format!("paging/task-{n:05}"),
        })
        .collect();
    assert_eq!(ids(&deep), expected, "{deep}");
    assert_eq!(
        (&deep["total"], &deep["offset"], &deep["has_more"]),
        (&json!(300), &json!(250), &json!(true))
    );
    let before = server
        .get("/api/v1/task-instances?limit=5&offset=245")
        .expect(200)
        .json();
    let cursor = before["next_cursor"].as_str().expect("a cursor");
    let after = server
        .get(&format!("/api/v1/task-instances?limit=5&cursor={cursor}"))
        .expect(200)
        .json();
    assert_eq!(ids(&after), expected, "{after}");
    assert_eq!(after["offset"], 250);
    let last = server
        .get("/api/v1/task-instances?limit=5&offset=295")
        .expect(200)
        .json();
    assert_eq!(last["next_cursor"], Value::Null, "{last}");

    // A cursor with an offset, and text no page gave, are refused, naming the cursor.
    for url in [
        format!("/api/v1/task-instances?cursor={cursor}&offset=5"),
        "/api/v1/task-instances?cursor=nothing".to_string(),
    ] {
        let refused = server.get(&url).expect(422).json();
        assert_eq!(
            refused["detail"][0]["loc"],
            json!(["query", "cursor"]),
            "{refused}"
        );
    }
}
