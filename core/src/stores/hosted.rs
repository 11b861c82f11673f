//! The stores that live on a server rather than this machine: `S3ObjectStore` (the `agent-env-store-s3`
//! crate) and `PostgresDocumentStore` (`agent-env-store-postgres`), built from their config tables.
//! Their crates do the talking; this module reads the tables with the same checks and wording as the
//! local stores, and hands them the environment the process started with for the AWS variables.

use super::config_table::{self, ConfigTable};
use crate::environment::Environment;
use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store_postgres::PostgresDocumentStore;
use agent_env_store_s3::{S3ObjectStore, S3Settings};

/// `S3ObjectStore` from its config table (references resolved); the AWS variables of `env` fill in the
/// credentials, region and endpoint the table leaves out. Nothing is sent until the store is used.
pub fn s3_store(
    impl_name: &str,
    table: &ConfigTable,
    env: &Environment,
) -> StoreResult<S3ObjectStore> {
    config_table::check_keys(
        impl_name,
        table,
        &agent_env_store_s3::CONFIG_KEYS,
        &agent_env_store_s3::REQUIRED_KEYS,
    )?;
    let settings = S3Settings::from_table(table, &|name| env.var(name))?;
    S3ObjectStore::new(settings)
}

/// `PostgresDocumentStore` from its config table (references resolved): `dsn`, usually a reference such
/// as `"env:AGENT_ENV_PG_DSN"` or `"secret:team-pg-dsn"` so the password stays out of the file, and an
/// optional `schema`. Nothing connects until the store is used.
pub fn postgres_store(impl_name: &str, table: &ConfigTable) -> StoreResult<PostgresDocumentStore> {
    config_table::check_keys(
        impl_name,
        table,
        &agent_env_store_postgres::CONFIG_KEYS,
        &agent_env_store_postgres::REQUIRED_KEYS,
    )?;
    // Both are read before either fails, so one error names every problem.
    match (
        config_table::opt_string(impl_name, table, "dsn"),
        config_table::opt_string(impl_name, table, "schema"),
    ) {
        (Ok(dsn), Ok(schema)) => {
            PostgresDocumentStore::new(&dsn.unwrap_or_default(), schema.as_deref())
        }
        (dsn, schema) => {
            let problems: Vec<String> = [dsn.err(), schema.err()]
                .into_iter()
                .flatten()
                .map(|e| e.to_string())
                .collect();
            Err(StoreError::Config(problems.join("; ")))
        }
    }
}
