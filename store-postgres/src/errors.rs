//! PostgreSQL's errors as store errors, each a sentence naming the store, the server and what to do.

use tokio_postgres::error::SqlState;

use agent_env_store::error::StoreError;

use crate::blocking::CallError;
use crate::CLASS;

/// The store error for a failure talking to the database at `shown` (`host:port/database`).
pub fn pg_error(shown: &str, err: &CallError) -> StoreError {
    connect_error(shown, None, err)
}

/// As [`pg_error`], for a failure to connect: a server that cannot be reached or does not answer, a
/// refused login or a missing database, which the dsn may need to fix, says where the dsn was read
/// from (`dsn_read_from`, such as `the environment variable TEAM_PG_DSN`), so the user knows which
/// value to fix. It names the place, never the value.
pub fn connect_error(shown: &str, dsn_read_from: Option<&str>, err: &CallError) -> StoreError {
    let dsn = match dsn_read_from {
        Some(from) => Dsn {
            setting: format!("dsn (read from {from})"),
            host_and_port: format!("the host and port in dsn (read from {from})"),
        },
        None => Dsn {
            setting: "dsn".to_string(),
            host_and_port: "the dsn's host and port".to_string(),
        },
    };
    match err {
        CallError::Postgres(e) => postgres_error(shown, &dsn, e),
        CallError::TimedOut(limit) => io(format!(
            "{CLASS}: {shown} did not answer within {} s; is the server running and not paused or overloaded, and is {} a PostgreSQL server's?",
            limit.as_secs(),
            dsn.host_and_port
        )),
    }
}

/// How a message names the dsn in what to fix.
struct Dsn {
    /// `dsn`, or `dsn (read from …)`.
    setting: String,
    /// `the dsn's host and port`, or `the host and port in dsn (read from …)`.
    host_and_port: String,
}

fn postgres_error(shown: &str, dsn: &Dsn, err: &tokio_postgres::Error) -> StoreError {
    let Some(db) = err.as_db_error() else {
        if err.is_closed() {
            return io(format!(
                "{CLASS}: the connection to {shown} closed ({err}); is the server still running?"
            ));
        }
        return io(format!(
            "{CLASS} could not reach {shown} ({}); is the server running and reachable, and is {} right?",
            source_text(err),
            dsn.host_and_port
        ));
    };
    let code = db.code();
    if *code == SqlState::UNIQUE_VIOLATION {
        return StoreError::DuplicateKey(format!("duplicate key: {}", db.message()));
    }
    if *code == SqlState::UNTRANSLATABLE_CHARACTER || *code == SqlState::CHARACTER_NOT_IN_REPERTOIRE
    {
        return StoreError::InvalidValue(format!(
            "{CLASS} cannot keep this document: PostgreSQL's jsonb holds no NUL character (\\u0000) in a string ({})",
            db.message()
        ));
    }
    if *code == SqlState::INVALID_PASSWORD || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
    {
        return StoreError::Config(format!(
            "{CLASS}: {shown} refused the login ({}); check the user and password in {}",
            db.message(),
            dsn.setting
        ));
    }
    if *code == SqlState::INVALID_CATALOG_NAME {
        return StoreError::Config(format!(
            "{CLASS}: {shown} has no such database ({}); create it (createdb) or name an existing one in {}",
            db.message(),
            dsn.setting
        ));
    }
    if *code == SqlState::INSUFFICIENT_PRIVILEGE {
        return StoreError::Config(format!(
            "{CLASS}: {shown} refused ({}); the dsn's user needs to create tables in its schema and to read and write the store's tables there (for tables another user made, that takes GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES and GRANT USAGE ON ALL SEQUENCES in the schema); `agent-env config check` names what is missing",
            db.message()
        ));
    }
    if [
        SqlState::ADMIN_SHUTDOWN,
        SqlState::CRASH_SHUTDOWN,
        SqlState::CANNOT_CONNECT_NOW,
    ]
    .contains(code)
    {
        return io(format!(
            "{CLASS}: {shown} closed the connection while it restarted or shut down ({}, {}); run the command again once the server is up",
            db.message(),
            code.code()
        ));
    }
    io(format!(
        "{CLASS}: {shown}: {} ({})",
        db.message(),
        code.code()
    ))
}

fn source_text(err: &tokio_postgres::Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}

/// The store error when no runtime could be started for the client.
pub fn runtime_error(shown: &str, err: &std::io::Error) -> StoreError {
    io(format!(
        "{CLASS} could not start its client for {shown} ({err}); the process may be out of threads or file descriptors (see ulimit -u and ulimit -n)"
    ))
}

fn io(message: String) -> StoreError {
    StoreError::Io {
        message,
        raw_os_error: None,
    }
}

/// Whether the error is a unique-index violation.
pub fn is_unique_violation(err: &CallError) -> bool {
    matches!(err, CallError::Postgres(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION))
}
