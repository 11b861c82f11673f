//! `[stores.document] impl = "PostgresDocumentStore"` as a user configures it, against a real PostgreSQL 15
//! cluster started by `scripts/servers/postgres.sh`: `config check` connects before any work and names
//! what to fix without printing the password, and `store check document` runs the whole kit.

use std::process::Command;

use agent_env_test_support::servers::{scripts_dir, shared_postgres};
use serde_json::Value;

use crate::hosted_s3::{problem_codes, problems, World};

/// Runs `sql` with `psql` as the shared cluster's owner (a role to test with, a look at the tables) and
/// returns what it printed, one row a line. `postgres.sh install` names the folder of the client.
pub(crate) fn psql(sql: &str) -> String {
    let dsn = shared_postgres().value("PG_DSN").to_string();
    let bin = Command::new("bash")
        .arg(scripts_dir().join("postgres.sh"))
        .arg("install")
        .output()
        .unwrap();
    let bin = String::from_utf8_lossy(&bin.stdout).trim().to_string();
    let scratch = tempfile::tempdir().unwrap();
    let out = Command::new(format!("{bin}/psql"))
        .args([
            dsn.as_str(),
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            sql,
        ])
        .env("HOME", scratch.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "psql -c {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The shared cluster's dsn for another user.
pub(crate) fn dsn_as(user: &str, password_encoded: &str) -> String {
    let dsn = shared_postgres().value("PG_DSN").to_string();
    let host = dsn.rsplit_once('@').unwrap().1.to_string();
    format!("postgres://{user}:{password_encoded}@{host}")
}

/// The tables in `schema`, one a line.
fn tables_in(schema: &str) -> String {
    psql(&format!(
        "SELECT tablename FROM pg_tables WHERE schemaname = '{schema}' ORDER BY 1"
    ))
}

fn pg_config(schema: &str) -> String {
    format!(
        "[stores.document]\nimpl = \"PostgresDocumentStore\"\n\n[stores.document.config]\ndsn = \"env:TEAM_PG_DSN\"\nschema = \"{schema}\"\n"
    )
}

#[test]
fn config_check_connects_and_store_check_runs_every_document_case() {
    let dsn = shared_postgres().value("PG_DSN").to_string();
    let world = World::with_config(&pg_config("core_cli"));
    let out = world.run(&["config", "check"], &[("TEAM_PG_DSN", &dsn)]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let out = world.run(
        &["store", "check", "document", "--json"],
        &[("TEAM_PG_DSN", &dsn)],
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(out.status.success(), "{report:#}");
    assert_eq!(
        report["cases"].as_array().map(Vec::len),
        Some(45),
        "{report:#}"
    );
    // The kit dropped every table it made.
    assert_eq!(tables_in("core_cli"), "");
}

/// A user who may log in but not create tables is reported by `config check`, before any work, with
/// the grant to ask for; once granted, the check passes.
#[test]
fn config_check_names_a_user_who_may_not_create_tables_and_the_grant_to_ask_for() {
    let role = format!("core_limited_{}", std::process::id());
    psql(&format!(
        "CREATE ROLE {role} LOGIN PASSWORD 'core-limited-pw'"
    ));
    let dsn = dsn_as(&role, "core-limited-pw");
    let world = World::with_config(&pg_config("public"));
    let out = world.run(&["config", "check", "--json"], &[("TEAM_PG_DSN", &dsn)]);
    assert_eq!(out.status.code(), Some(1));
    let found = problems(&out).join("\n");
    assert!(
        found.contains(&format!(
            "the dsn's user '{role}' may not create tables in the schema 'public', so the first write would fail; ask the database's administrator for GRANT USAGE, CREATE ON SCHEMA public TO {role}"
        )),
        "{found}"
    );
    assert!(!found.contains("core-limited-pw"), "{found}");

    psql(&format!("GRANT CREATE ON SCHEMA public TO {role}"));
    let out = world.run(&["config", "check"], &[("TEAM_PG_DSN", &dsn)]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A user who may not read the table of runs another user made: `task instances` of a stored task
/// says so in one sentence, with the grant it needs and the way to find out more said once.
#[test]
fn task_instances_by_a_user_who_may_not_read_the_runs_says_so_once() {
    let role = format!("core_noread_{}", std::process::id());
    let schema = format!("core_noread_{}", std::process::id());
    psql(&format!(
        "CREATE ROLE {role} LOGIN PASSWORD 'core-noread-pw'; CREATE SCHEMA {schema}; CREATE TABLE {schema}.docs_task_instances (id bigserial PRIMARY KEY, doc jsonb NOT NULL); GRANT USAGE ON SCHEMA {schema} TO {role}"
    ));
    let world = World::with_config(&pg_config(&schema));
    let out = world.run(
        &["task", "instances", "team/check"],
        &[("TEAM_PG_DSN", &dsn_as(&role, "core-noread-pw"))],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot list the instances of 'team/check': the configured document store, which records the runs of stored tasks, can't be read: PostgresDocumentStore: ")
            && stderr.contains("refused (permission denied for table docs_task_instances); the dsn's user needs to create tables in its schema and to read and write the store's tables there (for tables another user made, that takes GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("config check").count(), 1, "{stderr}");
    assert!(!stderr.contains("local store"), "{stderr}");
    assert!(!stderr.contains("core-noread-pw"), "{stderr}");
    psql(&format!("DROP SCHEMA {schema} CASCADE"));
}

/// A password with a character a URL must percent-encode, written as it is: the problem says to encode
/// it, and shows no part of the password.
#[test]
fn a_dsn_with_an_unencoded_password_character_is_told_to_percent_encode_it() {
    let world = World::with_config(&pg_config("core_cli"));
    let out = world.run(
        &["config", "check", "--json"],
        &[(
            "TEAM_PG_DSN",
            "postgres://special:p@ss:w/rd%41#x@127.0.0.1:5432/db",
        )],
    );
    assert_eq!(out.status.code(), Some(1));
    let found = problems(&out).join("\n");
    assert!(
        found.contains(
            "percent-encode the special characters of the password in the dsn: @ as %40, / as %2F"
        ),
        "{found}"
    );
    assert!(!found.contains("ss:w"), "{found}");
}

/// A dsn read through a reference that does not parse names the variable it came from as the place to
/// fix (not the advice to use a reference, which it does), never the password; a URL of another
/// database says what a dsn starts with.
#[test]
fn a_dsn_from_a_variable_that_does_not_parse_names_the_variable() {
    let world = World::with_config(&pg_config("core_cli"));
    let check = |dsn: &str| {
        let out = world.run(&["config", "check", "--json"], &[("TEAM_PG_DSN", dsn)]);
        assert_eq!(out.status.code(), Some(1));
        problems(&out)
    };
    for (dsn, part) in [
        (
            "postgres://u:PW-hunter2@127.0.0.1:99999/db",
            "its port is not a number from 1 to 65535",
        ),
        (
            "postgres://u:PW-hunter2@127.0.0.1:5432/db?connect_timeout=abc",
            "its connect_timeout is not a whole number",
        ),
    ] {
        assert_eq!(
            check(dsn),
            [format!("PostgresDocumentStore: dsn (read from the environment variable TEAM_PG_DSN) does not parse ({part}); set the environment variable TEAM_PG_DSN to a dsn written as postgres://USER:PASSWORD@HOST:PORT/DATABASE")]
        );
    }
    let found = check("postgres://u:PW-hunter2@127.0.0.1:5432/db?foo=bar").join("\n");
    assert!(
        found.starts_with("PostgresDocumentStore: dsn (read from the environment variable TEAM_PG_DSN) does not parse (it names the option 'foo'")
            && found.ends_with("; set the environment variable TEAM_PG_DSN to a dsn written as postgres://USER:PASSWORD@HOST:PORT/DATABASE")
            && !found.contains("hunter2"),
        "{found}"
    );
    assert_eq!(
        check("mysql://x:hunter2@y/z"),
        ["PostgresDocumentStore: dsn (read from the environment variable TEAM_PG_DSN) does not parse (a dsn starts with postgres:// or postgresql://, or is key=value pairs such as host=HOST dbname=DATABASE, got 'mysql://'); set the environment variable TEAM_PG_DSN to a dsn written as postgres://USER:PASSWORD@HOST:PORT/DATABASE"]
    );
}

/// A short password is masked only where it stands as a word: the message's own words are whole.
/// An empty dsn, one with no `:` after its scheme and a port of 0 are said to be what they are, with
/// where the dsn was read from, not left to the client to fail on.
#[test]
fn a_short_password_an_empty_dsn_a_misspelled_scheme_and_port_0_are_said_plainly() {
    let world = World::with_config(&pg_config("core_cli"));
    let check = |dsn: &str| {
        let out = world.run(&["config", "check", "--json"], &[("TEAM_PG_DSN", dsn)]);
        assert_eq!(out.status.code(), Some(1));
        problems(&out).join("\n")
    };
    let advice = "; set the environment variable TEAM_PG_DSN to a dsn written as postgres://USER:PASSWORD@HOST:PORT/DATABASE";
    let named = "PostgresDocumentStore: dsn (read from the environment variable TEAM_PG_DSN)";
    for dsn in [
        "postgres://u:p@h:99999/db",
        "postgres://u:e@h:99999/db",
        "postgres://u:pw@h:0/db",
    ] {
        assert_eq!(
            check(dsn),
            format!("{named} does not parse (its port is not a number from 1 to 65535){advice}")
        );
    }
    let found = check("postgres://u:p@h:5432/db?foo=bar");
    assert!(
        found.starts_with(&format!("{named} does not parse (it names the option 'foo', which the client does not take; it takes application_name, options,")) && !found.contains("***"),
        "{found}"
    );
    assert_eq!(check(""), format!("{named} is empty{advice}"));
    assert_eq!(
        check("postgres//u@h/db"),
        format!("{named} does not parse (a URL dsn starts with postgres:// or postgresql://, the scheme, ':' and '//', got 'postgres//'){advice}")
    );
}

#[test]
fn a_dsn_that_does_not_parse_a_server_that_is_down_and_a_wrong_password_are_reported_before_any_work(
) {
    let world = World::with_config(&pg_config("core_cli"));

    let out = world.run(
        &["config", "check", "--json"],
        &[("TEAM_PG_DSN", "postgres://u:pw@h:port/db")],
    );
    assert_eq!(out.status.code(), Some(1));
    let found = problems(&out).join("\n");
    assert!(
        found.contains(
            "PostgresDocumentStore: dsn (read from the environment variable TEAM_PG_DSN) does not parse"
        ),
        "{found}"
    );

    let out = world.run(
        &["config", "check", "--json"],
        &[(
            "TEAM_PG_DSN",
            "postgres://agentenv:topsecretpw@127.0.0.1:9/agentenv",
        )],
    );
    assert_eq!(out.status.code(), Some(1));
    let found = problems(&out).join("\n");
    assert!(
        found.contains("could not reach 127.0.0.1:9/agentenv"),
        "{found}"
    );
    // A server that is down is told from a mistake in the settings by its code.
    assert_eq!(problem_codes(&out), ["store-unreachable"], "{found}");
    assert!(
        !found.contains("topsecretpw"),
        "the password was printed: {found}"
    );

    let dsn = shared_postgres().value("PG_DSN").to_string();
    let (head, host) = dsn.rsplit_once('@').unwrap();
    let user = head.rsplit_once(':').unwrap().0;
    let wrong = format!("{user}:not-the-password@{host}");
    let out = world.run(&["config", "check", "--json"], &[("TEAM_PG_DSN", &wrong)]);
    assert_eq!(out.status.code(), Some(1));
    let found = problems(&out).join("\n");
    assert!(
        found.contains(
            "check the user and password in dsn (read from the environment variable TEAM_PG_DSN)"
        ),
        "{found}"
    );
    assert!(
        !found.contains("not-the-password"),
        "the password was printed: {found}"
    );
    assert_eq!(problem_codes(&out), ["config-invalid"], "{found}");
}
