//! PostgresDocumentStore against a real PostgreSQL 15 cluster started by `scripts/servers/postgres.sh`.

// Tests stop at the first thing that is not as expected: unwrapping is how they say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use agent_env_store::document::query::{Filter, UpdateSpec};
use agent_env_store::{kits, DocumentStore, StoreError, VersionedEntityStore};
use agent_env_store_postgres::PostgresDocumentStore;
use agent_env_test_support::servers::{shared_postgres, silent_server};
use serde_json::{json, Value};

fn dsn() -> String {
    shared_postgres().value("PG_DSN").to_string()
}

/// A store in a schema of its own, so tests sharing the cluster never see each other's collections.
fn store(schema: &str) -> PostgresDocumentStore {
    PostgresDocumentStore::new(&dsn(), Some(schema)).unwrap()
}

fn doc(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().cloned().unwrap()
}

#[test]
fn the_document_kit_passes_against_a_real_postgres() {
    let store = store("kit");
    let report = kits::run(
        &kits::document::cases(),
        &store as &dyn DocumentStore,
        "coll",
    );
    assert!(report.all_passed(), "{}", report.render());
    assert_eq!(
        report.count(|o| matches!(o, kits::CaseOutcome::Passed)),
        45,
        "{}",
        report.render()
    );
    // Again in a namespace as `agent-env store check` picks one: long, unique collection names.
    let ns = kits::unique_namespace(agent_env_store::StoreKind::Document);
    let report = kits::run(&kits::document::cases(), &store as &dyn DocumentStore, &ns);
    assert!(report.all_passed(), "{}", report.render());
    // The kit drops every table it made: `agent-env store check document` leaves nothing behind.
    assert_eq!(tables_in("kit", "docs_"), Vec::<String>::new());
}

#[test]
fn writers_in_separate_pools_never_lose_an_update() {
    let setup = store("counters");
    setup
        .insert("c", &doc(json!({"id": "n", "count": 0})))
        .unwrap();
    let threads: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(|| {
                // Its own store, so its own connections: as another process would have.
                let mine = store("counters");
                for _ in 0..50 {
                    let n = mine
                        .update(
                            "c",
                            &Filter::eq("id", "n"),
                            &UpdateSpec::default().inc("count", 1),
                            false,
                        )
                        .unwrap();
                    assert_eq!(n, 1);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let after = setup
        .find_one("c", &Filter::eq("id", "n"), None)
        .unwrap()
        .unwrap();
    assert_eq!(after["count"], json!(400));
}

#[test]
fn of_eight_racing_inserts_of_one_unique_key_exactly_one_wins() {
    let setup = store("unique_race");
    setup.ensure_index("u", &["id"], true).unwrap();
    let store = Arc::new(setup);
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || store.insert("u", &doc(json!({"id": "same", "writer": i}))))
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(
        results.iter().filter(|r| r.is_ok()).count(),
        1,
        "{results:?}"
    );
    for lost in results.iter().filter(|r| r.is_err()) {
        assert!(matches!(lost, Err(StoreError::DuplicateKey(_))), "{lost:?}");
    }
    assert_eq!(store.count("u", &Filter::default()).unwrap(), 1);
}

#[test]
fn two_stores_creating_the_same_collection_at_once_both_succeed() {
    for round in 0..5 {
        let collection = format!("fresh{round}");
        let threads: Vec<_> = (0..2)
            .map(|i| {
                let collection = collection.clone();
                std::thread::spawn(move || {
                    let mine = store("creation_race");
                    mine.ensure_index(&collection, &["id", "version"], true)?;
                    mine.insert(
                        &collection,
                        &doc(json!({"id": format!("d{i}"), "version": 1})),
                    )
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap().unwrap();
        }
        assert_eq!(
            store("creation_race")
                .count(&collection, &Filter::default())
                .unwrap(),
            2
        );
    }
}

#[test]
fn versioned_entities_keep_every_version_and_guard_concurrent_writers() {
    let docs: Arc<dyn DocumentStore> = Arc::new(store("versioned"));
    let entities = VersionedEntityStore::new(Arc::clone(&docs), "tasks", &[]).unwrap();
    let v1 = entities
        .put(&doc(json!({"id": "t", "goal": "one"})), 5)
        .unwrap();
    let v2 = entities
        .put(&doc(json!({"id": "t", "goal": "two"})), 5)
        .unwrap();
    assert_eq!((v1, v2), (1, 2));
    assert_eq!(
        entities.get("t", None).unwrap().unwrap()["goal"],
        json!("two")
    );
    assert_eq!(
        entities.get("t", Some(1)).unwrap().unwrap()["goal"],
        json!("one")
    );
    let dup = entities.insert_next(&doc(json!({"id": "t", "goal": "again"})), 2);
    assert!(dup.is_err(), "a second version 2 was accepted");
}

#[test]
fn a_bad_dsn_a_server_that_is_down_and_a_wrong_password_say_what_to_do() {
    let err = StoreError::from(
        PostgresDocumentStore::new("postgres://u:pw@host:notaport/db", None).unwrap_err(),
    );
    assert!(matches!(err, StoreError::Config(_)), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("PostgresDocumentStore: dsn does not parse"),
        "{err}"
    );

    let down = PostgresDocumentStore::new("postgres://agentenv:hunter2@127.0.0.1:9/agentenv", None)
        .unwrap();
    let err = down.check_connection().unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("could not reach 127.0.0.1:9/agentenv"),
        "{text}"
    );
    assert!(text.contains("is the server running"), "{text}");
    assert!(text.contains("is the dsn's host and port right?"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    // A dsn the config file names by a reference: where it was read from is where to fix the host.
    let down = PostgresDocumentStore::new("postgres://agentenv:hunter2@127.0.0.1:9/agentenv", None)
        .unwrap()
        .dsn_read_from("the environment variable TEAM_PG_DSN");
    let text = down.check_connection().unwrap_err().to_string();
    assert!(
        text.contains(
            "is the server running and reachable, and is the host and port in dsn (read from the environment variable TEAM_PG_DSN) right?"
        ),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");

    let real = dsn();
    let (head, host) = real.rsplit_once('@').unwrap();
    let user = head.rsplit_once(':').unwrap().0;
    let wrong =
        PostgresDocumentStore::new(&format!("{user}:wrong-password-text@{host}"), None).unwrap();
    let err = wrong.check_connection().unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, StoreError::Config(_)), "{err:?}");
    assert!(
        text.contains("check the user and password in dsn"),
        "{text}"
    );
    assert!(!text.contains("wrong-password-text"), "{text}");

    // A dsn the config file names by a reference: the login's refusal says where it was read from.
    let wrong = PostgresDocumentStore::new(&format!("{user}:wrong-password-text@{host}"), None)
        .unwrap()
        .dsn_read_from("the environment variable TEAM_PG_DSN");
    let text = wrong.check_connection().unwrap_err().to_string();
    assert!(
        text.contains(
            "check the user and password in dsn (read from the environment variable TEAM_PG_DSN)"
        ),
        "{text}"
    );
    assert!(!text.contains("wrong-password-text"), "{text}");
}

#[test]
fn a_nul_character_is_refused_as_a_bad_value_not_a_server_failure() {
    let store = store("nul");
    let err = store
        .insert("c", &doc(json!({"id": "n", "text": "a\u{0}b"})))
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidValue(_)), "{err:?}");
    assert!(err.to_string().contains("NUL character"), "{err}");
}

/// Inside a process that already runs a multi-thread runtime (the explorer's), the store is used from
/// that runtime's blocking pool, as the explorer uses it: its connections run on that runtime and the
/// kit passes there too.
#[test]
fn the_store_works_from_a_running_runtimes_blocking_pool() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let report = runtime.block_on(async {
        tokio::task::spawn_blocking(|| {
            let store = store("in_runtime");
            kits::run(
                &kits::document::cases(),
                &store as &dyn DocumentStore,
                "coll",
            )
        })
        .await
        .unwrap()
    });
    assert!(report.all_passed(), "{}", report.render());
}

/// A server that accepts the connection and then says nothing fails the call within the dsn's
/// connect timeout, with a sentence naming it, instead of hanging the command.
#[test]
fn a_server_that_never_answers_fails_within_the_connect_timeout() {
    let (port, held) = silent_server(std::time::Duration::from_secs(5));
    let store = PostgresDocumentStore::new(
        &format!("postgres://u:p@127.0.0.1:{port}/db?connect_timeout=1"),
        None,
    )
    .unwrap();
    let err = store.check_connection().unwrap_err().to_string();
    assert_eq!(
        err,
        format!("PostgresDocumentStore: 127.0.0.1:{port}/db did not answer within 1 s; is the server running and not paused or overloaded, and is the dsn's host and port a PostgreSQL server's?")
    );
    held.join().unwrap();
    let (port, held) = silent_server(std::time::Duration::from_secs(5));
    let store = PostgresDocumentStore::new(
        &format!("postgres://u:p@127.0.0.1:{port}/db?connect_timeout=1"),
        None,
    )
    .unwrap()
    .dsn_read_from("the secret team-pg-dsn");
    let err = store.check_connection().unwrap_err().to_string();
    assert!(
        err.ends_with("and is the host and port in dsn (read from the secret team-pg-dsn) a PostgreSQL server's?"),
        "{err}"
    );
    held.join().unwrap();
}

/// A pooled connection the server closed while it sat idle for over a second (a restart, or an
/// administrator ending the session) is noticed and replaced, so the next call works instead of
/// failing with the closed connection's error.
#[test]
fn a_connection_the_server_closed_while_idle_is_replaced() {
    let name = format!("closed-idle-{}", std::process::id());
    let store = PostgresDocumentStore::new(
        &format!("{}?application_name={name}", dsn()),
        Some("closed_idle"),
    )
    .unwrap();
    store.insert("c", &doc(json!({"id": "a"}))).unwrap();
    // An administrator ends the store's session (as a restart does to every session).
    let ended: i64 = owner_session(async |client| {
        client
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1",
                &[&name],
            )
            .await
            .unwrap()
            .get(0)
    });
    assert_eq!(ended, 1, "the store's idle connection was not found");
    // Idle for over a second, it is checked before reuse.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    store.insert("c", &doc(json!({"id": "b"}))).unwrap();
    assert_eq!(store.count("c", &Filter::all()).unwrap(), 2);
}

/// `work` with a client connected as the cluster's owner, on a runtime of its own: what a test sets up
/// or looks at beside the store.
fn owner_session<T>(work: impl AsyncFnOnce(&tokio_postgres::Client) -> T) -> T {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&dsn(), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        work(&client).await
    })
}

/// Runs `sql` (statements, no parameters) as the cluster's owner: what a test sets up beside the store.
fn as_owner(sql: &str) {
    owner_session(async |client| client.batch_execute(sql).await.unwrap());
}

/// The names of the tables in `schema` whose names start with `prefix`, as the cluster's owner sees
/// them.
fn tables_in(schema: &str, prefix: &str) -> Vec<String> {
    owner_session(async |client| {
        client
            .query(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = $1 AND starts_with(tablename, $2) ORDER BY 1",
                &[&schema, &prefix],
            )
            .await
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect()
    })
}

/// The dsn of the shared cluster's database for another user.
fn dsn_as(user: &str, password: &str) -> String {
    let real = dsn();
    let host = real.rsplit_once('@').unwrap().1;
    format!("postgres://{user}:{password}@{host}")
}

/// A dropped collection's table and indexes are gone, and the same store makes them again on the next
/// write (it forgets it knew them); dropping a collection that does not exist is no error.
#[test]
fn a_dropped_collection_is_gone_and_can_be_made_again() {
    let store = store("dropping");
    store.ensure_index("c", &["id"], true).unwrap();
    store.insert("c", &doc(json!({"id": "a"}))).unwrap();
    assert_eq!(tables_in("dropping", "docs_c"), ["docs_c"]);

    store.drop_collection("c").unwrap();
    assert_eq!(tables_in("dropping", "docs_c"), Vec::<String>::new());
    assert_eq!(store.count("c", &Filter::all()).unwrap(), 0);
    store.drop_collection("c").unwrap();
    store.drop_collection("never_made").unwrap();

    store.ensure_index("c", &["id"], true).unwrap();
    store.insert("c", &doc(json!({"id": "a"}))).unwrap();
    let again = store.insert("c", &doc(json!({"id": "a"})));
    assert!(
        matches!(again, Err(StoreError::DuplicateKey(_))),
        "{again:?}"
    );
    assert_eq!(store.count("c", &Filter::all()).unwrap(), 1);
}

/// Deleting every match deletes them all and says exactly how many, reading no whole document,
/// whether SQL decides the filter (a membership of strings), narrows it (beside a condition only a
/// document answers) or leaves it all to the evaluator; the documents that do not match stay, as
/// the evaluator says. A collection never written deletes nothing.
#[test]
fn delete_all_deletes_every_match_and_keeps_the_rest() {
    use agent_env_store::document::eval;
    use agent_env_store::document::query::Predicate;

    let store = store("delete_all");
    let stored: Vec<serde_json::Map<String, Value>> = [
        json!({"id": "a", "status": "completed", "n": 1}),
        json!({"id": "b", "status": "running", "n": 2}),
        json!({"id": "a", "status": "failed", "n": 3}),
        json!({"id": "c", "status": "completed", "n": 4}),
        json!({"id": ["a"], "status": "completed", "n": 5}),
        json!({"id": {"a": 1}, "status": "completed", "n": 6}),
        json!({"id": "b", "n": 7}),
        json!({"status": "completed", "n": 8}),
    ]
    .into_iter()
    .map(doc)
    .collect();
    let members = Predicate::In(vec![json!("a"), json!("b"), json!("none")]);
    let filters = [
        Filter::default().and("id", members.clone()),
        Filter::default()
            .and("id", members)
            .and("status", Predicate::Ne(json!("running"))),
        Filter::default().and("n", Predicate::Gte(json!(4))),
        Filter::eq("id", "none"),
        Filter::all(),
    ];
    for filter in &filters {
        store.drop_collection("c").unwrap();
        store.ensure_index("c", &["id"], false).unwrap();
        for d in &stored {
            store.insert("c", d).unwrap();
        }
        let kept: Vec<_> = stored
            .iter()
            .filter(|d| !eval::matches(d, filter))
            .cloned()
            .collect();
        let read_before = store.documents_read();
        let deleted = store.delete_all("c", filter).unwrap();
        assert_eq!(deleted as usize, stored.len() - kept.len(), "{filter:?}");
        assert_eq!(store.documents_read(), read_before, "{filter:?}");
        assert_eq!(
            store.query("c", &Filter::all(), None, None, 0).unwrap(),
            kept,
            "{filter:?}"
        );
        assert_eq!(store.delete_all("c", filter).unwrap(), 0, "{filter:?}");
    }
    assert_eq!(
        store.delete_all("never_written", &Filter::all()).unwrap(),
        0
    );
}

/// `config check` asks, read-only, whether the dsn's user may create the store's tables: a user who may
/// log in but not create in the schema (or create the schema) is told which grant to ask for, before
/// any work; once granted, the check passes. Nothing is created by the check.
#[test]
fn a_user_who_may_not_create_tables_is_named_with_the_grant_to_ask_for() {
    let role = format!("limited_{}", std::process::id());
    as_owner(&format!(
        "CREATE ROLE {role} LOGIN PASSWORD 'limited-pw-4821'"
    ));
    let dsn = dsn_as(&role, "limited-pw-4821");

    let public = PostgresDocumentStore::new(&dsn, None).unwrap();
    let err = public.check_connection().unwrap_err();
    assert!(matches!(err, StoreError::Config(_)), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "the dsn's user '{role}' may not create tables in the schema 'public', so the first write would fail; ask the database's administrator for GRANT USAGE, CREATE ON SCHEMA public TO {role}"
        )),
        "{text}"
    );
    assert!(!text.contains("limited-pw-4821"), "{text}");

    let missing = format!("missing_{role}");
    let elsewhere = PostgresDocumentStore::new(&dsn, Some(&missing)).unwrap();
    let text = elsewhere.check_connection().unwrap_err().to_string();
    assert!(
        text.contains(&format!(
            "the schema '{missing}' does not exist and the dsn's user '{role}' may not create it"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("GRANT CREATE ON DATABASE agentenv TO {role}")),
        "{text}"
    );
    assert_eq!(tables_in(&missing, ""), Vec::<String>::new());

    as_owner(&format!(
        "GRANT CREATE ON SCHEMA public TO {role}; GRANT CREATE ON DATABASE agentenv TO {role}"
    ));
    public.check_connection().unwrap();
    elsewhere.check_connection().unwrap();
    // The owner of the database may create anywhere in it.
    store("owner_check").check_connection().unwrap();
}

/// A second user of a shared database, granted the right to write the tables the first made, uses
/// them: the store does not try to make again (as their owner only may) what exists. Before the
/// tables' grants, the check names them and the grants to ask for (it passed, and every write failed).
#[test]
fn a_second_user_granted_the_tables_writes_them_without_owning_them() {
    let schema = format!("shared_{}", std::process::id());
    let owner = store(&schema);
    owner
        .ensure_index("tasks", &["id", "version"], true)
        .unwrap();
    owner
        .insert("tasks", &doc(json!({"id": "a", "version": 1})))
        .unwrap();
    let role = format!("second_{}", std::process::id());
    as_owner(&format!(
        "CREATE ROLE {role} LOGIN PASSWORD 'second-pw-7731';
         GRANT USAGE, CREATE ON SCHEMA {schema} TO {role}"
    ));
    let second =
        PostgresDocumentStore::new(&dsn_as(&role, "second-pw-7731"), Some(&schema)).unwrap();
    let text = second.check_connection().unwrap_err().to_string();
    assert!(
        text.contains(&format!(
            "the dsn's user '{role}' may create tables in the schema '{schema}' but not write the store's tables already there, which another user made (the table docs_tasks with its id sequence), so reads or writes would fail"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role} and GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema} TO {role}"
        )),
        "{text}"
    );
    as_owner(&format!(
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role};
         GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema} TO {role}"
    ));
    second.check_connection().unwrap();
    second
        .ensure_index("tasks", &["id", "version"], true)
        .unwrap();
    second
        .insert("tasks", &doc(json!({"id": "a", "version": 2})))
        .unwrap();
    assert_eq!(second.count("tasks", &Filter::eq("id", "a")).unwrap(), 2);
}

/// A value of mixed type for the `i`th document: absent (`None`), null, numbers (whole and not,
/// equal in value and not in spelling), strings a collation orders differently from Rust, booleans,
/// arrays and objects, with repeats so that many documents tie.
fn mixed(i: u64) -> Option<Value> {
    let values = [
        json!(null),
        json!(3),
        json!(3.0),
        json!(-2),
        json!(2.5),
        json!(10),
        json!("a"),
        json!("B"),
        json!("b"),
        json!("é"),
        json!("Z"),
        json!("a b"),
        json!("ab"),
        json!(""),
        json!(true),
        json!(false),
        json!([1, "x"]),
        json!([]),
        json!({"k": 1}),
        json!({"a": [2]}),
    ];
    let pick = (i.wrapping_mul(2_654_435_761) >> 7) % (values.len() as u64 + 2);
    values.get(pick as usize).cloned()
}

/// Documents with mixed-type sort fields, missing fields, ties, a tag to filter on (sometimes in an
/// array) and a nested field.
fn mixed_documents(n: u64) -> Vec<serde_json::Map<String, Value>> {
    (0..n)
        .map(|i| {
            let mut d = doc(json!({"id": format!("d{i}"), "n": i % 7}));
            if let Some(v) = mixed(i) {
                d.insert("s".into(), v);
            }
            if let Some(v) = mixed(i / 3 + 11) {
                d.insert("t".into(), v);
            }
            if i % 5 != 0 {
                d.insert(
                    "tag".into(),
                    match i % 4 {
                        0 => json!("x"),
                        1 => json!(["y", "x"]),
                        2 => json!("y"),
                        _ => json!(["z"]),
                    },
                );
            }
            if i % 3 != 0 {
                d.insert(
                    "o".into(),
                    json!({"k": mixed(i + 5), "list": [{"v": i % 4}]}),
                );
            }
            d
        })
        .collect()
}

/// A page of a query, however it is read, is exactly `eval::window` over the whole collection's
/// matches in insertion order: for sorts on mixed types, missing fields and nulls (ascending,
/// descending, on two keys, on a nested path, or none), filters SQL decides and filters it does not,
/// and windows at every depth. `find_one` is the first of its window, `count` the number of matches.
#[test]
fn every_page_of_a_query_is_the_evaluators_window_over_the_whole_collection() {
    use agent_env_store::document::eval;
    use agent_env_store::document::query::{Predicate, Sort};
    let store = store("paging");
    let docs = mixed_documents(240);
    for d in &docs {
        store.insert("c", d).unwrap();
    }
    // Read whole, in insertion order: what every answer is checked against.
    let whole = store.query("c", &Filter::all(), None, None, 0).unwrap();
    assert_eq!(whole, docs);
    let filters = [
        Filter::all(),
        Filter::eq("tag", "x"),
        Filter::all().and("tag", Predicate::In(vec![json!("y"), json!("z")])),
        Filter::all().and("tag", Predicate::In(vec![])),
        Filter::eq("tag", "x").and("n", Predicate::Gte(json!(3))),
        Filter::eq("o.list.v", 2),
        Filter::all().and("s", Predicate::Exists(false)),
    ];
    let sorts = [
        Some(Sort::by("s", false)),
        Some(Sort::by("s", true)),
        Some(Sort::by("t", false).then("s", true)),
        Some(Sort::by("o.k", false)),
        Some(Sort::default()),
        None,
    ];
    let windows = [
        (1, 0),
        (5, 0),
        (7, 3),
        (50, 20),
        (13, 100),
        (200, 50),
        (3, 239),
        (9, 400),
    ];
    for filter in &filters {
        let matching: Vec<_> = whole
            .iter()
            .filter(|d| eval::matches(d, filter))
            .cloned()
            .collect();
        assert_eq!(
            store.count("c", filter).unwrap(),
            matching.len() as u64,
            "{filter:?}"
        );
        for sort in &sorts {
            for (limit, offset) in windows {
                let expected = eval::window(
                    matching.clone(),
                    sort.as_ref(),
                    eval::query_order,
                    Some(limit),
                    offset,
                );
                let page = store
                    .query("c", filter, sort.as_ref(), Some(limit), offset)
                    .unwrap();
                assert_eq!(
                    page, expected,
                    "{filter:?} sorted by {sort:?}, limit {limit} offset {offset}"
                );
            }
            assert_eq!(
                store.find_one("c", filter, sort.as_ref()).unwrap(),
                eval::first(matching.clone(), sort.as_ref()),
                "{filter:?} sorted by {sort:?}"
            );
        }
    }
    assert_eq!(
        store
            .query(
                "absent",
                &Filter::all(),
                Some(&Sort::by("s", true)),
                Some(5),
                0
            )
            .unwrap(),
        Vec::<serde_json::Map<String, Value>>::new()
    );
    assert_eq!(store.count("absent", &Filter::eq("tag", "x")).unwrap(), 0);
}

/// A page of a listing sorted by a field reads the documents of its window alone (the sort fields of
/// the others only), whatever its depth and whether or not SQL decides the filter; counting a
/// filter's matches reads none. Every page read the whole collection, so listing 20,000 instances
/// two hundred at a time took minutes.
#[test]
fn a_page_reads_its_own_documents_only() {
    use agent_env_store::document::query::{Predicate, Sort};
    let store = store("page_reads");
    for d in mixed_documents(300) {
        store.insert("c", &d).unwrap();
    }
    let newest_first = Sort::by("s", true);
    let read = |f: &dyn Fn()| {
        let before = store.documents_read();
        f();
        store.documents_read() - before
    };
    for offset in [0, 150, 290] {
        let n = read(&|| {
            let page = store
                .query("c", &Filter::all(), Some(&newest_first), Some(10), offset)
                .unwrap();
            assert_eq!(page.len(), 10.min(300 - offset));
        });
        assert_eq!(n, 10.min(300 - offset) as u64, "offset {offset}");
    }
    let undecided = Filter::eq("tag", "x").and("n", Predicate::Gte(json!(3)));
    assert_eq!(
        read(&|| {
            let page = store
                .query("c", &undecided, Some(&newest_first), Some(4), 2)
                .unwrap();
            assert_eq!(page.len(), 4);
        }),
        4
    );
    assert_eq!(
        read(&|| {
            store
                .find_one("c", &Filter::eq("id", "d17"), None)
                .unwrap()
                .unwrap();
        }),
        1
    );
    assert_eq!(
        read(&|| {
            assert!(store.count("c", &Filter::eq("tag", "x")).unwrap() > 0);
            assert!(store.count("c", &undecided).unwrap() > 0);
        }),
        0
    );
}

/// A listing read a page at a time puts its keys in order once or twice, not once a page, while its
/// rows stay as they were; a change by another process (an insert, an update of a sort field, a
/// delete), or by the store itself, is seen on the next page, which is then the evaluator's window
/// over the collection as it is now.
#[test]
fn a_listing_read_page_after_page_keeps_its_order_until_its_rows_change() {
    use agent_env_store::document::eval;
    use agent_env_store::document::query::Sort;
    let store = store("kept_order");
    let other = PostgresDocumentStore::new(&dsn(), Some("kept_order")).unwrap();
    for d in mixed_documents(120) {
        store.insert("c", &d).unwrap();
    }
    let sort = Sort::by("s", true).then("t", false);
    let filter = Filter::all().and(
        "tag",
        agent_env_store::document::query::Predicate::In(vec![json!("x"), json!("y")]),
    );
    let expected = |offset: usize| {
        let whole = store.query("c", &Filter::all(), None, None, 0).unwrap();
        let matching = whole
            .into_iter()
            .filter(|d| eval::matches(d, &filter))
            .collect();
        eval::window(matching, Some(&sort), eval::query_order, Some(10), offset)
    };
    let page = |offset: usize| {
        store
            .query("c", &filter, Some(&sort), Some(10), offset)
            .unwrap()
    };
    store.insert("elsewhere", &doc(json!({"s": 1}))).unwrap();
    let before = store.listings_ordered();
    for offset in (0..80).step_by(10) {
        assert_eq!(page(offset), expected(offset), "offset {offset}");
        // A lookup with a sort between two pages (one more listing put in order, and kept too)
        // leaves the listing's order kept.
        store
            .find_one("elsewhere", &Filter::all(), Some(&sort))
            .unwrap()
            .unwrap();
    }
    assert_eq!(
        store.listings_ordered() - before,
        2 + 1,
        "the listing's keys were read more than twice"
    );

    let changes: [&dyn Fn(); 4] = [
        &|| {
            other
                .insert("c", &doc(json!({"id": "new", "tag": "x", "s": true})))
                .unwrap()
        },
        &|| {
            other
                .update(
                    "c",
                    &Filter::eq("id", "d6"),
                    &UpdateSpec::default().set("s", json!(null)),
                    false,
                )
                .map(|_| ())
                .unwrap()
        },
        &|| {
            other.delete("c", &Filter::eq("id", "new")).unwrap();
        },
        &|| {
            store
                .update(
                    "c",
                    &Filter::eq("id", "d3"),
                    &UpdateSpec::default().set("tag", json!("y")),
                    false,
                )
                .map(|_| ())
                .unwrap()
        },
    ];
    for (i, change) in changes.iter().enumerate() {
        assert_eq!(page(20), expected(20));
        assert_eq!(page(30), expected(30));
        change();
        for offset in (0..130).step_by(10) {
            assert_eq!(
                page(offset),
                expected(offset),
                "change {i}, offset {offset}"
            );
        }
    }
}

/// A string equality matches a field holding the string and an array holding it as an element, never
/// deeper, whether or not the collection has an index on the field: the same documents through every
/// call that takes a filter, as the SQLite store answers.
#[test]
fn an_equality_matches_an_array_holding_the_value_with_or_without_an_index() {
    let store = store("equality");
    store.drop_collection("plain").unwrap();
    store.drop_collection("indexed").unwrap();
    let docs = [
        json!({"id": "scalar", "tag": "x"}),
        json!({"id": "array", "tag": ["w", "x"]}),
        json!({"id": "nested", "tag": [["x"]]}),
        json!({"id": "object", "tag": {"x": "x"}}),
        json!({"id": "other", "tag": "y"}),
        json!({"id": "null", "tag": null}),
        json!({"id": "missing"}),
    ];
    let ids = |found: Vec<serde_json::Map<String, Value>>| -> Vec<String> {
        found
            .iter()
            .map(|d| d["id"].as_str().unwrap().to_string())
            .collect()
    };
    for collection in ["plain", "indexed"] {
        if collection == "indexed" {
            store.ensure_index(collection, &["tag"], false).unwrap();
        }
        for d in &docs {
            store.insert(collection, &doc(d.clone())).unwrap();
        }
        let x = Filter::eq("tag", "x");
        let query =
            |filter: &Filter, limit| ids(store.query(collection, filter, None, limit, 0).unwrap());
        assert_eq!(query(&x, None), ["scalar", "array"], "{collection}");
        assert_eq!(query(&x, Some(10)), ["scalar", "array"], "{collection}");
        assert_eq!(store.count(collection, &x).unwrap(), 2, "{collection}");
        assert_eq!(
            query(&Filter::eq("tag", "w"), Some(1)),
            ["array"],
            "{collection}"
        );
        let listed = Filter::default().and(
            "tag",
            agent_env_store::document::query::Predicate::In(vec![json!("z"), json!("w")]),
        );
        assert_eq!(query(&listed, None), ["array"], "{collection}");
        assert_eq!(
            store
                .find_one(collection, &Filter::eq("tag", "w"), None)
                .unwrap()
                .map(|d| d["id"].clone()),
            Some(json!("array")),
            "{collection}"
        );
        let replaced = store
            .replace(
                collection,
                &Filter::eq("tag", "w"),
                &doc(json!({"id": "array", "tag": ["x", "v"]})),
                false,
            )
            .unwrap();
        assert_eq!(replaced, 1, "{collection}");
        assert_eq!(
            query(&Filter::eq("tag", "v"), Some(5)),
            ["array"],
            "{collection}"
        );
        assert_eq!(query(&x, Some(5)), ["scalar", "array"], "{collection}");
    }
}

/// How many times the server has scanned `table` of `schema` whole, and read each of its indexes, by
/// name: read as the cluster's owner once the counts of every session that ended are in.
fn scans_of(schema: &str, table: &str) -> (i64, Vec<(String, i64)>) {
    owner_session(async |client| {
        let seq: i64 = client
            .query_one(
                "SELECT seq_scan FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = $2",
                &[&schema, &table],
            )
            .await
            .unwrap()
            .get(0);
        let indexes = client
            .query(
                "SELECT indexrelname::text, idx_scan FROM pg_stat_user_indexes WHERE schemaname = $1 AND relname = $2 ORDER BY 1",
                &[&schema, &table],
            )
            .await
            .unwrap()
            .iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect();
        (seq, indexes)
    })
}

/// A lookup by a string field reads the rows holding it through an index, never by scanning the whole
/// table (which decompresses every document: a lookup of one task instance by its id took 17 ms at
/// 5,000 instances, and walked the primary key for `find_one`): through the index `ensure_index` made
/// on the field, or the containment index of a collection given none.
#[test]
fn a_lookup_by_a_field_reads_through_an_index_not_the_whole_table() {
    let schema = "lookup";
    let setup = store(schema);
    setup.drop_collection("indexed").unwrap();
    setup.drop_collection("plain").unwrap();
    setup
        .ensure_index("indexed", &["instance_id"], true)
        .unwrap();
    setup
        .insert("plain", &doc(json!({"instance_id": "first"})))
        .unwrap();
    drop(setup);
    for table in ["docs_indexed", "docs_plain"] {
        // 3,000 documents of some 4 KB, as task instances are, written and analyzed by the owner.
        as_owner(&format!(
            "INSERT INTO {schema}.{table} (doc) SELECT jsonb_build_object('instance_id', 'team/t-' || g, \
             'status', 'completed', 'log', (SELECT string_agg(md5(g::text || k::text), ' ') FROM generate_series(1, 110) k)) \
             FROM generate_series(1, 3000) g; ANALYZE {schema}.{table}"
        ));
    }
    let lookups = 20;
    for (collection, index_suffix) in [("indexed", "_unique"), ("plain", "_doc")] {
        let table = format!("docs_{collection}");
        let (seq_before, indexes_before) = scans_of(schema, &table);
        let store = store(schema);
        for i in 0..lookups {
            let id = format!("team/t-{}", 1000 + i * 97);
            let found = store
                .find_one(collection, &Filter::eq("instance_id", id.as_str()), None)
                .unwrap()
                .unwrap();
            assert_eq!(found["instance_id"], json!(id));
        }
        // Its sessions end, and the server counts their scans.
        drop(store);
        let read_through = |indexes: &[(String, i64)]| {
            indexes
                .iter()
                .filter(|(name, _)| name.ends_with(index_suffix))
                .map(|(_, n)| *n)
                .sum::<i64>()
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let (seq_after, indexes_after) = loop {
            let now = scans_of(schema, &table);
            if read_through(&now.1) >= read_through(&indexes_before) + lookups
                || std::time::Instant::now() > deadline
            {
                break now;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        };
        assert!(
            read_through(&indexes_after) >= read_through(&indexes_before) + lookups,
            "{collection}: {lookups} lookups by instance_id did not read the index *{index_suffix}: {indexes_before:?} then {indexes_after:?}"
        );
        assert_eq!(
            seq_after, seq_before,
            "{collection}: a lookup by instance_id scanned the whole table"
        );
    }
}
