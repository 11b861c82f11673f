//! The `[explorer]` table `agent-env up` reads (and `config check` checks): `port`,
//! `allowed_hosts`, `cors_origins` (`static_dir` is the original's and has no use here: the UI is
//! built in), and ours for explorer plugins: `plugin_timeout_seconds` (how long a plugin may take to
//! answer one request before the client gets 504) and `plugin_idle_seconds` (how long an explorer
//! plugin's process stays up without a request); and `store_retry_seconds` (how long the explorer
//! waits before it tries again a configured document store it could not read). `env:` references
//! resolve; `secret:` ones are refused, as none of these keys is a secret.

use super::references::resolve_table_at;
use super::tables::table_at;
use super::{ConfigDocument, ConfigError};
use std::time::Duration;

use toml::Value;

/// The port the original listens on, and ours when neither `--port` nor `[explorer] port` says.
pub const DEFAULT_PORT: u16 = 8234;

/// How long an explorer plugin may take to answer one request, unless `plugin_timeout_seconds` says.
pub const DEFAULT_PLUGIN_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an explorer plugin's process stays up without a request, unless `plugin_idle_seconds` says.
pub const DEFAULT_PLUGIN_IDLE: Duration = Duration::from_secs(300);
/// How long the explorer waits before it tries again a configured document store it could not read,
/// unless `store_retry_seconds` says.
pub const DEFAULT_STORE_RETRY: Duration = Duration::from_secs(30);

/// A problem in the `[explorer]` table.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("[explorer] port must be a whole number from 0 to 65535, 0 picking a free one (got {0}); fix it in the config, or pass --port")]
    Port(String),
    #[error("[explorer] {key} must be a number of seconds greater than 0 and at most 1000000000 (got {got}); fix it in the config")]
    Seconds { key: &'static str, got: String },
    #[error("[explorer] {key} must be a list of strings (got {got})")]
    NotAList { key: &'static str, got: String },
    #[error("[explorer] cors_origins cannot contain '*': the explorer has no auth, so any web page could drive it; list the origins that may call it, such as \"http://localhost:3000\"")]
    WildcardOrigin,
    #[error("[explorer] cors_origins cannot contain 'null': that is the origin of every sandboxed frame and local file, so any of them could drive the explorer; list the origins that may call it, such as \"http://localhost:3000\"")]
    NullOrigin,
    #[error("[explorer] cors_origins has {origin:?}, which no browser sends as an origin: {why}; write scheme://host or scheme://host:port, such as \"http://localhost:3000\"")]
    BadOrigin { origin: String, why: &'static str },
    #[error("[explorer] allowed_hosts has {host:?}, which no request's Host can match: {why}; list host names such as \"explorer.internal\" (the port is not part of one)")]
    BadHost { host: String, why: &'static str },
}

/// Every problem `agent-env up` found in `[explorer]` (never none): it names them all at once, so
/// one start tells the user everything to fix.
#[derive(Debug, thiserror::Error)]
pub struct SettingsProblems(pub Vec<SettingsError>);

impl std::fmt::Display for SettingsProblems {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_slice() {
            [one] => write!(f, "{one}"),
            all => {
                write!(
                    f,
                    "the config's [explorer] table has {} problems; fix each of them:",
                    all.len()
                )?;
                for problem in all {
                    write!(f, "\n  - {problem}")?;
                }
                Ok(())
            }
        }
    }
}

impl SettingsError {
    /// The problem's code in `config check`'s report.
    pub fn code(&self) -> &'static str {
        match self {
            SettingsError::Config(e) => e.code(),
            _ => "config-invalid",
        }
    }
}

/// What the explorer reads from the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplorerSettings {
    /// `[explorer] port`, if set (the flag wins over it); 0 picks a free port.
    pub port: Option<u16>,
    /// Host names (lowercased) accepted besides the loopback names.
    pub allowed_hosts: Vec<String>,
    /// Origins allowed to call the API from another site.
    pub cors_origins: Vec<String>,
    /// How long an explorer plugin may take to answer one request (then 504).
    pub plugin_timeout: Duration,
    /// How long an explorer plugin's process stays up without a request.
    pub plugin_idle: Duration,
    /// How long a configured document store that could not be read is left out before a request
    /// tries it again.
    pub store_retry: Duration,
}

impl Default for ExplorerSettings {
    fn default() -> Self {
        ExplorerSettings {
            port: None,
            allowed_hosts: Vec::new(),
            cors_origins: Vec::new(),
            plugin_timeout: DEFAULT_PLUGIN_TIMEOUT,
            plugin_idle: DEFAULT_PLUGIN_IDLE,
            store_retry: DEFAULT_STORE_RETRY,
        }
    }
}

impl ExplorerSettings {
    /// Reads `[explorer]` from `doc` for `agent-env up`; an absent table is every default. A config
    /// that cannot be read is an error naming every problem: `up` would otherwise serve with settings
    /// the user did not mean. A `port_flag` (`--port`) replaces `port`, so a bad `port` is then no
    /// problem.
    pub fn from_config(
        doc: &ConfigDocument,
        port_flag: Option<u16>,
    ) -> Result<ExplorerSettings, SettingsProblems> {
        Self::read(doc, port_flag.is_some()).map_err(SettingsProblems)
    }

    /// Every problem `up` would find in `[explorer]`, each key read on its own (for `config check`).
    pub fn problems(doc: &ConfigDocument) -> Vec<SettingsError> {
        Self::read(doc, false).err().unwrap_or_default()
    }

    /// The settings, or every problem found (never an empty list); `port` is not read when
    /// `skip_port`.
    fn read(doc: &ConfigDocument, skip_port: bool) -> Result<ExplorerSettings, Vec<SettingsError>> {
        let table = doc.require().map_err(|e| vec![e.into()])?;
        let Some(explorer) = table_at(table, &["explorer"]).map_err(|e| vec![e.into()])? else {
            return Ok(ExplorerSettings::default());
        };
        let mut problems = Vec::new();
        let written: toml::Table = explorer
            .iter()
            .filter(|(key, _)| !(skip_port && key.as_str() == "port"))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        let explorer = resolve_each_key(&written, doc, &mut problems);
        let mut keep = |problem: SettingsError| problems.push(problem);
        let port = explorer
            .get("port")
            .and_then(|value| port_of(value).map_err(&mut keep).ok());
        let allowed_hosts = strings(&explorer, "allowed_hosts")
            .map_err(&mut keep)
            .unwrap_or_default()
            .iter()
            .filter_map(|h| host(h).map_err(&mut keep).ok())
            .collect();
        let cors_origins = strings(&explorer, "cors_origins")
            .map_err(&mut keep)
            .unwrap_or_default()
            .iter()
            .filter_map(|o| origin(o).map_err(&mut keep).ok())
            .collect();
        let plugin_timeout = seconds(&explorer, "plugin_timeout_seconds")
            .map_err(&mut keep)
            .ok()
            .flatten()
            .unwrap_or(DEFAULT_PLUGIN_TIMEOUT);
        let plugin_idle = seconds(&explorer, "plugin_idle_seconds")
            .map_err(&mut keep)
            .ok()
            .flatten()
            .unwrap_or(DEFAULT_PLUGIN_IDLE);
        let store_retry = seconds(&explorer, "store_retry_seconds")
            .map_err(&mut keep)
            .ok()
            .flatten()
            .unwrap_or(DEFAULT_STORE_RETRY);
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(ExplorerSettings {
            port,
            allowed_hosts,
            cors_origins,
            plugin_timeout,
            plugin_idle,
            store_retry,
        })
    }

    /// The port to listen on: the flag, else the config, else [`DEFAULT_PORT`].
    pub fn port(&self, flag: Option<u16>) -> u16 {
        flag.or(self.port).unwrap_or(DEFAULT_PORT)
    }
}

/// The table with each key's references resolved on its own, so one that does not resolve is a
/// problem of its own and the other keys are still read; the keys that failed are left out.
fn resolve_each_key(
    written: &toml::Table,
    doc: &ConfigDocument,
    problems: &mut Vec<SettingsError>,
) -> toml::Table {
    let mut resolved = toml::Table::new();
    for (key, value) in written {
        let one = toml::Table::from_iter([(key.clone(), value.clone())]);
        match resolve_table_at(&one, "explorer", &doc.env, None) {
            Ok(one) => resolved.extend(one),
            Err(e) => problems.push(no_secret_here(e).into()),
        }
    }
    resolved
}

/// A `secret:` reference here is refused by design, not for want of a secret store: said so.
fn no_secret_here(error: ConfigError) -> ConfigError {
    match error {
        ConfigError::At { place, source } => match *source {
            ConfigError::NoSecretStore { name } => ConfigError::At {
                place,
                source: Box::new(ConfigError::NoSecretHere { name }),
            },
            other => ConfigError::At {
                place,
                source: Box::new(other),
            },
        },
        ConfigError::NoSecretStore { name } => ConfigError::NoSecretHere { name },
        other => other,
    }
}

fn port_of(value: &Value) -> Result<u16, SettingsError> {
    let parsed = match value {
        Value::Integer(n) => u16::try_from(*n).ok(),
        Value::String(s) => s.trim().parse::<u16>().ok(),
        _ => None,
    };
    // 0 picks a free port, as `up --port 0` does: the listener binds it and the URL names the port.
    parsed.ok_or_else(|| SettingsError::Port(value.to_string()))
}

fn seconds(table: &toml::Table, key: &'static str) -> Result<Option<Duration>, SettingsError> {
    let Some(value) = table.get(key) else {
        return Ok(None);
    };
    // The same rule as the host's timeout variables.
    let text = match value {
        Value::Integer(n) => n.to_string(),
        Value::Float(f) => f.to_string(),
        Value::String(s) => s.clone(),
        _ => String::new(),
    };
    agent_env_host::parse_seconds(&text)
        .map(Some)
        .ok_or_else(|| SettingsError::Seconds {
            key,
            got: value.to_string(),
        })
}

/// A host as the explorer compares it: lowercased and without a port (`name:8234` means `name`), an
/// IPv6 address in brackets (one written bare, as `curl -H 'Host: ::1'` sends it, is given them).
/// It reads `[explorer] allowed_hosts` entries and, in the explorer, each request's `Host`, so the two
/// are compared in one form and an entry the config accepts is one a request can match.
pub fn host(written: &str) -> Result<String, SettingsError> {
    let host = written.trim().to_ascii_lowercase();
    let bad = |why| SettingsError::BadHost {
        host: written.to_string(),
        why,
    };
    if host.is_empty() {
        return Err(bad("it is empty"));
    }
    if host.contains('*') {
        return Err(bad(
            "patterns are not read, and allowing any host would let any web page drive the explorer",
        ));
    }
    if host.contains("://") || host.contains('/') || host.contains(char::is_whitespace) {
        return Err(bad(
            "a host is a name alone, with no scheme, path or spaces",
        ));
    }
    if !host.is_ascii() {
        return Err(bad(
            "a browser sends a name of other letters in its ASCII form (xn--…, punycode); write that",
        ));
    }
    // An IPv6 address in its one written form (`fd00:0:0::5` and `[FD00::5]` are `[fd00::5]`).
    let ipv6 = |inside: &str| {
        inside
            .parse::<std::net::Ipv6Addr>()
            .ok()
            .map(|address| format!("[{address}]"))
    };
    let port_ok = |port: &str| port.is_empty() || port.parse::<u16>().is_ok_and(|p| p > 0);
    if let Some(rest) = host.strip_prefix('[') {
        let Some((inside, after)) = rest.split_once(']') else {
            return Err(bad("its brackets do not close an IPv6 address"));
        };
        let Some(address) = ipv6(inside) else {
            return Err(bad("what its brackets hold is no IPv6 address"));
        };
        if !(after.is_empty() || after.strip_prefix(':').is_some_and(port_ok)) {
            return Err(bad(
                "what follows ']' is no :port (a number from 1 to 65535)",
            ));
        }
        return Ok(address);
    }
    if host.matches(':').count() > 1 {
        return ipv6(&host).ok_or_else(|| bad("it has several ':' and is no IPv6 address"));
    }
    let name = match host.split_once(':') {
        Some((_, port)) if !port_ok(port) => {
            return Err(bad(
                "what follows ':' is no port (a number from 1 to 65535)",
            ))
        }
        Some((name, _)) => name,
        None => host.as_str(),
    };
    // `localhost.` is `localhost` written as a fully qualified name: one host, one form.
    let name = name.strip_suffix('.').unwrap_or(name);
    if name.is_empty() {
        return Err(bad("it names no host before its port"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
    {
        return Err(bad(
            "a host name is letters, digits, '-', '.' and '_', or an IP address",
        ));
    }
    let labels: Vec<&str> = name.split('.').collect();
    if labels
        .iter()
        .any(|label| label.is_empty() || label.starts_with('-') || label.ends_with('-'))
    {
        return Err(bad(
            "each part of a host name between dots holds something and neither starts nor ends with '-'",
        ));
    }
    let numeric = |label: &&str| label.chars().all(|c| c.is_ascii_digit());
    if labels.iter().all(numeric) && name.parse::<std::net::Ipv4Addr>().is_err() {
        return Err(bad("it is no IPv4 address (four numbers from 0 to 255)"));
    }
    Ok(name.to_string())
}

/// A `cors_origins` entry as a browser sends it in `Origin`: `scheme://host[:port]`, the scheme and host
/// lowercased, a default port (80 for http, 443 for https) and a trailing `/` left out. The explorer
/// reads a request's `Origin` with it too, so the two are compared in one form.
pub fn origin(written: &str) -> Result<String, SettingsError> {
    let trimmed = written.trim();
    if trimmed == "*" {
        return Err(SettingsError::WildcardOrigin);
    }
    if trimmed.eq_ignore_ascii_case("null") {
        return Err(SettingsError::NullOrigin);
    }
    let bad = |why| SettingsError::BadOrigin {
        origin: written.to_string(),
        why,
    };
    let Some((scheme, rest)) = trimmed.split_once("://") else {
        return Err(bad("it has no scheme (http:// or https://)"));
    };
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => "80",
        "https" => "443",
        _ => {
            return Err(bad(
                "the explorer lets in pages served over http or https only",
            ))
        }
    };
    // A browser's Origin never ends with '/': `https://dash.example/` means the same.
    let authority = rest.strip_suffix('/').unwrap_or(rest).to_ascii_lowercase();
    if authority.is_empty() {
        return Err(bad("it names no host"));
    }
    if authority.contains(['/', '?', '#', '@']) || authority.contains(char::is_whitespace) {
        return Err(bad("an origin has no path, query, user or spaces"));
    }
    if authority.contains('*') {
        return Err(bad(
            "patterns are not read (a browser sends its own host), and allowing any would let any such page drive the explorer; list each origin",
        ));
    }
    if !authority.is_ascii() {
        return Err(bad(
            "a browser sends a host of other letters in its ASCII form (xn--…, punycode); write that",
        ));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && !port.contains(']') => (host, Some(port)),
        _ => (authority.as_str(), None),
    };
    match port {
        Some(port) if !matches!(port.parse::<u16>(), Ok(1..)) => {
            Err(bad("what follows ':' is no port (a port is 1 to 65535)"))
        }
        Some(port) if port == default_port => Ok(format!("{scheme}://{host}")),
        Some(port) => Ok(format!("{scheme}://{host}:{port}")),
        None => Ok(format!("{scheme}://{host}")),
    }
}

fn strings(table: &toml::Table, key: &'static str) -> Result<Vec<String>, SettingsError> {
    match table.get(key) {
        None => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.trim().to_string()),
                other => Err(SettingsError::NotAList {
                    key,
                    got: other.to_string(),
                }),
            })
            .collect(),
        Some(other) => Err(SettingsError::NotAList {
            key,
            got: other.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn settings(text: &str) -> Result<ExplorerSettings, SettingsProblems> {
        ExplorerSettings::from_config(&ConfigDocument::from_text(text, Path::new("c.toml")), None)
    }

    #[test]
    fn no_table_is_every_default() {
        let s = settings("").unwrap();
        assert_eq!(s, ExplorerSettings::default());
        assert_eq!(s.port(None), DEFAULT_PORT);
        assert_eq!(s.port(Some(9)), 9);
    }

    #[test]
    fn the_flag_wins_over_the_config() {
        let s = settings("[explorer]\nport = 9100\n").unwrap();
        assert_eq!(s.port(None), 9100);
        // 0 picks a free port, as `up --port 0` does.
        assert_eq!(settings("[explorer]\nport = 0\n").unwrap().port(None), 0);
        assert_eq!(
            settings("[explorer]\nport = \"0\"\n").unwrap().port(None),
            0
        );
        assert_eq!(s.port(Some(9200)), 9200);
    }

    #[test]
    fn plugin_times_are_seconds() {
        let s = settings("[explorer]\nplugin_timeout_seconds = 1.5\nplugin_idle_seconds = '2'\n")
            .unwrap();
        assert_eq!(s.plugin_timeout, Duration::from_millis(1500));
        assert_eq!(s.plugin_idle, Duration::from_secs(2));
    }

    #[test]
    fn the_store_retry_is_seconds_with_a_default() {
        let s = settings("[explorer]\nstore_retry_seconds = 0.5\n").unwrap();
        assert_eq!(s.store_retry, Duration::from_millis(500));
        let s = settings("[explorer]\nport = 9100\n").unwrap();
        assert_eq!(s.store_retry, DEFAULT_STORE_RETRY);
        assert!(settings("[explorer]\nstore_retry_seconds = 0\n").is_err());
    }

    #[test]
    fn hosts_are_lowercased_and_origins_kept() {
        let s = settings(
            "[explorer]\nallowed_hosts = ['Explorer.Example.COM']\ncors_origins = 'http://a:1, http://b'\n",
        )
        .unwrap();
        assert_eq!(s.allowed_hosts, vec!["explorer.example.com"]);
        assert_eq!(s.cors_origins, vec!["http://a:1", "http://b"]);
    }

    #[test]
    fn a_wildcard_origin_and_a_bad_port_are_refused() {
        let e = settings("[explorer]\ncors_origins = ['*']\n").unwrap_err();
        assert!(e.to_string().contains("cannot contain '*'"), "{e}");
        let e = settings("[explorer]\ncors_origins = ['http://a', 'null']\n").unwrap_err();
        assert!(e.to_string().contains("cannot contain 'null'"), "{e}");
        let s = settings("[explorer]\ncors_origins = ['https://dash.example/']\n").unwrap();
        assert_eq!(s.cors_origins, ["https://dash.example"]);
        let e = settings("[explorer]\nport = 70000\n").unwrap_err();
        assert!(e.to_string().contains("got 70000"), "{e}");
        let e = settings("[explorer]\nport = -1\n").unwrap_err();
        assert!(e.to_string().contains("got -1"), "{e}");
        let e = settings("[explorer]\nplugin_timeout_seconds = 0\n").unwrap_err();
        assert!(
            e.to_string().contains("plugin_timeout_seconds must be"),
            "{e}"
        );
        let e = settings("[explorer]\nstore_retry_seconds = 2e9\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("store_retry_seconds must be a number of seconds greater than 0 and at most 1000000000 (got 2000000000.0)"),
            "{e}"
        );
        let e = settings("[explorer]\nallowed_hosts = [1]\n").unwrap_err();
        assert!(e.to_string().contains("list of strings"), "{e}");
    }

    #[test]
    fn origins_are_read_as_a_browser_sends_them_and_every_bad_one_is_named() {
        let s = settings(
            "[explorer]\ncors_origins = ['HTTPS://Dash.Example:443/', 'http://a.example:80', 'http://b.example:3000']\n",
        )
        .unwrap();
        assert_eq!(
            s.cors_origins,
            [
                "https://dash.example",
                "http://a.example",
                "http://b.example:3000"
            ]
        );
        let e = settings(
            "[explorer]\ncors_origins = ['https://a.example/path', 'not a url', 'ftp://x', '*', 'null', 'http://h:x', 'https://*.example', 'http://127.0.0.1:99999', 'https://é.example']\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("has 9 problems"), "{e}");
        for part in [
            "\"https://a.example/path\", which no browser sends as an origin: an origin has no path",
            "\"not a url\", which no browser sends as an origin: it has no scheme",
            "\"ftp://x\", which no browser sends as an origin: the explorer lets in pages served over http or https only",
            "cannot contain '*'",
            "cannot contain 'null'",
            "\"http://h:x\", which no browser sends as an origin: what follows ':' is no port",
            "\"https://*.example\", which no browser sends as an origin: patterns are not read",
            "\"http://127.0.0.1:99999\", which no browser sends as an origin: what follows ':' is no port",
            "\"https://é.example\", which no browser sends as an origin: a browser sends a host of other letters",
        ] {
            assert!(e.contains(part), "{part}\n{e}");
        }
    }

    #[test]
    fn allowed_hosts_are_names_without_a_port_and_every_bad_one_is_named() {
        let s = settings(
            "[explorer]\nallowed_hosts = ['Explorer.Internal', 'box:8234', '[::1]:8080', '::1', 'FD00::5', 'fd00:0:0::6', '[0:0:0:0:0:0:0:1]', 'Box.Local.', '10.0.0.7:80', 'host:']\n",
        )
        .unwrap();
        assert_eq!(
            s.allowed_hosts,
            [
                "explorer.internal",
                "box",
                "[::1]",
                "[::1]",
                "[fd00::5]",
                "[fd00::6]",
                "[::1]",
                "box.local",
                "10.0.0.7",
                "host"
            ]
        );
        let e =
            settings("[explorer]\nallowed_hosts = ['', '*', 'http://x', 'a:b', 'ééé.example']\n")
                .unwrap_err()
                .to_string();
        assert!(e.contains("has 5 problems"), "{e}");
        for part in [
            "\"\", which no request's Host can match: it is empty",
            "\"*\", which no request's Host can match: patterns are not read",
            "\"http://x\", which no request's Host can match: a host is a name alone",
            "\"a:b\", which no request's Host can match: what follows ':' is no port",
            "\"ééé.example\", which no request's Host can match: a browser sends a name of other letters",
        ] {
            assert!(e.contains(part), "{part}\n{e}");
        }
    }

    #[test]
    fn an_allowed_host_no_request_could_send_is_refused_by_the_rules_the_guard_reads_hosts_by() {
        let e = settings(
            "[explorer]\nallowed_hosts = ['a!b.example', '[zz]', '[::1]x', ':80', 'x:y:z', 'host:99999', 'host:0', '1.2.3.4.5', '-foo', 'foo..bar']\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("has 10 problems"), "{e}");
        for part in [
            "\"host:99999\", which no request's Host can match: what follows ':' is no port (a number from 1 to 65535)",
            "\"host:0\", which no request's Host can match: what follows ':' is no port",
            "\"1.2.3.4.5\", which no request's Host can match: it is no IPv4 address",
            "\"-foo\", which no request's Host can match: each part of a host name between dots holds something",
            "\"foo..bar\", which no request's Host can match: each part of a host name",
            "\"a!b.example\", which no request's Host can match: a host name is letters, digits",
            "\"[zz]\", which no request's Host can match: what its brackets hold is no IPv6 address",
            "\"[::1]x\", which no request's Host can match: what follows ']' is no :port",
            "\":80\", which no request's Host can match: it names no host before its port",
            "\"x:y:z\", which no request's Host can match: it has several ':' and is no IPv6 address",
        ] {
            assert!(e.contains(part), "{part}\n{e}");
        }
    }

    #[test]
    fn an_explorer_key_that_is_not_a_table_is_refused() {
        let e = settings("explorer = 5\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "config.toml [explorer] must be a table, got int"
        );
    }

    #[test]
    fn up_names_every_problem_and_the_port_flag_replaces_a_bad_port() {
        let text =
            "[explorer]\nport = 'env:NOPE'\ncors_origins = ['*']\nplugin_idle_seconds = -1\n";
        let doc = ConfigDocument::from_text(text, Path::new("c.toml"));
        let e = ExplorerSettings::from_config(&doc, None).unwrap_err();
        assert_eq!(e.0.len(), 3, "{e}");
        let shown = e.to_string();
        assert!(
            shown.starts_with("the config's [explorer] table has 3 problems; fix each of them:\n  - [explorer] port: Unresolved env:NOPE"),
            "{shown}"
        );
        assert_eq!(shown.lines().count(), 4, "{shown}");
        let e = ExplorerSettings::from_config(&doc, Some(9000)).unwrap_err();
        assert_eq!(e.0.len(), 2, "the flag replaces the port: {e}");
        let only_port = ConfigDocument::from_text("[explorer]\nport = 'x'\n", Path::new("c.toml"));
        let s = ExplorerSettings::from_config(&only_port, Some(9000)).unwrap();
        assert_eq!(s.port(Some(9000)), 9000);
        // One problem reads as itself.
        let e = ExplorerSettings::from_config(&only_port, None).unwrap_err();
        assert!(e.to_string().starts_with("[explorer] port must be"), "{e}");
    }

    #[test]
    fn every_problem_is_found_at_once() {
        let doc = ConfigDocument::from_text(
            "[explorer]\nport = 70000\ncors_origins = ['*']\nplugin_idle_seconds = -1\n",
            Path::new("c.toml"),
        );
        let found: Vec<String> = ExplorerSettings::problems(&doc)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].contains("port"), "{found:?}");
        assert!(found[1].contains("cors_origins"), "{found:?}");
        assert!(found[2].contains("plugin_idle_seconds"), "{found:?}");
        // A reference that does not resolve is one problem; the other keys are still read.
        let doc = ConfigDocument::from_text(
            "[explorer]\nport = 'env:NOPE'\ncors_origins = ['*']\nallowed_hosts = 'secret:H'\n",
            Path::new("c.toml"),
        );
        let found: Vec<String> = ExplorerSettings::problems(&doc)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(
            found[0].starts_with("[explorer] port: Unresolved env:NOPE"),
            "{found:?}"
        );
        assert!(
            found[1].starts_with("[explorer] allowed_hosts: takes no secret: reference ('secret:H'): none of these settings is a secret"),
            "{found:?}"
        );
        assert!(
            found[2].starts_with("[explorer] cors_origins cannot contain '*'"),
            "{found:?}"
        );
        let clean = ConfigDocument::from_text("[explorer]\nport = 9\n", Path::new("c.toml"));
        assert!(ExplorerSettings::problems(&clean).is_empty());
    }
}
