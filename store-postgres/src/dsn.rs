//! The `dsn` setting: parsed once, checked for what this build supports, and shown in messages as
//! `host:port/database`, never with its password.

use std::str::FromStr;
use std::time::Duration;

use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::Config;

use agent_env_store::error::{StoreError, StoreResult};

use crate::CLASS;

/// How long connecting (the TCP connect, the startup and the login) may take before the server counts
/// as unreachable, unless the dsn sets `connect_timeout`.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A parsed DSN and how messages name its server.
#[derive(Clone)]
pub struct Dsn {
    pub config: Config,
    /// `host:port/database`.
    pub shown: String,
}

impl std::fmt::Debug for Dsn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// The refusal of a dsn that asks for TLS.
fn no_tls(mode: &str) -> StoreError {
    StoreError::Config(format!(
        "{CLASS}: dsn asks for sslmode={mode}, and this build connects without TLS; reach the server over a trusted network (sslmode=disable or prefer) or through a TLS tunnel"
    ))
}

/// The `sslmode` a dsn asks for when it is one that verifies the server's certificate (`verify-ca`,
/// `verify-full`), which the client library does not even parse.
fn tls_mode_asked(text: &str) -> Option<String> {
    let at = text.find("sslmode=")? + "sslmode=".len();
    let mode: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    mode.starts_with("verify-").then_some(mode)
}

impl Dsn {
    /// Parses a `postgres://user:password@host:port/database` URL or a `key=value` string.
    pub fn parse(text: &str) -> StoreResult<Dsn> {
        if let Some(mode) = tls_mode_asked(text) {
            return Err(no_tls(&mode));
        }
        let mut config = Config::from_str(text).map_err(|e| {
            StoreError::Config(format!(
                "{CLASS}: dsn does not parse ({}); write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE, with the password through a reference such as dsn = \"env:TEAM_PG_DSN\" (not an AGENT_ENV_ name: plugins get those)",
                without_secrets(&e.to_string(), text)
            ))
        })?;
        if config.get_ssl_mode() == SslMode::Require {
            return Err(no_tls("require"));
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let host = match config.get_hosts().first() {
            Some(Host::Tcp(name)) => name.clone(),
            #[cfg(unix)]
            Some(Host::Unix(path)) => path.display().to_string(),
            None => "localhost".to_string(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let database = config
            .get_dbname()
            .or(config.get_user())
            .unwrap_or("postgres")
            .to_string();
        Ok(Dsn {
            shown: format!("{host}:{port}/{database}"),
            config,
        })
    }
}

/// A parser message with the DSN's password cut out, should the message quote it.
fn without_secrets(message: &str, dsn: &str) -> String {
    let mut out = message.to_string();
    if let Some(password) = url_password(dsn) {
        if !password.is_empty() {
            out = out.replace(password, "***");
        }
    }
    out
}

fn url_password(dsn: &str) -> Option<&str> {
    let rest = dsn.split_once("://")?.1;
    let userinfo = rest.split_once('@')?.0;
    Some(userinfo.split_once(':')?.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dsn_is_shown_without_its_password() {
        let dsn = Dsn::parse("postgres://team:s3cret@db.example.test:6543/agents").unwrap();
        assert_eq!(dsn.shown, "db.example.test:6543/agents");
        assert!(!format!("{dsn:?}").contains("s3cret"));
    }

    #[test]
    fn a_bad_dsn_says_how_to_write_one() {
        let err = Dsn::parse("postgres://team:s3cret@host:notaport/db").unwrap_err();
        assert!(matches!(err, StoreError::Config(_)));
        let text = err.to_string();
        assert!(
            text.starts_with("PostgresDocumentStore: dsn does not parse ("),
            "{text}"
        );
        assert!(!text.contains("s3cret"), "{text}");
        let err = Dsn::parse("postgres://h/db?sslmode=require").unwrap_err();
        assert!(err.to_string().contains("sslmode=require"), "{err}");
    }

    /// A managed server's dsn asks for a verified certificate: that is refused as TLS, not as a dsn
    /// that does not parse.
    #[test]
    fn a_dsn_asking_to_verify_the_server_is_refused_for_tls() {
        for (dsn, mode) in [
            (
                "postgres://u:p@h:5432/db?sslmode=verify-full",
                "verify-full",
            ),
            ("host=h dbname=db sslmode=verify-ca user=u", "verify-ca"),
        ] {
            let err = Dsn::parse(dsn).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!(
                    "PostgresDocumentStore: dsn asks for sslmode={mode}, and this build connects without TLS"
                )),
                "{err}"
            );
        }
        assert!(Dsn::parse("postgres://u:p@h/db?sslmode=prefer").is_ok());
    }
}
