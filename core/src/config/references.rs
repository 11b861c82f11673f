//! `env:NAME[?default]` and `secret:NAME[?default]` references in string values, resolved recursively over
//! tables and lists. Other values pass through unchanged. `env:` reads the invocation's
//! [`Environment`] snapshot, as the config document was read in it.

use super::error::ConfigError;
pub use super::reference_syntax::{parse_reference, Reference};
use super::secret_names::is_secret_key;
use crate::environment::Environment;
use crate::redaction;
use toml::{Table, Value};

/// Where `secret:` references are looked up: the configured secret store implements this.
pub trait SecretLookup {
    /// The secret's value, `Ok(None)` when the store has no such secret, `Err` when the store failed.
    fn get(&self, name: &str) -> Result<Option<String>, String>;
}

/// Resolves one string: a reference becomes its value, anything else is returned as is.
pub fn resolve_str(
    text: &str,
    env: &Environment,
    secrets: Option<&dyn SecretLookup>,
) -> Result<String, ConfigError> {
    let Some(reference) = parse_reference(text) else {
        return Ok(text.to_string());
    };
    let found = match reference.scheme {
        "env" => env
            .var_os(reference.name)
            .map(|v| v.to_string_lossy().into_owned()),
        _ => {
            let Some(lookup) = secrets else {
                return Err(ConfigError::NoSecretStore {
                    name: reference.name.to_string(),
                });
            };
            lookup
                .get(reference.name)
                .map_err(|message| ConfigError::SecretStoreFailed {
                    name: reference.name.to_string(),
                    message,
                })?
        }
    };
    match (found, reference.default) {
        (Some(value), _) => Ok(value),
        (None, Some(default)) => Ok(default.to_string()),
        (None, None) => Err(ConfigError::Unresolved {
            scheme: reference.scheme,
            name: reference.name.to_string(),
        }),
    }
}

/// An unresolvable reference and the key path (`root`, `a.b`, `list[2]`) where it sits.
#[derive(Debug, Clone)]
pub struct ReferenceFailure {
    pub key: String,
    pub error: ConfigError,
}

impl ReferenceFailure {
    /// The failure named by its table and key: `[stores.object.config] root: …`.
    pub fn at(self, table_name: &str) -> ConfigError {
        self.error.at(format!("[{table_name}] {}", self.key))
    }
}

/// Remembers for [`redaction`] what of a resolved value the config masking hides inside it (a token,
/// the value of `password=…` or `?api_key=…`, the word after `--password`), so a plugin that echoes
/// the setting back shows it masked as `config show` does.
fn remember_secret_parts(value: &Value) {
    for part in super::mask::secret_parts(value) {
        redaction::remember(&part);
    }
}

/// Resolves every reference in a table, recursing into tables and lists, up to the first that does
/// not resolve. What of it is secret is remembered for [`redaction`](crate::redaction) on the way.
pub fn resolve_table(
    table: &Table,
    env: &Environment,
    secrets: Option<&dyn SecretLookup>,
) -> Result<Table, ReferenceFailure> {
    let walk = Walk {
        env,
        secrets,
        first_only: true,
    };
    walk.table(table).map_err(|mut all| all.remove(0))
}

/// [`resolve_table`], going on past a reference that does not resolve: `Err` holds every one that
/// does not (never empty), in the table's order.
pub fn resolve_table_fully(
    table: &Table,
    env: &Environment,
    secrets: Option<&dyn SecretLookup>,
) -> Result<Table, Vec<ReferenceFailure>> {
    let walk = Walk {
        env,
        secrets,
        first_only: false,
    };
    walk.table(table)
}

/// Resolves every reference in a value.
pub fn resolve_value(
    value: &Value,
    env: &Environment,
    secrets: Option<&dyn SecretLookup>,
) -> Result<Value, ReferenceFailure> {
    let walk = Walk {
        env,
        secrets,
        first_only: true,
    };
    let mut failures = Vec::new();
    let resolved = walk.value(value, false, &mut failures);
    match failures.into_iter().next() {
        None => Ok(resolved),
        Some(first) => Err(first),
    }
}

/// One resolution over a table: where references are looked up, and whether it stops at the first
/// that does not resolve (so nothing more is looked up) or goes on to name them all.
struct Walk<'a> {
    env: &'a Environment,
    secrets: Option<&'a dyn SecretLookup>,
    first_only: bool,
}

impl Walk<'_> {
    fn table(&self, table: &Table) -> Result<Table, Vec<ReferenceFailure>> {
        let mut failures = Vec::new();
        let resolved = self.table_under(table, false, &mut failures);
        if failures.is_empty() {
            Ok(resolved)
        } else {
            Err(failures)
        }
    }

    fn done(&self, failures: &[ReferenceFailure]) -> bool {
        self.first_only && !failures.is_empty()
    }

    /// The table resolved, below a secret-like key when `under_secret_key`; what does not resolve
    /// is added to `failures` and left as written.
    fn table_under(
        &self,
        table: &Table,
        under_secret_key: bool,
        failures: &mut Vec<ReferenceFailure>,
    ) -> Table {
        let mut out = Table::new();
        for (key, value) in table {
            if self.done(failures) {
                break;
            }
            let secret_key = under_secret_key || is_secret_key(key);
            let mut below = Vec::new();
            let resolved = self.value(value, secret_key, &mut below);
            failures.extend(below.into_iter().map(|f| ReferenceFailure {
                key: join_key(key, &f.key),
                error: f.error,
            }));
            out.insert(key.clone(), resolved);
        }
        out
    }

    fn value(
        &self,
        value: &Value,
        under_secret_key: bool,
        failures: &mut Vec<ReferenceFailure>,
    ) -> Value {
        match value {
            Value::String(s) => match resolve_str(s, self.env, self.secrets) {
                Ok(resolved) => {
                    let from_secret = parse_reference(s).is_some_and(|r| r.scheme == "secret");
                    redaction::remember_setting(&resolved, from_secret, under_secret_key);
                    let resolved = Value::String(resolved);
                    remember_secret_parts(&resolved);
                    resolved
                }
                Err(error) => {
                    failures.push(ReferenceFailure {
                        key: String::new(),
                        error,
                    });
                    value.clone()
                }
            },
            Value::Table(t) => Value::Table(self.table_under(t, under_secret_key, failures)),
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    if self.done(failures) {
                        break;
                    }
                    let mut below = Vec::new();
                    out.push(self.value(item, under_secret_key, &mut below));
                    failures.extend(below.into_iter().map(|f| ReferenceFailure {
                        key: format!("[{i}]{}", prefixed(&f.key)),
                        error: f.error,
                    }));
                }
                let resolved = Value::Array(out);
                // A list of words may be a command line: the word after `--password` is a secret.
                remember_secret_parts(&resolved);
                resolved
            }
            other => other.clone(),
        }
    }
}

fn join_key(key: &str, rest: &str) -> String {
    let key = super::tables::toml_key(key);
    if rest.is_empty() {
        key
    } else if rest.starts_with('[') {
        format!("{key}{rest}")
    } else {
        format!("{key}.{rest}")
    }
}

fn prefixed(rest: &str) -> String {
    if rest.is_empty() || rest.starts_with('[') {
        rest.to_string()
    } else {
        format!(".{rest}")
    }
}

/// Resolves a table and names the table and key in the error: `[stores.object.config] root: …`.
pub fn resolve_table_at(
    table: &Table,
    table_name: &str,
    env: &Environment,
    secrets: Option<&dyn SecretLookup>,
) -> Result<Table, ConfigError> {
    resolve_table(table, env, secrets).map_err(|f| f.at(table_name))
}

/// Every reference in a table that does not resolve, each named by its table and key as
/// [`resolve_table_at`] names one; empty when all resolve.
pub fn unresolved_at(
    table: &Table,
    table_name: &str,
    env: &Environment,
    secrets: Option<&dyn SecretLookup>,
) -> Vec<ConfigError> {
    match resolve_table_fully(table, env, secrets) {
        Ok(_) => Vec::new(),
        Err(failures) => failures.into_iter().map(|f| f.at(table_name)).collect(),
    }
}

/// Every reference written in a value, with the key path where it sits (for `config sources`/`check`).
pub fn references_in(value: &Value, key: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) if parse_reference(s).is_some() => out.push((key.to_string(), s.clone())),
        Value::Table(t) => {
            for (k, v) in t {
                let path = if key.is_empty() {
                    super::tables::toml_key(k)
                } else {
                    format!("{key}.{}", super::tables::toml_key(k))
                };
                references_in(v, &path, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                references_in(v, &format!("{key}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Map(HashMap<&'static str, &'static str>);
    impl SecretLookup for Map {
        fn get(&self, name: &str) -> Result<Option<String>, String> {
            Ok(self.0.get(name).map(|v| v.to_string()))
        }
    }

    #[test]
    fn defaults_take_the_text_after_the_first_question_mark() {
        let r = parse_reference("env:NOPE?x?y").unwrap();
        assert_eq!((r.name, r.default), ("NOPE", Some("x?y")));
        assert_eq!(parse_reference("env:NOPE?").unwrap().default, Some(""));
        assert_eq!(parse_reference("env:NOPE").unwrap().default, None);
        assert!(parse_reference("http://x").is_none());
    }

    #[test]
    fn unresolved_and_missing_store_messages() {
        let e = resolve_str(
            "env:AGENT_ENV_TEST_SURELY_UNSET_VAR",
            &Environment::default(),
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Unresolved env:AGENT_ENV_TEST_SURELY_UNSET_VAR reference (no value and no default); set the environment variable AGENT_ENV_TEST_SURELY_UNSET_VAR, or give a default: env:AGENT_ENV_TEST_SURELY_UNSET_VAR?DEFAULT"
        );
        let e = resolve_str("secret:k", &Environment::default(), None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Cannot resolve 'secret:k': no secret store is available for secret: references here"
        );
    }

    #[test]
    fn secrets_resolve_through_the_lookup_recursively() {
        let store = Map(HashMap::from([("tok", "s3cr3t")]));
        let t: Table =
            toml::from_str("a = 'secret:tok'\nb = ['secret:none?d', 1]\n[c]\nd = 'secret:none?'")
                .unwrap();
        let out = resolve_table(&t, &Environment::default(), Some(&store)).unwrap();
        assert_eq!(out["a"].as_str(), Some("s3cr3t"));
        assert_eq!(out["b"][0].as_str(), Some("d"));
        assert_eq!(out["b"][1].as_integer(), Some(1));
        assert_eq!(out["c"]["d"].as_str(), Some(""));
    }

    #[test]
    fn env_references_read_the_environment_given() {
        let env = Environment::from_vars([("TOKEN", "t0k")], std::path::Path::new("/"));
        assert_eq!(resolve_str("env:TOKEN", &env, None).unwrap(), "t0k");
        assert_eq!(
            resolve_str("env:OTHER?fallback", &env, None).unwrap(),
            "fallback"
        );
    }

    #[test]
    fn every_reference_that_does_not_resolve_is_named() {
        let t: Table = toml::from_str(
            "a = 'env:AGENT_ENV_TEST_UNSET_A'\nb = 'kept'\n[c]\nd = ['env:AGENT_ENV_TEST_UNSET_D']",
        )
        .unwrap();
        let found: Vec<String> = unresolved_at(&t, "model", &Environment::default(), None)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(found[0].starts_with("[model] a: Unresolved env:AGENT_ENV_TEST_UNSET_A "));
        assert!(found[1].starts_with("[model] c.d[0]: Unresolved env:AGENT_ENV_TEST_UNSET_D "));
    }

    #[test]
    fn a_first_failure_stops_the_lookups_unless_all_are_asked_for() {
        struct Counting(std::cell::Cell<usize>);
        impl SecretLookup for Counting {
            fn get(&self, _: &str) -> Result<Option<String>, String> {
                self.0.set(self.0.get() + 1);
                Err("down".into())
            }
        }
        let t: Table =
            toml::from_str("a = 'secret:x'\nb = ['secret:y']\n[c]\nd = 'secret:z'").unwrap();
        let store = Counting(std::cell::Cell::new(0));
        assert!(resolve_table(&t, &Environment::default(), Some(&store)).is_err());
        assert_eq!(store.0.get(), 1);
        let all = resolve_table_fully(&t, &Environment::default(), Some(&store)).unwrap_err();
        let keys: Vec<&str> = all.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(keys, ["a", "b[0]", "c.d"]);
    }

    #[test]
    fn failures_name_the_table_and_key() {
        let t: Table =
            toml::from_str("[x]\nroot = ['ok', 'env:AGENT_ENV_TEST_SURELY_UNSET_VAR']").unwrap();
        let e = resolve_table_at(&t, "stores.object.config", &Environment::default(), None)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "[stores.object.config] x.root[1]: Unresolved env:AGENT_ENV_TEST_SURELY_UNSET_VAR reference (no value and no default); set the environment variable AGENT_ENV_TEST_SURELY_UNSET_VAR, or give a default: env:AGENT_ENV_TEST_SURELY_UNSET_VAR?DEFAULT"
        );
    }
}
