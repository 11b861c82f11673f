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

/// The refusal of a dsn (`named` as [`named`] says) that asks for TLS.
fn no_tls(named: &str, mode: &str) -> StoreError {
    StoreError::Config(format!(
        "{CLASS}: {named} asks for sslmode={mode}, and this build connects without TLS; reach the server over a trusted network (sslmode=disable or prefer) or through a TLS tunnel"
    ))
}

/// How messages name the dsn: `dsn`, or `dsn (read from the environment variable TEAM_PG_DSN)` when
/// the config file names it by a reference, so the user knows which value to fix.
fn named(read_from: Option<&str>) -> String {
    match read_from {
        Some(from) => format!("dsn (read from {from})"),
        None => "dsn".to_string(),
    }
}

/// What a dsn that does not parse is told to write: a literal one, how to write one and to keep its
/// password out of the file; one read through a reference, to set what it was read from.
fn how_to_write(read_from: Option<&str>) -> String {
    match read_from {
        Some(from) => format!(
            "set {from} to a dsn written as postgres://USER:PASSWORD@HOST:PORT/DATABASE"
        ),
        None => "write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE, with the password through a reference such as dsn = \"env:TEAM_PG_DSN\" (not an AGENT_ENV_ name: plugins get those)".to_string(),
    }
}

/// The scheme of a URL dsn that is not PostgreSQL's (`mysql://`): the client library would read the
/// text as `key=value` pairs and fail on what follows. Only the scheme is quoted, never the rest.
fn other_scheme(text: &str) -> Option<&str> {
    let (scheme, _) = text.trim_start().split_once("://")?;
    let is_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let postgres = matches!(scheme, "postgres" | "postgresql");
    (is_scheme && !postgres).then_some(&text.trim_start()[..scheme.len() + 3])
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
        Dsn::parse_read_from(text, None)
    }

    /// As [`Dsn::parse`], for a dsn the config file names by a reference that read it from
    /// `read_from` (`the environment variable TEAM_PG_DSN`): a dsn that does not parse names that
    /// place as the one to fix, never the value, and is not told to use a reference it already uses.
    pub fn parse_read_from(text: &str, read_from: Option<&str>) -> StoreResult<Dsn> {
        let named = named(read_from);
        if text.trim().is_empty() {
            return Err(StoreError::Config(format!(
                "{CLASS}: {named} is empty; {}",
                how_to_write(read_from)
            )));
        }
        if let Some(start) = misspelled_scheme(text) {
            return Err(StoreError::Config(format!(
                "{CLASS}: {named} does not parse (a URL dsn starts with postgres:// or postgresql://, the scheme, ':' and '//', got '{start}'); {}",
                how_to_write(read_from)
            )));
        }
        if let Some(scheme) = other_scheme(text) {
            return Err(StoreError::Config(format!(
                "{CLASS}: {named} does not parse (a dsn starts with postgres:// or postgresql://, or is key=value pairs such as host=HOST dbname=DATABASE, got '{scheme}'); {}",
                how_to_write(read_from)
            )));
        }
        if let Some(mode) = tls_mode_asked(text) {
            return Err(no_tls(&named, &mode));
        }
        let does_not_parse = |what: &str| {
            StoreError::Config(format!(
                "{CLASS}: {named} does not parse ({what}); {}{}",
                how_to_write(read_from),
                encoding_hint(text)
            ))
        };
        let mut config =
            Config::from_str(text).map_err(|e| does_not_parse(&what_does_not_parse(&e, text)))?;
        if config.get_ports().contains(&0) {
            return Err(does_not_parse(PORT_OUT_OF_RANGE));
        }
        if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
            return Err(StoreError::Config(format!(
                "{CLASS}: {named} names no host; {}",
                how_to_write(read_from)
            )));
        }
        if unencoded_credentials(text, &config) {
            return Err(StoreError::Config(format!(
                "{CLASS}: {named} does not parse as a URL: its user name or password holds an @, /, ? or # that is not percent-encoded{ENCODE_HINT}"
            )));
        }
        if config.get_ssl_mode() == SslMode::Require {
            return Err(no_tls(&named, "require"));
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

/// What the client library found wrong with a dsn, said as the part to fix: its own error is only
/// "invalid connection string", with the option it stopped at as the cause (`invalid value for
/// option `port``, `unknown option `foo``), which never quotes a value.
/// What parts of the message come from the dsn or the client (the option's name, the client's own
/// text) have the dsn's password masked where it stands as a word of its own; the rest is this
/// store's own text, which quotes nothing of the dsn and is never masked.
fn what_does_not_parse(e: &tokio_postgres::Error, text: &str) -> String {
    let client = |quoted: &str| without_password(quoted, text);
    let Some(cause) = std::error::Error::source(e).map(ToString::to_string) else {
        return client(&e.to_string());
    };
    let quoted = |prefix: &str| {
        cause
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix('`'))
            .map(str::to_string)
    };
    if let Some(option) = quoted("invalid value for option `") {
        return match option.as_str() {
            "port" => PORT_OUT_OF_RANGE.to_string(),
            "host" => "its host is not written as HOST, HOST:PORT or [IPv6]:PORT".to_string(),
            "connect_timeout"
            | "tcp_user_timeout"
            | "keepalives_idle"
            | "keepalives_interval"
            | "keepalives_retries" => {
                format!("its {option} is not a whole number")
            }
            _ => format!("its {} is not a value the client takes", client(&option)),
        };
    }
    if let Some(option) = quoted("unknown option `") {
        return format!(
            "it names the option '{}', which the client does not take; it takes {}",
            client(&option),
            OPTIONS_TAKEN.join(", ")
        );
    }
    client(&format!("{e}: {cause}"))
}

/// What a dsn whose port is 0 or past 65535 is told.
const PORT_OUT_OF_RANGE: &str = "its port is not a number from 1 to 65535";

/// The start of a dsn that means a PostgreSQL URL but misspells what follows the scheme
/// (`postgres//u@h/db`, `postgresql:/h`): the scheme and the `:` and `/` after it, nothing more.
fn misspelled_scheme(text: &str) -> Option<&str> {
    let text = text.trim_start();
    let scheme = ["postgresql", "postgres"].into_iter().find(|scheme| {
        text.get(..scheme.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(scheme))
    })?;
    let rest = &text[scheme.len()..];
    if rest.starts_with("://") || !rest.starts_with([':', '/']) {
        return None;
    }
    let marks = rest.len() - rest.trim_start_matches([':', '/']).len();
    Some(&text[..scheme.len() + marks])
}

/// The options a dsn may set besides the user, password, host, port and database.
const OPTIONS_TAKEN: [&str; 14] = [
    "application_name",
    "options",
    "sslmode",
    "sslnegotiation",
    "hostaddr",
    "connect_timeout",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
];

/// How to write a password with special characters in a URL, for a DSN that seems to hold one.
const ENCODE_HINT: &str = "; percent-encode the special characters of the password in the dsn: @ as %40, / as %2F, : as %3A, ? as %3F, # as %23, % as %25 and a space as %20 (in Python: urllib.parse.quote(password, safe=''))";

/// [`ENCODE_HINT`] when `text` is a URL whose part before its last `@` (the user and password, unless
/// a character of the password cut it short) holds a character a URL's password must percent-encode:
/// `@`, `/`, `?`, `#`, or a `%` that starts no escape. Nothing else of the DSN is looked at.
fn encoding_hint(text: &str) -> &'static str {
    let Some((_, rest)) = text.split_once("://") else {
        return "";
    };
    let Some((userinfo, _)) = rest.rsplit_once('@') else {
        return "";
    };
    let bad_percent = userinfo.match_indices('%').any(|(at, _)| {
        let digits = userinfo.get(at + 1..at + 3).unwrap_or("");
        digits.len() != 2 || !digits.bytes().all(|b| b.is_ascii_hexdigit())
    });
    if bad_percent || userinfo.contains(['@', '/', '?', '#']) {
        ENCODE_HINT
    } else {
        ""
    }
}

/// Whether a URL dsn the client library parsed holds an `@`, `/`, `?` or `#` in its user name or
/// password as it is: the library takes everything up to the first `@` as the user and password, so a
/// `/` there passes (though every other reader of the URL, the masking of passwords in output among
/// them, ends the host at it), and an `@` in the password ends up in the host name.
fn unencoded_credentials(text: &str, config: &Config) -> bool {
    let Some((_, rest)) = text.split_once("://") else {
        return false;
    };
    let userinfo = rest.split_once('@').map_or("", |(userinfo, _)| userinfo);
    let host_holds_at = config
        .get_hosts()
        .iter()
        .any(|host| matches!(host, Host::Tcp(name) if name.contains('@')));
    // A URL holds one `@` as it is, the one ending its user and password: with an `@` and then a `/`
    // in the password, the rest of it is read as the database's name (and shown in messages).
    // (Before any `?`: a query's value may hold an `@`.)
    let before_query = rest.split('?').next().unwrap_or(rest);
    let more_than_one_at = before_query.matches('@').count() > 1;
    host_holds_at || more_than_one_at || userinfo.contains(['/', '?', '#'])
}

/// `message` (text quoted from the client or the dsn) with the dsn's password masked wherever it
/// stands as a word of its own: not inside a longer word, so a short or common password (`p`,
/// `postgres`) does not garble `port` or `postgres://`.
fn without_password(message: &str, dsn: &str) -> String {
    match url_password(dsn) {
        Some(password) if !password.is_empty() => mask_word(message, password),
        _ => message.to_string(),
    }
}

/// `text` with each occurrence of `word` that no letter, digit or `_` touches on either side replaced
/// by `***`.
fn mask_word(text: &str, word: &str) -> String {
    let touches = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (at, _) in text.match_indices(word) {
        let end = at + word.len();
        if at < copied
            || touches(text[..at].chars().next_back())
            || touches(text[end..].chars().next())
        {
            continue;
        }
        out.push_str(&text[copied..at]);
        out.push_str("***");
        copied = end;
    }
    out.push_str(&text[copied..]);
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

    /// The part of a dsn that does not parse is named (the port, an unknown option, a value that
    /// is not a number), never with the password.
    #[test]
    fn a_dsn_that_does_not_parse_names_the_part_to_fix() {
        for (dsn, part) in [
            (
                "postgres://team:s3cret@127.0.0.1:99999/db",
                "(its port is not a number from 1 to 65535)",
            ),
            (
                "postgres://team:s3cret@127.0.0.1:5432/db?foo=bar",
                "(it names the option 'foo', which the client does not take; it takes application_name, options, sslmode,",
            ),
            (
                "postgres://team:s3cret@127.0.0.1:5432/db?connect_timeout=abc",
                "(its connect_timeout is not a whole number)",
            ),
            (
                "host=h port=x user=team password=s3cret",
                "(its port is not a number from 1 to 65535)",
            ),
        ] {
            let err = Dsn::parse(dsn).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("PostgresDocumentStore: dsn does not parse {part}")),
                "{dsn}: {err}"
            );
            assert!(!err.contains("s3cret"), "{err}");
        }
    }

    /// A short or common password is masked only where it stands as a word of its own: the store's
    /// own words (`port`, `option`, `number`, `postgres://`) are never cut into.
    #[test]
    fn a_short_or_common_password_does_not_garble_the_message() {
        for (dsn, part) in [
            ("postgres://u:p@h:99999/db", "(its port is not a number from 1 to 65535)"),
            ("postgres://u:e@h:99999/db", "(its port is not a number from 1 to 65535)"),
            (
                "postgres://u:p@h:5432/db?foo=bar",
                "(it names the option 'foo', which the client does not take; it takes application_name, options,",
            ),
            (
                "postgres://postgres:postgres@h:99999/db",
                "(its port is not a number from 1 to 65535)",
            ),
        ] {
            let err = Dsn::parse(dsn).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("PostgresDocumentStore: dsn does not parse {part}")),
                "{dsn}: {err}"
            );
            assert!(err.contains("postgres://USER:PASSWORD@HOST:PORT/DATABASE"), "{err}");
            assert!(!err.contains("***"), "{dsn}: {err}");
        }
        assert_eq!(
            mask_word("bad p, and p2 or (p)", "p"),
            "bad ***, and p2 or (***)"
        );
    }

    /// An empty dsn, one that misspells what follows its scheme, and a port of 0 are refused as what
    /// they are, not passed to the client to fail on.
    #[test]
    fn an_empty_dsn_a_misspelled_scheme_and_port_0_are_refused() {
        let from = Some("the environment variable TEAM_PG_DSN");
        assert_eq!(
            Dsn::parse_read_from("", from).unwrap_err().to_string(),
            "PostgresDocumentStore: dsn (read from the environment variable TEAM_PG_DSN) is empty; set the environment variable TEAM_PG_DSN to a dsn written as postgres://USER:PASSWORD@HOST:PORT/DATABASE"
        );
        assert!(Dsn::parse("  ")
            .unwrap_err()
            .to_string()
            .starts_with("PostgresDocumentStore: dsn is empty; write it as postgres://"));
        for (dsn, start) in [
            ("postgres//u:pw@h/db", "postgres//"),
            ("postgresql:/h/db", "postgresql:/"),
            ("postgres:u@h/db", "postgres:"),
        ] {
            assert_eq!(
                Dsn::parse_read_from(dsn, from).unwrap_err().to_string(),
                format!("PostgresDocumentStore: dsn (read from the environment variable TEAM_PG_DSN) does not parse (a URL dsn starts with postgres:// or postgresql://, the scheme, ':' and '//', got '{start}'); set the environment variable TEAM_PG_DSN to a dsn written as postgres://USER:PASSWORD@HOST:PORT/DATABASE")
            );
        }
        for dsn in ["postgres://u:pw@h:0/db", "host=h port=0 user=u"] {
            assert!(
                Dsn::parse(dsn).unwrap_err().to_string().starts_with(
                    "PostgresDocumentStore: dsn does not parse (its port is not a number from 1 to 65535)"
                ),
                "{dsn}"
            );
        }
        assert!(Dsn::parse("postgres:///db")
            .unwrap_err()
            .to_string()
            .starts_with("PostgresDocumentStore: dsn names no host; write it as"));
    }

    /// A dsn read through a reference that does not parse names where it was read from as the place
    /// to fix, and is not told to use a reference: the advice a dsn written in the file gets.
    #[test]
    fn a_dsn_read_through_a_reference_that_does_not_parse_names_where_it_came_from() {
        let from = "the environment variable TEAM_PG_DSN";
        for (dsn, part) in [
            (
                "postgres://u:PW@127.0.0.1:99999/db",
                "(its port is not a number from 1 to 65535)",
            ),
            (
                "postgres://u:PW@127.0.0.1:5432/db?connect_timeout=abc",
                "(its connect_timeout is not a whole number)",
            ),
            (
                "postgres://u:PW@127.0.0.1:5432/db?foo=bar",
                "(it names the option 'foo', which the client does not take; it takes application_name,",
            ),
        ] {
            let err = Dsn::parse_read_from(dsn, Some(from))
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(&format!(
                    "PostgresDocumentStore: dsn (read from the environment variable TEAM_PG_DSN) does not parse {part}"
                )),
                "{dsn}: {err}"
            );
            assert!(
                err.ends_with("; set the environment variable TEAM_PG_DSN to a dsn written as postgres://USER:PASSWORD@HOST:PORT/DATABASE"),
                "{dsn}: {err}"
            );
            assert!(!err.contains("PW") && !err.contains("env:"), "{dsn}: {err}");
        }
        // Written in the file, it is still told to keep the password out of it.
        let err = Dsn::parse("postgres://u:PW@127.0.0.1:99999/db")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("through a reference such as dsn = \"env:TEAM_PG_DSN\""),
            "{err}"
        );
    }

    /// A URL of another database says which schemes a dsn starts with, quoting only the scheme.
    #[test]
    fn a_dsn_of_another_scheme_says_what_a_dsn_starts_with() {
        assert_eq!(
            Dsn::parse("mysql://x:hunter2@y/z").unwrap_err().to_string(),
            "PostgresDocumentStore: dsn does not parse (a dsn starts with postgres:// or postgresql://, or is key=value pairs such as host=HOST dbname=DATABASE, got 'mysql://'); write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE, with the password through a reference such as dsn = \"env:TEAM_PG_DSN\" (not an AGENT_ENV_ name: plugins get those)"
        );
        let err = Dsn::parse_read_from("mysql://x@y/z", Some("the secret pg of [stores.secret]"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "PostgresDocumentStore: dsn (read from the secret pg of [stores.secret]) does not parse (a dsn starts with postgres:// or postgresql://, or is key=value pairs such as host=HOST dbname=DATABASE, got 'mysql://'); set the secret pg of [stores.secret] to a dsn written as postgres://USER:PASSWORD@HOST:PORT/DATABASE"
        );
        // PostgreSQL's own schemes, and key=value pairs that hold a "://", are read as before.
        assert!(Dsn::parse("postgresql://u@h/db").is_ok());
        assert!(Dsn::parse("host=h dbname=db application_name=a://b").is_ok());
    }

    /// A password with characters a URL must percent-encode: the message says to encode them, and
    /// shows no part of the password.
    #[test]
    fn a_password_with_unencoded_special_characters_is_told_to_be_percent_encoded() {
        for dsn in [
            "postgres://special:p@ss:w/rd%41#e!x@127.0.0.1:5432/db",
            "postgres://special:pw@ss@127.0.0.1:5432/db",
            "postgresql://special:p/ss:w@127.0.0.1:5432/db",
            // An `@` then a `/`: the library reads the host as `pw` and the rest as the database.
            "postgres://qa:Qa@pw/x:long1@127.0.0.1:5432/agentenv",
        ] {
            let err = Dsn::parse(dsn).unwrap_err().to_string();
            assert!(
                err.starts_with("PostgresDocumentStore: dsn does not parse"),
                "{dsn}: {err}"
            );
            assert!(
                err.contains("percent-encode the special characters of the password in the dsn: @ as %40, / as %2F"),
                "{dsn}: {err}"
            );
            for part in ["ss:w", "rd%41", "pw@ss", "p/ss", "long1"] {
                assert!(!err.contains(part), "{dsn}: {err}");
            }
        }
        // An `@` in the query is the query's.
        assert!(
            Dsn::parse("postgres://qa:SecretPass99@127.0.0.1:1/db?application_name=me@host")
                .is_ok()
        );
        // Encoded, it parses; a dsn whose password holds no such character gets no hint.
        assert!(Dsn::parse(
            "postgres://special:p%40ss%3Aw%2Frd%2541%23%C3%A9%21x@127.0.0.1:5432/db"
        )
        .is_ok());
        let err = Dsn::parse("postgres://team:s3cret@host:notaport/db")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("percent-encode"), "{err}");
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
