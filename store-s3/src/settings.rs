//! What `[stores.object] impl = "S3ObjectStore"` is configured with, read from its config table (references
//! already resolved) and, where the table is silent, from the standard AWS environment variables.

use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value};

use agent_env_store::grant::{check_grant_lifetime_setting, DEFAULT_GRANT_LIFETIME_SECONDS};
use agent_env_store::SettingsProblems;

/// The class name, as `[stores.object] impl` names it.
pub const CLASS: &str = "S3ObjectStore";
/// The table its keys are written in, as messages name it (`[stores.object.config] endpoint`).
pub const TABLE: &str = "[stores.object.config]";
/// The keys its config table takes.
pub const CONFIG_KEYS: [&str; 10] = [
    "bucket",
    "region",
    "endpoint",
    "path_style",
    "access_key_id",
    "secret_access_key",
    "session_token",
    "share_credentials",
    "grant_lifetime_seconds",
    "timeout_seconds",
];
/// How long the server may keep a call waiting, unless `timeout_seconds` says: to take a request, to
/// start answering it, and, in the middle of a body, to move the next byte. A server that accepts the
/// connection and then says nothing (paused, overloaded, not S3), or stops halfway through a body,
/// fails the call instead of hanging it; a large body that keeps moving, however slowly, has no limit.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 120;
/// The keys its config table must hold.
pub const REQUIRED_KEYS: [&str; 1] = ["bucket"];
/// The longest a SigV4 presigned URL may live: 7 days.
pub const MAX_GRANT_LIFETIME_SECONDS: u64 = 604_800;
/// The region requests are signed for when neither the table nor the environment names one.
pub const DEFAULT_REGION: &str = "us-east-1";

/// An access key pair, and the session token of temporary credentials. `Debug` never shows the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Credentials {
    /// `AWS_ACCESS_KEY_ID`.
    pub access_key_id: String,
    /// `AWS_SECRET_ACCESS_KEY`.
    pub secret_access_key: String,
    /// `AWS_SESSION_TOKEN`, for temporary credentials.
    pub session_token: Option<String>,
}

impl fmt::Debug for S3Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<hidden>")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<hidden>"),
            )
            .finish()
    }
}

/// Everything the store needs to reach its bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Settings {
    /// The bucket's name.
    pub bucket: String,
    /// The region requests are signed for.
    pub region: String,
    /// The server: `https://s3.<region>.amazonaws.com` unless configured (an S3-compatible server).
    pub endpoint: String,
    /// Where `endpoint` came from, for what a server that cannot be reached is told to check.
    pub endpoint_from: EndpointFrom,
    /// Where the config file's reference read `bucket` from (`the environment variable S3_BUCKET`),
    /// when it names the bucket by one: what a bucket that does not exist names as the place to fix.
    pub bucket_read_from: Option<String>,
    /// Whether the bucket is a path segment (`<endpoint>/<bucket>/<key>`) rather than a host name. On by
    /// default for a configured endpoint, as S3-compatible servers expect.
    pub path_style: bool,
    /// How requests are signed; `None` sends them unsigned (a public bucket).
    pub credentials: Option<S3Credentials>,
    /// The original's `share_credentials`: read and checked; this build hands no credentials to
    /// workloads yet.
    pub share_credentials: bool,
    /// How long a grant lives when the caller names no lifetime.
    pub grant_lifetime: Duration,
    /// How long the server may keep a call waiting: to take a request, to start answering it, or to
    /// move the next byte of a body (a bound on each wait, not on a body's whole transfer).
    pub timeout: Duration,
}

impl S3Settings {
    /// Reads the settings from a config table whose keys are checked against [`CONFIG_KEYS`] by the
    /// caller (a missing `bucket` beside an unknown key that reads as its misspelling is left to that
    /// check to name, once; [`S3ObjectStore::new`](crate::S3ObjectStore::new) refuses settings
    /// without a bucket); `env` answers the AWS variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_SESSION_TOKEN`, `AWS_REGION`, `AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL_S3`,
    /// `AWS_ENDPOINT_URL`) the table leaves out. Each key is read on its own, so the error names every
    /// bad setting, each as `S3ObjectStore: <key> …`.
    pub fn from_table(
        table: &Map<String, Value>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<S3Settings, SettingsProblems> {
        S3Settings::from_table_read_from(table, env, &|_| None)
    }

    /// As [`S3Settings::from_table`], for a table some of whose keys the config file names by a
    /// reference: `read_from` answers, for a key, where its reference read it from (`the environment
    /// variable S3_ENDPOINT`), so that what an endpoint that cannot be reached or a bucket that does
    /// not exist is told to fix names that place, never the value.
    pub fn from_table_read_from(
        table: &Map<String, Value>,
        env: &dyn Fn(&str) -> Option<String>,
        read_from: &dyn Fn(&str) -> Option<String>,
    ) -> Result<S3Settings, SettingsProblems> {
        let mut problems = SettingsProblems::new();
        let mut read = |r: Result<(), String>| {
            if let Err(problem) = r {
                problems.push(format!("{CLASS}: {problem}"));
            }
        };
        let mut bucket = String::new();
        read(string(table, "bucket").and_then(|b| match b {
            // A misspelled `bucket` is named once, by the caller's check of the table's keys (with
            // its "did you mean 'bucket'"), not again as a bucket that is not set.
            None if misspelled_bucket(table) => Ok(()),
            None => Err("bucket is not set; name the bucket the store keeps its objects in, such as bucket = \"team-agent-env\"".to_string()),
            Some(b) if b.trim().is_empty() => Err(match read_from("bucket") {
                Some(place) => format!(
                    "bucket (read from {place}) must name a bucket, got an empty string; set {place} to the bucket's name"
                ),
                None => "bucket must name a bucket, got an empty string".to_string(),
            }),
            Some(b) => {
                bucket = b;
                Ok(())
            }
        }));
        let env_nonempty = |name: &str| env(name).filter(|v| !v.is_empty());
        let mut region = None;
        read(string(table, "region").map(|r| region = r));
        let region = region.unwrap_or_else(|| {
            env_nonempty("AWS_REGION")
                .or_else(|| env_nonempty("AWS_DEFAULT_REGION"))
                .unwrap_or_else(|| DEFAULT_REGION.to_string())
        });
        let mut configured_endpoint = None;
        read(string(table, "endpoint").map(|e| configured_endpoint = e));
        let from_variable = ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"]
            .into_iter()
            .find_map(|variable| env_nonempty(variable).map(|value| (variable, value)));
        let (configured_endpoint, endpoint_from) = match (configured_endpoint, from_variable) {
            (Some(endpoint), _) => match read_from("endpoint") {
                Some(place) => (Some(endpoint), EndpointFrom::Reference(place)),
                None => (Some(endpoint), EndpointFrom::Config),
            },
            (None, Some((variable, endpoint))) => {
                (Some(endpoint), EndpointFrom::Variable(variable))
            }
            (None, None) => (None, EndpointFrom::Default),
        };
        let mut path_style = None;
        read(boolean(table, "path_style").map(|p| path_style = p));
        let path_style = path_style.unwrap_or(configured_endpoint.is_some());
        let endpoint = configured_endpoint
            .unwrap_or_else(|| format!("https://s3.{region}.amazonaws.com"))
            .trim_end_matches('/')
            .to_string();
        read(
            check_endpoint(&endpoint, &endpoint_from)
                .and_then(|()| check_url_style(&endpoint, path_style)),
        );
        let credentials_read = credentials(table, &env_nonempty).unwrap_or_else(|found| {
            found.into_iter().for_each(|problem| read(Err(problem)));
            None
        });
        let grant_lifetime = match table.get("grant_lifetime_seconds") {
            None | Some(Value::Null) => DEFAULT_GRANT_LIFETIME_SECONDS,
            Some(value) => check_grant_lifetime_setting(value, MAX_GRANT_LIFETIME_SECONDS)
                .unwrap_or_else(|e| {
                    read(Err(e.to_string()));
                    DEFAULT_GRANT_LIFETIME_SECONDS
                }),
        };
        let timeout = match table.get("timeout_seconds") {
            None | Some(Value::Null) => DEFAULT_TIMEOUT_SECONDS,
            Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n >= 1) => {
                n.as_u64().unwrap_or(DEFAULT_TIMEOUT_SECONDS)
            }
            Some(other) => {
                read(Err(format!(
                    "timeout_seconds must be a whole number of seconds, at least 1, got {other}"
                )));
                DEFAULT_TIMEOUT_SECONDS
            }
        };
        let mut share_credentials = None;
        read(boolean(table, "share_credentials").map(|s| share_credentials = s));
        problems.into_result(S3Settings {
            bucket,
            region,
            endpoint,
            endpoint_from,
            bucket_read_from: read_from("bucket"),
            path_style,
            credentials: credentials_read,
            share_credentials: share_credentials.unwrap_or(false),
            grant_lifetime: Duration::from_secs(grant_lifetime),
            timeout: Duration::from_secs(timeout),
        })
    }
}

/// Where the endpoint came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointFrom {
    /// `[stores.object.config]`'s `endpoint`, written out.
    Config,
    /// `[stores.object.config]`'s `endpoint`, a reference that read it from this place (`the
    /// environment variable S3_ENDPOINT`, `the secret s3-endpoint of [stores.secret]`).
    Reference(String),
    /// This AWS variable (`AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`), the table naming none.
    Variable(&'static str),
    /// Neither: AWS's own endpoint for the region.
    Default,
}

impl EndpointFrom {
    /// Where a person changes the endpoint, as a message names it: `[stores.object.config]
    /// endpoint` (with where its reference read it from, when it is one), or `$AWS_ENDPOINT_URL` when
    /// it came from there.
    pub fn place(&self) -> String {
        match self {
            EndpointFrom::Variable(variable) => format!("${variable}"),
            EndpointFrom::Reference(from) => format!("{TABLE} endpoint (read from {from})"),
            EndpointFrom::Config | EndpointFrom::Default => format!("{TABLE} endpoint"),
        }
    }
}

/// How alike an unknown key must be to `bucket` to count as its misspelling: the likeness at which the
/// check of the table's keys says "did you mean 'bucket'".
const MEANT_LIKENESS: f64 = 0.75;

/// Whether the table has no `bucket` but a key that is not one of [`CONFIG_KEYS`] and reads as a
/// misspelling of it (`bukcet`).
fn misspelled_bucket(table: &Map<String, Value>) -> bool {
    table
        .keys()
        .filter(|key| !CONFIG_KEYS.contains(&key.as_str()))
        .any(|key| {
            agent_env_store::similar::best_match(key, CONFIG_KEYS, MEANT_LIKENESS) == Some("bucket")
        })
}

/// How a problem with the endpoint names it, and what it says to write the right one in: the key
/// itself when the table writes it out, else the place it was read from (a reference's variable or
/// secret, or an AWS variable), which is what to fix.
struct EndpointNamed {
    /// `endpoint`, or `endpoint (read from the environment variable S3_ENDPOINT)`.
    key: String,
    /// Whether it was read from elsewhere, and from where.
    read_from: Option<String>,
}

impl EndpointNamed {
    fn of(from: &EndpointFrom) -> EndpointNamed {
        let read_from = match from {
            EndpointFrom::Reference(place) => Some(place.clone()),
            EndpointFrom::Variable(variable) => {
                Some(format!("the environment variable {variable}"))
            }
            EndpointFrom::Config | EndpointFrom::Default => None,
        };
        EndpointNamed {
            key: match &read_from {
                Some(place) => format!("endpoint (read from {place})"),
                None => "endpoint".to_string(),
            },
            read_from,
        }
    }

    /// What to do to make the endpoint `right`: write it in the table, or set the place it is read
    /// from.
    fn write(&self, right: &str) -> String {
        match &self.read_from {
            Some(place) => format!("set {place} to {right}"),
            None => format!("write endpoint = \"{right}\""),
        }
    }
}

/// An endpoint is a server's address alone: `http://` or `https://`, no path.
fn check_endpoint(endpoint: &str, from: &EndpointFrom) -> Result<(), String> {
    let named = EndpointNamed::of(from);
    let key = &named.key;
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
        if endpoint.contains("://") {
            return Err(format!(
                "{key} must be an http:// or https:// URL, got '{endpoint}'"
            ));
        }
        // A server's address without its scheme: say how to write it, the likelier scheme first.
        let (first, second) = match is_ip_or_localhost(host_of(endpoint)) {
            true => ("http", "https"),
            false => ("https", "http"),
        };
        return Err(format!(
            "{key} must start with http:// or https://, got '{endpoint}'; {} (or {second}:// if the server {})",
            named.write(&format!("{first}://{endpoint}")),
            if second == "https" { "speaks TLS" } else { "does not speak TLS" }
        ));
    }
    let after_scheme = endpoint.split_once("://").map_or("", |(_, rest)| rest);
    if let Some((host, path)) = after_scheme.split_once('/') {
        let scheme = endpoint.split("://").next().unwrap_or("https");
        return Err(format!(
            "{key} must be the server's address alone, got '{endpoint}' with the path '/{path}'; {} and name the bucket in bucket",
            named.write(&format!("{scheme}://{host}")),
        ));
    }
    Ok(())
}

/// With `path_style = false` (virtual-host style) the bucket becomes part of the endpoint's host name
/// (`team.s3.example.com`), which an IP address cannot take.
fn check_url_style(endpoint: &str, path_style: bool) -> Result<(), String> {
    let host = host_of(
        endpoint
            .split_once("://")
            .map_or(endpoint, |(_, rest)| rest),
    );
    if path_style || host.parse::<std::net::IpAddr>().is_err() {
        return Ok(());
    }
    Err(format!(
        "path_style = false puts the bucket in the host name (virtual-host style), which needs the endpoint to name a host, but '{endpoint}' names the IP address {host}; set path_style = true for an endpoint that is an IP address or localhost"
    ))
}

/// The host of an address without its scheme (`127.0.0.1:9000/x` → `127.0.0.1`, `[::1]:9000` →
/// `::1`).
fn host_of(address: &str) -> &str {
    let authority = address.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host_port.split(':').next().unwrap_or(""),
    }
}

/// Whether `host` is an IP address or `localhost`: a server on one's own network, more often than
/// not without TLS.
fn is_ip_or_localhost(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok()
}

/// Half a key pair in the environment: requests would go unsigned, and the server answer "Access
/// Denied" without saying why.
const HALF_PAIR_IN_ENV_KEY: &str = "the environment sets AWS_ACCESS_KEY_ID but not AWS_SECRET_ACCESS_KEY, and access_key_id and secret_access_key are not set; set both variables (or both keys, such as secret_access_key = \"env:TEAM_S3_SECRET\"), or unset AWS_ACCESS_KEY_ID to send unsigned requests to a public bucket";
/// The other half of [`HALF_PAIR_IN_ENV_KEY`].
const HALF_PAIR_IN_ENV_SECRET: &str = "the environment sets AWS_SECRET_ACCESS_KEY but not AWS_ACCESS_KEY_ID, and access_key_id and secret_access_key are not set; set both variables (or both keys), or unset AWS_SECRET_ACCESS_KEY to send unsigned requests to a public bucket";

/// The key pair (and session token), from the table or else the environment (both variables or
/// neither); every problem found.
fn credentials(
    table: &Map<String, Value>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<S3Credentials>, Vec<String>> {
    let (key, secret, token) = match (
        string(table, "access_key_id"),
        string(table, "secret_access_key"),
        string(table, "session_token"),
    ) {
        (Ok(key), Ok(secret), Ok(token)) => (key, secret, token),
        (key, secret, token) => {
            return Err([key.err(), secret.err(), token.err()]
                .into_iter()
                .flatten()
                .collect())
        }
    };
    let (key, secret, token) = match (key, secret) {
        (Some(key), Some(secret)) => (key, secret, token),
        (None, None) => match (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
            (Some(key), Some(secret)) => (key, secret, token.or_else(|| env("AWS_SESSION_TOKEN"))),
            (None, None) => return Ok(None),
            (Some(_), None) => return Err(vec![HALF_PAIR_IN_ENV_KEY.to_string()]),
            (None, Some(_)) => return Err(vec![HALF_PAIR_IN_ENV_SECRET.to_string()]),
        },
        (Some(_), None) => {
            return Err(vec![
                "access_key_id is set but secret_access_key is not; set both (for example secret_access_key = \"env:AWS_SECRET_ACCESS_KEY\") or neither".to_string(),
            ])
        }
        (None, Some(_)) => {
            return Err(vec![
                "secret_access_key is set but access_key_id is not; set both or neither".to_string(),
            ])
        }
    };
    Ok(Some(S3Credentials {
        access_key_id: key,
        secret_access_key: secret,
        session_token: token,
    }))
}

fn string(table: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match table.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("{key} must be a string, got {}", shown(key, other))),
    }
}

fn boolean(table: &Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match table.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(format!("{key} must be true or false, got {other}")),
    }
}

/// A value as an error may show it: never a credential's text.
fn shown(key: &str, value: &Value) -> String {
    if key.contains("secret") || key.contains("token") {
        "a value that is not a string".to_string()
    } else {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn table(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn defaults_point_at_aws() {
        let s = S3Settings::from_table(&table(json!({"bucket": "b"})), &no_env).unwrap();
        assert_eq!(s.endpoint, "https://s3.us-east-1.amazonaws.com");
        assert!(!s.path_style);
        assert_eq!(s.credentials, None);
        assert_eq!(s.grant_lifetime, Duration::from_secs(43_200));
        assert_eq!(s.endpoint_from, EndpointFrom::Default);
    }

    /// The endpoint's source is kept, so a server that cannot be reached names the place to fix:
    /// the table's key over the variables, `AWS_ENDPOINT_URL_S3` over `AWS_ENDPOINT_URL`.
    #[test]
    fn where_the_endpoint_came_from_is_kept() {
        let both = |name: &str| match name {
            "AWS_ENDPOINT_URL_S3" => Some("http://127.0.0.1:9001".to_string()),
            "AWS_ENDPOINT_URL" => Some("http://127.0.0.1:9000".to_string()),
            _ => None,
        };
        let general = |name: &str| (name == "AWS_ENDPOINT_URL").then(|| "http://h:1".to_string());
        let from = |t: Value, env: &dyn Fn(&str) -> Option<String>| {
            let s = S3Settings::from_table(&table(t), env).unwrap();
            let place = s.endpoint_from.place();
            (s.endpoint, s.endpoint_from, place)
        };
        assert_eq!(
            from(json!({"bucket": "b"}), &both),
            (
                "http://127.0.0.1:9001".to_string(),
                EndpointFrom::Variable("AWS_ENDPOINT_URL_S3"),
                "$AWS_ENDPOINT_URL_S3".to_string()
            )
        );
        assert_eq!(
            from(json!({"bucket": "b"}), &general).1,
            EndpointFrom::Variable("AWS_ENDPOINT_URL")
        );
        assert_eq!(
            from(json!({"bucket": "b", "endpoint": "http://h:2"}), &both),
            (
                "http://h:2".to_string(),
                EndpointFrom::Config,
                "[stores.object.config] endpoint".to_string()
            )
        );
    }

    /// An endpoint or bucket the config file names by a reference keeps where it was read from, so
    /// what to fix names that place; the table's reference still wins over the AWS variables.
    #[test]
    fn an_endpoint_and_bucket_read_through_references_keep_where_they_came_from() {
        let general = |name: &str| (name == "AWS_ENDPOINT_URL").then(|| "http://h:1".to_string());
        let read_from = |key: &str| match key {
            "endpoint" => Some("the environment variable S3_ENDPOINT".to_string()),
            "bucket" => Some("the secret s3-bucket of [stores.secret]".to_string()),
            _ => None,
        };
        let s = S3Settings::from_table_read_from(
            &table(json!({"bucket": "b", "endpoint": "http://127.0.0.1:1"})),
            &general,
            &read_from,
        )
        .unwrap();
        assert_eq!(s.endpoint, "http://127.0.0.1:1");
        assert_eq!(
            s.endpoint_from.place(),
            "[stores.object.config] endpoint (read from the environment variable S3_ENDPOINT)"
        );
        assert_eq!(
            s.bucket_read_from.as_deref(),
            Some("the secret s3-bucket of [stores.secret]")
        );
        let plain = S3Settings::from_table(&table(json!({"bucket": "b"})), &no_env).unwrap();
        assert_eq!(plain.bucket_read_from, None);
        let empty =
            S3Settings::from_table_read_from(&table(json!({"bucket": ""})), &no_env, &read_from)
                .unwrap_err();
        assert_eq!(
            empty.to_string(),
            "S3ObjectStore: bucket (read from the secret s3-bucket of [stores.secret]) must name a bucket, got an empty string; set the secret s3-bucket of [stores.secret] to the bucket's name"
        );
    }

    #[test]
    fn the_environment_fills_what_the_table_leaves_out() {
        let env = |name: &str| match name {
            "AWS_ACCESS_KEY_ID" => Some("AK".to_string()),
            "AWS_SECRET_ACCESS_KEY" => Some("SK".to_string()),
            "AWS_REGION" => Some("eu-west-3".to_string()),
            "AWS_ENDPOINT_URL" => Some("http://127.0.0.1:9000/".to_string()),
            _ => None,
        };
        let s = S3Settings::from_table(&table(json!({"bucket": "b"})), &env).unwrap();
        assert_eq!(s.region, "eu-west-3");
        assert_eq!(s.endpoint, "http://127.0.0.1:9000");
        assert!(s.path_style);
        let creds = s.credentials.unwrap();
        assert_eq!(creds.access_key_id, "AK");
        assert!(!format!("{creds:?}").contains("SK"));
    }

    /// Half a key pair in the environment is a problem naming the variables, not unsigned requests
    /// the server refuses with "Access Denied"; the table's pair wins over the environment's half.
    #[test]
    fn half_a_key_pair_in_the_environment_is_refused_naming_the_variables() {
        let key_only = |name: &str| (name == "AWS_ACCESS_KEY_ID").then(|| "AK".to_string());
        let err = S3Settings::from_table(&table(json!({"bucket": "b"})), &key_only).unwrap_err();
        assert_eq!(
            err.to_string(),
            "S3ObjectStore: the environment sets AWS_ACCESS_KEY_ID but not AWS_SECRET_ACCESS_KEY, and access_key_id and secret_access_key are not set; set both variables (or both keys, such as secret_access_key = \"env:TEAM_S3_SECRET\"), or unset AWS_ACCESS_KEY_ID to send unsigned requests to a public bucket"
        );
        let secret_only =
            |name: &str| (name == "AWS_SECRET_ACCESS_KEY").then(|| "SK-hidden".to_string());
        let err = S3Settings::from_table(&table(json!({"bucket": "b"})), &secret_only).unwrap_err();
        assert!(
            err.to_string().starts_with(
                "S3ObjectStore: the environment sets AWS_SECRET_ACCESS_KEY but not AWS_ACCESS_KEY_ID"
            ),
            "{err}"
        );
        assert!(!err.to_string().contains("SK-hidden"), "{err}");
        // An empty variable counts as unset.
        let empty_secret = |name: &str| match name {
            "AWS_ACCESS_KEY_ID" => Some("AK".to_string()),
            "AWS_SECRET_ACCESS_KEY" => Some(String::new()),
            _ => None,
        };
        assert!(S3Settings::from_table(&table(json!({"bucket": "b"})), &empty_secret).is_err());
        let pair = json!({"bucket": "b", "access_key_id": "TK", "secret_access_key": "TS"});
        let s = S3Settings::from_table(&table(pair), &key_only).unwrap();
        assert_eq!(s.credentials.unwrap().access_key_id, "TK");
    }

    #[test]
    fn an_endpoint_naming_the_bucket_and_a_bad_lifetime_say_what_to_write() {
        let err = S3Settings::from_table(
            &table(json!({"bucket": "team", "endpoint": "http://127.0.0.1:9000/team"})),
            &no_env,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "S3ObjectStore: endpoint must be the server's address alone, got 'http://127.0.0.1:9000/team' with the path '/team'; write endpoint = \"http://127.0.0.1:9000\" and name the bucket in bucket"
        );
        let err = S3Settings::from_table(
            &table(json!({"bucket": "b", "grant_lifetime_seconds": 899})),
            &no_env,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "S3ObjectStore: grant_lifetime_seconds must be at least 900, to outlast a transfer; got 899"
        );
        let err = S3Settings::from_table(
            &table(json!({"bucket": "b", "timeout_seconds": 0})),
            &no_env,
        )
        .unwrap_err();
        assert!(err.to_string().contains("timeout_seconds must be"), "{err}");
    }

    #[test]
    fn every_bad_setting_is_named_in_one_error() {
        let err = S3Settings::from_table(
            &table(json!({
                "bucket": "b",
                "path_style": "yes",
                "timeout_seconds": -1,
                "secret_access_key": "SK",
                "region": 3
            })),
            &no_env,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "S3ObjectStore: region must be a string, got 3; S3ObjectStore: path_style must be true or false, got \"yes\"; S3ObjectStore: secret_access_key is set but access_key_id is not; set both or neither; S3ObjectStore: timeout_seconds must be a whole number of seconds, at least 1, got -1"
        );
        assert_eq!(err.iter().count(), 4, "{err}");
        let err = S3Settings::from_table(
            &table(json!({"access_key_id": 1, "session_token": 2})),
            &no_env,
        )
        .unwrap_err();
        assert_eq!(
            err.iter().collect::<Vec<_>>(),
            [
                "S3ObjectStore: bucket is not set; name the bucket the store keeps its objects in, such as bucket = \"team-agent-env\"",
                "S3ObjectStore: access_key_id must be a string, got 1",
                "S3ObjectStore: session_token must be a string, got a value that is not a string",
            ]
        );
    }

    #[test]
    fn half_a_key_pair_is_refused() {
        let err = S3Settings::from_table(
            &table(json!({"bucket": "b", "access_key_id": "AK"})),
            &no_env,
        )
        .unwrap_err();
        assert!(err
            .to_string()
            .starts_with("S3ObjectStore: access_key_id is set but"));
        let err = S3Settings::from_table(
            &table(json!({"bucket": "b", "endpoint": "s3.example.test"})),
            &no_env,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "S3ObjectStore: endpoint must start with http:// or https://, got 's3.example.test'; write endpoint = \"https://s3.example.test\" (or http:// if the server does not speak TLS)"
        );
    }

    /// An endpoint written without its scheme is told how to write it: plain HTTP first for an IP
    /// address or localhost, TLS first for a host name. Another scheme is only refused.
    #[test]
    fn an_endpoint_without_a_scheme_is_told_which_to_write() {
        let problem = |endpoint: &str| {
            S3Settings::from_table(
                &table(json!({"bucket": "b", "endpoint": endpoint})),
                &no_env,
            )
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            problem("127.0.0.1:41665"),
            "S3ObjectStore: endpoint must start with http:// or https://, got '127.0.0.1:41665'; write endpoint = \"http://127.0.0.1:41665\" (or https:// if the server speaks TLS)"
        );
        assert!(
            problem("localhost:9000").contains("write endpoint = \"http://localhost:9000\""),
            "{}",
            problem("localhost:9000")
        );
        assert_eq!(
            problem("s3://team"),
            "S3ObjectStore: endpoint must be an http:// or https:// URL, got 's3://team'"
        );
    }

    /// An endpoint read from elsewhere that is written wrong says to set the place it was read
    /// from, not to write `endpoint = …` in the table, which would drop the reference.
    #[test]
    fn an_endpoint_read_from_elsewhere_says_to_set_that_place() {
        let referenced = |endpoint: &str| {
            S3Settings::from_table_read_from(
                &table(json!({"bucket": "b", "endpoint": endpoint})),
                &no_env,
                &|key| (key == "endpoint").then(|| "the environment variable S3_ENDPOINT".into()),
            )
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            referenced("127.0.0.1:9000"),
            "S3ObjectStore: endpoint (read from the environment variable S3_ENDPOINT) must start with http:// or https://, got '127.0.0.1:9000'; set the environment variable S3_ENDPOINT to http://127.0.0.1:9000 (or https:// if the server speaks TLS)"
        );
        assert_eq!(
            referenced("http://127.0.0.1:9000/team"),
            "S3ObjectStore: endpoint (read from the environment variable S3_ENDPOINT) must be the server's address alone, got 'http://127.0.0.1:9000/team' with the path '/team'; set the environment variable S3_ENDPOINT to http://127.0.0.1:9000 and name the bucket in bucket"
        );
        let from_aws = |name: &str| (name == "AWS_ENDPOINT_URL").then(|| "s3://x".to_string());
        assert_eq!(
            S3Settings::from_table(&table(json!({"bucket": "b"})), &from_aws)
                .unwrap_err()
                .to_string(),
            "S3ObjectStore: endpoint (read from the environment variable AWS_ENDPOINT_URL) must be an http:// or https:// URL, got 's3://x'"
        );
    }

    /// Virtual-host style puts the bucket in the host name, which an IP address cannot take: said as
    /// such, with the setting to change, rather than as a URL parser's error.
    #[test]
    fn virtual_host_style_with_an_ip_endpoint_says_to_use_path_style() {
        for endpoint in ["http://127.0.0.1:41665", "http://[::1]:9000"] {
            let err = S3Settings::from_table(
                &table(json!({"bucket": "b", "endpoint": endpoint, "path_style": false})),
                &no_env,
            )
            .unwrap_err();
            let host = if endpoint.contains('[') {
                "::1"
            } else {
                "127.0.0.1"
            };
            assert_eq!(
                err.to_string(),
                format!("S3ObjectStore: path_style = false puts the bucket in the host name (virtual-host style), which needs the endpoint to name a host, but '{endpoint}' names the IP address {host}; set path_style = true for an endpoint that is an IP address or localhost")
            );
        }
        let settings = S3Settings::from_table(
            &table(json!({"bucket": "Team_X", "endpoint": "https://s3.example.test", "path_style": false})),
            &no_env,
        )
        .unwrap();
        assert_eq!(
            crate::S3ObjectStore::new(settings).unwrap_err().to_string(),
            "S3ObjectStore: path_style = false puts the bucket in the host name ('Team_X.s3.example.test'), which the bucket's name 'Team_X' cannot be part of (invalid domain character); set path_style = true, or name a bucket a host name can take (lower-case letters, digits, '-' and '.')"
        );
        for fine in [
            json!({"bucket": "b", "endpoint": "http://127.0.0.1:9000"}),
            json!({"bucket": "b", "endpoint": "https://s3.example.test", "path_style": false}),
        ] {
            let settings = S3Settings::from_table(&table(fine), &no_env).unwrap();
            assert!(crate::S3ObjectStore::new(settings).is_ok());
        }
    }

    /// A misspelled bucket is left to the check of the table's keys, which names it with "did you
    /// mean 'bucket'": saying it is not set as well would be the same mistake twice. Another unknown
    /// key does not stand for the bucket.
    #[test]
    fn a_misspelled_bucket_is_not_also_said_to_be_unset() {
        let settings = S3Settings::from_table(&table(json!({"bukcet": "team"})), &no_env).unwrap();
        assert_eq!(settings.bucket, "");
        // What a caller that skipped the key check builds is refused, not sent anywhere.
        let err = crate::S3ObjectStore::new(settings).unwrap_err();
        assert!(err.to_string().contains("bucket is not set"), "{err}");
        let err = S3Settings::from_table(&table(json!({"colour": "blue"})), &no_env).unwrap_err();
        assert_eq!(
            err.to_string(),
            "S3ObjectStore: bucket is not set; name the bucket the store keeps its objects in, such as bucket = \"team-agent-env\""
        );
    }
}
