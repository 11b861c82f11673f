//! The stores that live on a server rather than this machine: `S3ObjectStore` (the `agent-env-store-s3`
//! crate) and `PostgresDocumentStore` (`agent-env-store-postgres`), built from their config tables.
//! Their crates do the talking; this module reads the tables with the same checks and wording as the
//! local stores, and hands them the environment the process started with for the AWS variables.

use super::config_table::{self, ConfigTable};
use crate::environment::Environment;
use agent_env_store::SettingsProblems;
use agent_env_store_postgres::PostgresDocumentStore;
use agent_env_store_s3::{S3ObjectStore, S3Settings};

/// How long a process stopped at once waits for the server to confirm the uploads it aborts.
const ABORT_WITHIN: std::time::Duration = std::time::Duration::from_secs(3);

/// How long, in seconds, for what a command says when an abort went unconfirmed.
pub const ABORT_WITHIN_SECONDS: u64 = ABORT_WITHIN.as_secs();

/// Aborts the S3 multipart uploads this process has under way, for a command stopped at once: how
/// many the server confirmed (their parts are gone from the bucket) and which it did not.
pub fn abort_uploads_under_way() -> agent_env_store_s3::Aborted {
    agent_env_store_s3::abort_uploads_under_way(ABORT_WITHIN)
}

/// `S3ObjectStore` from its config table (references resolved); the AWS variables of `env` fill in the
/// credentials, region and endpoint the table leaves out. Nothing is sent until the store is used. The
/// error names every problem: unknown keys and every bad value (the S3 crate names a missing bucket).
pub fn s3_store(
    impl_name: &str,
    table: &ConfigTable,
    env: &Environment,
) -> Result<S3ObjectStore, SettingsProblems> {
    let mut problems =
        config_table::key_problems(impl_name, table, &agent_env_store_s3::CONFIG_KEYS, &[]);
    let settings = problems.keep(S3Settings::from_table(table, &|name| env.var(name)));
    match settings {
        Some(settings) if problems.is_empty() => Ok(S3ObjectStore::new(settings)?),
        _ => Err(problems),
    }
}

/// `PostgresDocumentStore` from its config table (references resolved): `dsn`, usually a reference such
/// as `"env:AGENT_ENV_PG_DSN"` or `"secret:team-pg-dsn"` so the password stays out of the file, and an
/// optional `schema`. Nothing connects until the store is used. The error names every problem.
pub fn postgres_store(
    impl_name: &str,
    table: &ConfigTable,
) -> Result<PostgresDocumentStore, SettingsProblems> {
    let mut problems = config_table::key_problems(
        impl_name,
        table,
        &agent_env_store_postgres::CONFIG_KEYS,
        &agent_env_store_postgres::REQUIRED_KEYS,
    );
    let dsn = problems.keep(config_table::opt_string(impl_name, table, "dsn"));
    let schema = problems
        .keep(config_table::opt_string(impl_name, table, "schema"))
        .flatten();
    let Some(Some(dsn)) = dsn else {
        // A missing dsn is named by the key check, one of the wrong type by its read.
        if problems.is_empty() {
            problems.push(format!(
                "{}: dsn is not set; write dsn = \"env:AGENT_ENV_PG_DSN\" and set that variable to postgres://USER:PASSWORD@HOST:PORT/DATABASE",
                agent_env_store_postgres::CLASS
            ));
        }
        return Err(problems);
    };
    match problems.keep(PostgresDocumentStore::new(&dsn, schema.as_deref())) {
        Some(store) => problems.into_result(store),
        None => Err(problems),
    }
}
