//! Checking a store's `[stores.<kind>] config` table against the keys its class takes, with the original's
//! wording, and reading typed values out of it.

use serde_json::{Map, Value};

use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::settings::SettingsProblems;

/// A store's config table, after `env:` / `secret:` references are resolved.
pub type ConfigTable = Map<String, Value>;

/// The problems of a store's table, starting with its unknown and missing keys, for the store to add
/// the problems of each value to: each unknown key is a problem of its own (`… has unknown key 'a';
/// it takes p1, p2`), and the missing keys one more.
pub fn key_problems(
    impl_name: &str,
    table: &ConfigTable,
    takes: &[&str],
    required: &[&str],
) -> SettingsProblems {
    let mut problems = SettingsProblems::new();
    for key in unknown_keys(table, takes) {
        problems.keep(keys_refused(impl_name, &[key], &[], takes));
    }
    problems.keep(keys_refused(
        impl_name,
        &[],
        &missing_keys(table, required),
        takes,
    ));
    problems
}

/// Refuses unknown keys and missing required ones, in one sentence:
/// `The config table for '<impl>' has unknown key 'a', 'b' and no value for 'c'; it takes p1, p2`.
pub fn check_keys(
    impl_name: &str,
    table: &ConfigTable,
    takes: &[&str],
    required: &[&str],
) -> StoreResult<()> {
    keys_refused(
        impl_name,
        &unknown_keys(table, takes),
        &missing_keys(table, required),
        takes,
    )
}

/// The keys of `table` its store does not take, in the table's order.
fn unknown_keys<'t>(table: &'t ConfigTable, takes: &[&str]) -> Vec<&'t str> {
    table
        .keys()
        .map(String::as_str)
        .filter(|k| !takes.contains(k))
        .collect()
}

/// The keys of `required` that `table` does not set.
fn missing_keys<'r>(table: &ConfigTable, required: &[&'r str]) -> Vec<&'r str> {
    required
        .iter()
        .copied()
        .filter(|k| !table.contains_key(*k))
        .collect()
}

/// The sentence that refuses `unknown` and `missing`, when there is one of either.
fn keys_refused(
    impl_name: &str,
    unknown: &[&str],
    missing: &[&str],
    takes: &[&str],
) -> StoreResult<()> {
    if unknown.is_empty() && missing.is_empty() {
        return Ok(());
    }
    let mut parts = Vec::new();
    if !unknown.is_empty() {
        parts.push(format!("unknown key {}", quoted_list(unknown)));
    }
    if !missing.is_empty() {
        parts.push(format!("no value for {}", quoted_list(missing)));
    }
    let takes_text = if takes.is_empty() {
        "it takes no keys".to_string()
    } else {
        format!("it takes {}", takes.join(", "))
    };
    Err(StoreError::Config(format!(
        "The config table for '{impl_name}' has {}; {takes_text}{}",
        parts.join(" and "),
        meant_keys(unknown, takes)
    )))
}

/// For each unknown key close to a key the store takes: `; did you mean 'root' for 'rooot'?`.
fn meant_keys(unknown: &[&str], takes: &[&str]) -> String {
    let meant: Vec<String> = unknown
        .iter()
        .filter_map(|key| {
            let close = crate::similar::best_match(key, takes.iter().copied(), 0.75)?;
            Some(format!("'{close}' for '{key}'"))
        })
        .collect();
    match meant.is_empty() {
        true => String::new(),
        false => format!("; did you mean {}?", meant.join(", ")),
    }
}

fn quoted_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|k| format!("'{k}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An optional string value.
pub fn opt_string(impl_name: &str, table: &ConfigTable, key: &str) -> StoreResult<Option<String>> {
    match table.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(wrong_type(impl_name, key, "a string", other)),
    }
}

/// An optional path: a string that is not empty. An empty one (often a reference whose variable is set
/// to nothing) would make SQLite keep a throwaway database, or the current folder the store.
pub fn opt_path(impl_name: &str, table: &ConfigTable, key: &str) -> StoreResult<Option<String>> {
    match opt_string(impl_name, table, key)? {
        Some(path) if path.trim().is_empty() => Err(StoreError::Config(format!(
            "The config table for '{impl_name}' sets {key} to an empty string; it must name a path, or be left out (a reference such as env:NAME gives an empty string when NAME is set to nothing)"
        ))),
        other => Ok(other),
    }
}

/// An optional boolean value.
pub fn opt_bool(impl_name: &str, table: &ConfigTable, key: &str) -> StoreResult<Option<bool>> {
    match table.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(wrong_type(impl_name, key, "true or false", other)),
    }
}

/// An optional table value.
pub fn opt_table<'a>(
    impl_name: &str,
    table: &'a ConfigTable,
    key: &str,
) -> StoreResult<Option<&'a ConfigTable>> {
    match table.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(other) => Err(wrong_type(impl_name, key, "a table", other)),
    }
}

fn wrong_type(impl_name: &str, key: &str, wanted: &str, got: &Value) -> StoreError {
    StoreError::Config(format!(
        "The config table for '{impl_name}' sets {key} to {got}; it must be {wanted}"
    ))
}

/// Expands a leading `~/` to `env`'s home directory, as the original's config paths do; the home
/// folder is looked up (and so noted as used) only for a path that starts with `~`.
pub fn expand_home(path: &str, env: &crate::environment::Environment) -> std::path::PathBuf {
    if path != "~" && !path.starts_with("~/") {
        return std::path::PathBuf::from(path);
    }
    crate::paths::tilde_expanded(path, crate::paths::Paths::noted(env).home_dir().as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn table(v: Value) -> ConfigTable {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn messages_match_the_original() {
        let takes = ["root", "grants"];
        let err = check_keys("X:Y", &table(json!({"bucket":"x"})), &takes, &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "The config table for 'X:Y' has unknown key 'bucket'; it takes root, grants"
        );
        let err = check_keys("X:Y", &table(json!({"a":1,"b":2})), &takes, &["root"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "The config table for 'X:Y' has unknown key 'a', 'b' and no value for 'root'; it takes root, grants"
        );
        let err = check_keys("S", &table(json!({"a":1})), &[], &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "The config table for 'S' has unknown key 'a'; it takes no keys"
        );
        assert!(check_keys("S", &table(json!({"root":"/x"})), &takes, &["root"]).is_ok());
        assert!(matches!(err, StoreError::Config(_)));
    }

    #[test]
    fn an_unknown_key_close_to_one_taken_gets_a_did_you_mean() {
        let takes = ["root", "grants"];
        let err =
            check_keys("X:Y", &table(json!({"rooot":"x", "zzz": 1})), &takes, &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "The config table for 'X:Y' has unknown key 'rooot', 'zzz'; it takes root, grants; did you mean 'root' for 'rooot'?"
        );
    }

    #[test]
    fn an_empty_path_is_refused_and_an_absent_one_is_not() {
        let err = opt_path("S", &table(json!({"path": " "})), "path").unwrap_err();
        assert!(
            err.to_string().starts_with(
                "The config table for 'S' sets path to an empty string; it must name a path"
            ),
            "{err}"
        );
        assert_eq!(opt_path("S", &table(json!({})), "path").unwrap(), None);
        assert_eq!(
            opt_path("S", &table(json!({"path": "/x"})), "path").unwrap(),
            Some("/x".to_string())
        );
    }
}
