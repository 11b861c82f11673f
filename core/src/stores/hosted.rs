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
/// `read_from` answers, for a key the config file names by a reference, where it was read from (`the
/// environment variable S3_ENDPOINT`), which an endpoint that cannot be reached or a bucket that does
/// not exist names as the place to fix.
pub fn s3_store(
    impl_name: &str,
    table: &ConfigTable,
    env: &Environment,
    read_from: &dyn Fn(&str) -> Option<String>,
) -> Result<S3ObjectStore, SettingsProblems> {
    let mut problems =
        config_table::key_problems(impl_name, table, &agent_env_store_s3::CONFIG_KEYS, &[]);
    let settings = problems.keep(S3Settings::from_table_read_from(
        table,
        &|name| env.var(name),
        read_from,
    ));
    remember_environment_credentials(table, env);
    match settings {
        Some(settings) if problems.is_empty() => Ok(S3ObjectStore::new(settings)?),
        _ => Err(problems),
    }
}

/// The secret half of the credentials the AWS variables give the store (the secret key and the
/// session token) is masked wherever agent-env shows or records text, as the same values written in
/// its table are: a task command that echoes `$AWS_SECRET_ACCESS_KEY` does not put it in a shared
/// store's records.
fn remember_environment_credentials(table: &ConfigTable, env: &Environment) {
    let from_env =
        s3_settings_from_environment(&|key| table.contains_key(key), &|name| env.var(name));
    for setting in from_env {
        if matches!(setting.key, "secret_access_key" | "session_token") {
            crate::redaction::remember(&setting.value);
        }
    }
}

/// `PostgresDocumentStore` from its config table (references resolved): `dsn`, usually a reference such
/// as `"env:AGENT_ENV_PG_DSN"` or `"secret:team-pg-dsn"` so the password stays out of the file, and an
/// optional `schema`. Nothing connects until the store is used. The error names every problem.
/// `dsn_read_from` is where the config file's reference read the dsn from (`the environment variable
/// TEAM_PG_DSN`), which a dsn that does not parse or a refused login names as the place to fix it.
pub fn postgres_store(
    impl_name: &str,
    table: &ConfigTable,
    dsn_read_from: Option<&str>,
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
    match problems.keep(PostgresDocumentStore::new_read_from(
        &dsn,
        schema.as_deref(),
        dsn_read_from,
    )) {
        Some(store) => problems.into_result(store),
        None => Err(problems),
    }
}

/// Where the built-in `PostgresDocumentStore` of the config `table` (references resolved) keeps its
/// documents: its dsn's `host:port/database` and its schema, never the password. `None` for another
/// class, or a table that does not read.
pub fn postgres_place(class: &str, table: &ConfigTable) -> Option<(String, String)> {
    if class != agent_env_store_postgres::CLASS {
        return None;
    }
    let text = |key: &str| table.get(key).and_then(serde_json::Value::as_str);
    agent_env_store_postgres::place(text("dsn")?, text("schema"))
}

/// A setting `S3ObjectStore` takes from an AWS variable, since its table leaves it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromEnvironment {
    /// The setting, as its table would name it (`access_key_id`).
    pub key: &'static str,
    /// The variable it comes from (`AWS_ACCESS_KEY_ID`).
    pub variable: &'static str,
    /// The variable's value, as it is: the caller masks it.
    pub value: String,
}

/// The settings the AWS variables give the built-in `S3ObjectStore` where `written` (whether its
/// table, as written, sets a key) leaves them out: the ones `S3Settings::from_table` reads, in its
/// order (an empty variable is no value). A key pair comes from the environment whole or not at all
/// (half a pair is a problem the store names), and the session token only with it. Which store a
/// config selects is [`super::from_spec::settings_from_environment`]'s to tell.
pub fn s3_settings_from_environment(
    written: &dyn Fn(&str) -> bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<FromEnvironment> {
    let set = |variable: &'static str| env(variable).filter(|v| !v.is_empty());
    let first = |key: &'static str, variables: &[&'static str]| {
        variables.iter().find_map(|variable| {
            set(variable).map(|value| FromEnvironment {
                key,
                variable,
                value,
            })
        })
    };
    let mut found = Vec::new();
    if !written("region") {
        found.extend(first("region", &["AWS_REGION", "AWS_DEFAULT_REGION"]));
    }
    if !written("endpoint") {
        found.extend(first(
            "endpoint",
            &["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"],
        ));
    }
    if !written("access_key_id") && !written("secret_access_key") {
        let key = first("access_key_id", &["AWS_ACCESS_KEY_ID"]);
        let secret = first("secret_access_key", &["AWS_SECRET_ACCESS_KEY"]);
        if let (Some(key), Some(secret)) = (key, secret) {
            found.push(key);
            found.push(secret);
            if !written("session_token") {
                found.extend(first("session_token", &["AWS_SESSION_TOKEN"]));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn said(
        table: &[&str],
        env: &'static [(&'static str, &'static str)],
    ) -> Vec<(&'static str, &'static str)> {
        s3_settings_from_environment(&|key| table.contains(&key), &env_of(env))
            .into_iter()
            .map(|f| (f.key, f.variable))
            .collect()
    }

    const ALL: &[(&str, &str)] = &[
        ("AWS_ACCESS_KEY_ID", "AK"),
        ("AWS_SECRET_ACCESS_KEY", "SK"),
        ("AWS_SESSION_TOKEN", "TOK"),
        ("AWS_REGION", ""),
        ("AWS_DEFAULT_REGION", "eu-west-3"),
        ("AWS_ENDPOINT_URL", "http://127.0.0.1:9000"),
    ];

    #[test]
    fn what_the_table_leaves_out_is_said_with_its_variable() {
        assert_eq!(
            said(&["bucket"], ALL),
            [
                ("region", "AWS_DEFAULT_REGION"),
                ("endpoint", "AWS_ENDPOINT_URL"),
                ("access_key_id", "AWS_ACCESS_KEY_ID"),
                ("secret_access_key", "AWS_SECRET_ACCESS_KEY"),
                ("session_token", "AWS_SESSION_TOKEN"),
            ]
        );
        // What the table sets is its own; a key pair in the table takes no token from the environment.
        assert_eq!(
            said(
                &["bucket", "region", "access_key_id", "secret_access_key"],
                ALL
            ),
            [("endpoint", "AWS_ENDPOINT_URL")]
        );
        // Half a pair in the environment gives no credentials.
        assert_eq!(said(&["bucket"], &[("AWS_ACCESS_KEY_ID", "AK")]), []);
    }

    #[test]
    fn what_is_said_is_what_the_store_reads() {
        let table = serde_json::json!({"bucket": "b"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let env = env_of(ALL);
        let settings = S3Settings::from_table(&table, &env).unwrap();
        let said = s3_settings_from_environment(&|key| table.contains_key(key), &env);
        let value = |key: &str| {
            said.iter()
                .find(|f| f.key == key)
                .map(|f| f.value.clone())
                .unwrap()
        };
        assert_eq!(value("region"), settings.region);
        assert_eq!(value("endpoint"), settings.endpoint);
        let credentials = settings.credentials.unwrap();
        assert_eq!(value("access_key_id"), credentials.access_key_id);
        assert_eq!(value("secret_access_key"), credentials.secret_access_key);
        assert_eq!(Some(value("session_token")), credentials.session_token);
    }

    /// Credentials from the AWS variables are masked as the table's own would be.
    #[test]
    fn the_secret_key_from_the_environment_is_masked() {
        let secret = "0db120ee80f83dc0462d571691d163a703d9daee";
        let token = "FwoGZXIvYXdzEXAMPLEtokenValue1234";
        let env = Environment::from_vars(
            [
                ("AWS_ACCESS_KEY_ID", "agentenvtest"),
                ("AWS_SECRET_ACCESS_KEY", secret),
                ("AWS_SESSION_TOKEN", token),
            ],
            std::path::Path::new("/"),
        );
        let mut table = ConfigTable::new();
        table.insert("bucket".into(), "team".into());
        table.insert("endpoint".into(), "http://127.0.0.1:1".into());
        table.insert("region".into(), "us-east-1".into());
        let _store = s3_store("S3ObjectStore", &table, &env, &|_| None);
        let shown = crate::redaction::redact(&format!("k={secret} t={token}")).into_owned();
        assert!(!shown.contains(secret) && !shown.contains(token), "{shown}");
    }
}
