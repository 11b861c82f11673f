//! `[stores.document] impl = "PostgresDocumentStore"` as a user configures it, against a real PostgreSQL 15
//! cluster started by `scripts/servers/postgres.sh`: `config check` connects before any work and names
//! what to fix without printing the password, and `store check document` runs the whole kit.

use agent_env_test_support::servers::shared_postgres;
use serde_json::Value;

use crate::hosted_s3::{problems, World};

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
        found.contains("PostgresDocumentStore: dsn does not parse"),
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
        found.contains("check the user and password in dsn"),
        "{found}"
    );
    assert!(
        !found.contains("not-the-password"),
        "the password was printed: {found}"
    );
}
