//! The store's config table: `root` (required, `~` expanded) and `bucket` (default `openciv3`), nothing else.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::error::{CasError, CasResult};

/// The keys the config table takes, in the order error messages list them.
pub const CONFIG_KEYS: [&str; 2] = ["root", "bucket"];
/// The keys without a default.
pub const REQUIRED_KEYS: [&str; 1] = ["root"];
/// The bucket of `cas://<bucket>/<key>` URLs when the table names none.
pub const DEFAULT_BUCKET: &str = "openciv3";

/// A checked config table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CasConfig {
    pub root: PathBuf,
    pub bucket: String,
}

impl CasConfig {
    /// Checks a `[stores.object] config` table for the class named `impl_name`
    /// (`agentenv-openciv3:ContentAddressedObjectStore`), which error messages quote.
    pub fn from_table(impl_name: &str, table: &Map<String, Value>) -> CasResult<CasConfig> {
        let unknown: Vec<&str> = table
            .keys()
            .map(String::as_str)
            .filter(|key| !CONFIG_KEYS.contains(key))
            .collect();
        let missing: Vec<&str> = REQUIRED_KEYS
            .iter()
            .copied()
            .filter(|key| !table.contains_key(*key))
            .collect();
        if !unknown.is_empty() || !missing.is_empty() {
            return Err(CasError::Config(key_problem(impl_name, &unknown, &missing)));
        }
        let root = string_value(impl_name, table, "root")?.unwrap_or_default();
        let bucket =
            string_value(impl_name, table, "bucket")?.unwrap_or_else(|| DEFAULT_BUCKET.to_string());
        CasConfig::new(&root, &bucket)
    }

    /// Checks a root (expanding a leading `~`) and a bucket.
    pub fn new(root: &str, bucket: &str) -> CasResult<CasConfig> {
        if root.trim().is_empty() {
            return Err(CasError::Config(
                "The content-addressed store needs a root directory; set config.root".to_string(),
            ));
        }
        if bucket.is_empty() || bucket.contains('/') || bucket.chars().any(char::is_whitespace) {
            return Err(CasError::Config(format!(
                "bucket must be a non-empty name without '/' or spaces, got '{bucket}'"
            )));
        }
        Ok(CasConfig {
            root: expand_tilde(root)?,
            bucket: bucket.to_string(),
        })
    }
}

fn key_problem(impl_name: &str, unknown: &[&str], missing: &[&str]) -> String {
    let quoted = |keys: &[&str]| {
        keys.iter()
            .map(|k| format!("'{k}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut halves = Vec::new();
    if !unknown.is_empty() {
        halves.push(format!("unknown key {}", quoted(unknown)));
    }
    if !missing.is_empty() {
        halves.push(format!("no value for {}", quoted(missing)));
    }
    format!(
        "The config table for '{impl_name}' has {}; it takes {}",
        halves.join(" and "),
        CONFIG_KEYS.join(", ")
    )
}

fn string_value(
    impl_name: &str,
    table: &Map<String, Value>,
    key: &str,
) -> CasResult<Option<String>> {
    match table.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(CasError::Config(format!(
            "The config table for '{impl_name}' has {key} = {other}; {key} must be a string"
        ))),
    }
}

fn expand_tilde(root: &str) -> CasResult<PathBuf> {
    expand_tilde_with(
        root,
        std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .map(PathBuf::from),
    )
}

fn expand_tilde_with(root: &str, home: Option<PathBuf>) -> CasResult<PathBuf> {
    let rest = match root.strip_prefix('~') {
        Some("") => "",
        Some(rest) if rest.starts_with('/') => &rest[1..],
        _ => return Ok(PathBuf::from(root)),
    };
    match home {
        Some(home) => Ok(home.join(rest)),
        None => Err(CasError::Config(format!(
            "root '{root}' starts with '~' but HOME is not set; give an absolute root"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const IMPL: &str = "agentenv-openciv3:ContentAddressedObjectStore";

    fn table(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn unknown_key_is_refused_with_the_keys_it_takes() {
        let err = CasConfig::from_table(IMPL, &table(json!({"root": "/tmp/x", "compress": true})))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "The config table for 'agentenv-openciv3:ContentAddressedObjectStore' has unknown key 'compress'; it takes root, bucket"
        );
    }

    #[test]
    fn missing_root_and_unknown_keys_are_reported_together() {
        let err = CasConfig::from_table(IMPL, &table(json!({"a": 1, "b": 2}))).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("The config table for '{IMPL}' has unknown key 'a', 'b' and no value for 'root'; it takes root, bucket")
        );
    }

    #[test]
    fn a_leading_tilde_is_the_home_directory() {
        let home = Some(PathBuf::from("/home/me"));
        assert_eq!(
            expand_tilde_with("~", home.clone()).unwrap(),
            PathBuf::from("/home/me")
        );
        assert_eq!(
            expand_tilde_with("~/cas/x", home.clone()).unwrap(),
            PathBuf::from("/home/me/cas/x")
        );
        assert_eq!(
            expand_tilde_with("~other/x", home.clone()).unwrap(),
            PathBuf::from("~other/x")
        );
        assert_eq!(
            expand_tilde_with("/abs/~", home).unwrap(),
            PathBuf::from("/abs/~")
        );
        assert!(expand_tilde_with("~/x", None)
            .unwrap_err()
            .to_string()
            .contains("HOME is not set"));
    }

    #[test]
    fn bucket_defaults_and_root_is_kept() {
        let config = CasConfig::from_table(IMPL, &table(json!({"root": "/srv/cas"}))).unwrap();
        assert_eq!(config.root, PathBuf::from("/srv/cas"));
        assert_eq!(config.bucket, DEFAULT_BUCKET);
        assert!(CasConfig::new("/srv/cas", "a/b").is_err());
        assert!(CasConfig::from_table(IMPL, &table(json!({"root": 3}))).is_err());
    }
}
