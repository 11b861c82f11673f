//! `task instances` and `task get-instance` with a configured document store that does not answer:
//! why it is left out is said once, in the error, with one hint; `task list`, which answers without
//! it, says it once as a warning, and exits 1 after listing what it could.

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
    for (args, code) in [
        // A listing the store is left out of is not the whole answer.
        (vec!["task", "list"], 1),
        (vec!["task", "instances", "hello"], 1),
        (vec!["task", "get-instance", instance.as_str()], 0),
    ] {
        let r = s.run(&args);
        assert_eq!(r.code, code, "{args:?}: {}", r.both());
        assert!(r.stdout.contains(&instance), "{args:?}: {}", r.both());
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

/// A listing that had to leave the configured store out lists what it could and exits 1, text and
/// `--json` (the document written whole, with the warning), so a script tells an outage from "no
/// runs": it exited 0, as a list of every run does.
#[test]
fn a_listing_the_store_is_left_out_of_exits_1_after_listing_what_it_could() {
    let s = Sandboxed::new();
    let ran = s.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let whole = s.run(&["task", "list"]);
    assert_eq!(whole.code, 0, "{}", whole.both());
    store_down(&s);
    for args in [
        &["task", "list"][..],
        &["task", "list", "--bundle", "hello"],
        &["task", "instances", "hello"],
    ] {
        let text = s.run(args);
        assert_eq!(text.code, 1, "{args:?}: {}", text.both());
        assert!(
            text.stdout
                .contains("@local/agentenv-framework/hello/hello-")
                && text
                    .stdout
                    .ends_with("Show one with agent-env task get-instance INSTANCE.\n"),
            "{args:?}: {}",
            text.both()
        );
        let json = s.run(&[args, &["--json"]].concat());
        assert_eq!(json.code, 1, "{args:?}: {}", json.both());
        let doc: serde_json::Value = serde_json::from_str(&json.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", json.stdout));
        assert_eq!(
            doc["instances"].as_array().map(Vec::len),
            Some(1),
            "{doc:#}"
        );
        assert!(
            doc["warnings"][0]
                .as_str()
                .unwrap_or_default()
                .starts_with("the configured document store can't be read"),
            "{doc:#}"
        );
        assert!(doc.get("error").is_none(), "{doc:#}");
    }
    // Nothing found here either: still no answer a script takes for "no runs".
    let none = s.run(&["task", "list", "--bundle", "elsewhere"]);
    assert_eq!(none.code, 1, "{}", none.both());
}

/// An @local task's runs are all in the local store: listing them needs no configured store, so
/// one that is down is not warned of and the list exits 0, as `task get` of the same id does.
#[test]
fn an_at_local_tasks_instances_are_listed_whole_with_the_store_down() {
    let s = Sandboxed::new();
    let ran = s.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    store_down(&s);
    let id = "@local/agentenv-framework/hello/hello";
    for args in [
        &["task", "instances", id][..],
        &["task", "list", "--task", id],
    ] {
        let text = s.run(args);
        assert_eq!(text.code, 0, "{args:?}: {}", text.both());
        assert!(
            text.stdout.contains(&format!("{id}-")),
            "{args:?}: {}",
            text.both()
        );
        assert!(
            !text.stderr.contains("Warning:"),
            "{args:?}: {}",
            text.both()
        );
        let json = s.run(&[args, &["--json"]].concat());
        assert_eq!(json.code, 0, "{args:?}: {}", json.both());
        let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
        assert_eq!(
            doc["instances"].as_array().map(Vec::len),
            Some(1),
            "{doc:#}"
        );
        assert!(doc.get("warnings").is_none(), "{doc:#}");
        assert!(
            !json.stderr.contains("Warning:"),
            "{args:?}: {}",
            json.both()
        );
    }
}

/// A filter that matches none of the instances here says so in the text, as `--json`'s warning
/// does, beside the store that could not be read.
#[test]
fn a_filter_matching_nothing_here_says_so_with_the_store_down() {
    let s = Sandboxed::new();
    let ran = s.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    store_down(&s);
    let text = s.run(&["task", "list", "--bundle", "nomatch"]);
    assert_eq!(text.code, 1, "{}", text.both());
    assert_eq!(
        text.stdout,
        format!(
            "None of the 1 recorded task instances matches --bundle nomatch; agent-env task list shows them all.\nThe configured document store, where stored tasks' runs are recorded, can't be read (see the warning above), so its instances are not listed; {HINT}.\n"
        ),
        "{}",
        text.both()
    );
    let json = s.run(&["task", "list", "--bundle", "nomatch", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(
        doc["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap_or_default()
            .starts_with("None of the 1 recorded task instances matches --bundle nomatch")),
        "{doc:#}"
    );
}

/// A prune with the configured store down prunes the local store and exits 1, as `task list` does,
/// so a scheduled prune tells "nothing to prune" from "the shared store was not looked at"; a prune
/// of an @local task, whose instances are all here, exits 0.
#[test]
fn a_prune_the_store_is_left_out_of_exits_1_after_pruning_what_it_could() {
    let s = Sandboxed::new();
    for _ in 0..2 {
        let ran = s.run(&["run", "hello", "-q"]);
        assert_eq!(ran.code, 0, "{}", ran.both());
    }
    store_down(&s);
    let r = s.run(&["task", "prune", "--keep-last", "1", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["deleted"], 1, "{doc:#}");
    assert!(
        doc["warnings"][0]
            .as_str()
            .is_some_and(|w| w.contains("can't be read")),
        "{doc:#}"
    );
    let id = "@local/agentenv-framework/hello/hello";
    let r = s.run(&["task", "prune", "--keep-last", "1", "--task", id]);
    assert_eq!(r.code, 0, "{}", r.both());
}
