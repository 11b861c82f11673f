//! `task instances` and `task get-instance` with a configured document store that does not answer:
//! why it is left out is said once, in the error, with one hint; `task list`, which answers without
//! it, says it once as a warning.

use crate::support::run::Sandboxed;

/// A config whose document store is a PostgreSQL server on a port nothing listens on.
fn store_down(s: &Sandboxed) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    s.write(
        ".agentenv/config.toml",
        &format!(
            "[stores.document]\nimpl = \"PostgresDocumentStore\"\nconfig = {{ dsn = \"postgresql://u:p@127.0.0.1:{port}/db\" }}\n"
        ),
    );
}

const HINT: &str = "agent-env config check says what is wrong with it";

#[test]
fn a_store_left_out_is_said_once_by_a_command_that_fails_for_it() {
    let s = Sandboxed::new();
    store_down(&s);
    for args in [
        &["task", "instances", "team/t"][..],
        &["task", "get-instance", "team-nope"][..],
    ] {
        let r = s.run(args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.both());
        assert_eq!(
            r.stderr
                .matches("PostgresDocumentStore could not reach")
                .count(),
            1,
            "{args:?}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("Warning:"), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.starts_with("Error: ") && r.stderr.trim_end().ends_with(HINT),
            "{args:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn a_command_that_answers_without_the_store_warns_once() {
    let s = Sandboxed::new();
    store_down(&s);
    let ran = s.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let instance = s.docs("task_instances")[0]["instance_id"]
        .as_str()
        .unwrap()
        .to_string();
    for args in [
        vec!["task", "list"],
        vec!["task", "instances", "hello"],
        vec!["task", "get-instance", instance.as_str()],
    ] {
        let r = s.run(&args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.both());
        assert_eq!(
            r.stderr
                .matches("PostgresDocumentStore could not reach")
                .count(),
            1,
            "{args:?}: {}",
            r.stderr
        );
        assert!(
            r.stderr.starts_with(
                "Warning: the configured document store can't be read, so stored tasks and their instances are left out: "
            ),
            "{args:?}: {}",
            r.stderr
        );
    }
}
