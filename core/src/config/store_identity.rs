//! Which store a configuration selects, as a run's journal remembers it: a fingerprint of the class and
//! the settings that name the place it keeps its data ([`StoreIdentity`]), so that what a run kept for
//! one store (a task's end the store did not take) is written into that store alone, whatever another
//! project's configuration selects later. Never a password: PostgreSQL's is the dsn's server, port,
//! database and schema; a built-in store on this machine's disk is its class and its path; a plugin's
//! store is its class and its config table, with the values under secret-like keys and the secrets
//! inside strings left out.

use sha2::{Digest, Sha256};

use super::configured_store::store_spec;
use super::document::ConfigDocument;
use super::error::ConfigError;
use super::references::SecretLookup;
use super::store_selection::selection;
use crate::stores::from_spec::{classify, local_builtin, Target};
use crate::stores::{StoreKind, StoreSpec};

/// A store as a journal remembers it: `fingerprint` tells stores apart (a sha256, in hex, of the
/// identifying fields), `name` says which one it is to a person (without secrets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreIdentity {
    pub fingerprint: String,
    pub name: String,
}

impl StoreIdentity {
    /// The identity of `fields` (the class first), shown as `name`.
    fn of(fields: &[&str], name: String) -> StoreIdentity {
        let mut hash = Sha256::new();
        // Versioned, so that a later way of telling stores apart never matches this one by chance.
        hash.update(b"agent-env store identity 1");
        for field in fields {
            // Each field's length first: no two lists of fields hash the same text.
            hash.update((field.len() as u64).to_le_bytes());
            hash.update(field.as_bytes());
        }
        StoreIdentity {
            fingerprint: hex::encode(hash.finalize()),
            name,
        }
    }
}

/// The identity of the store the configuration `doc` selects for `kind`, its `env:` and `secret:`
/// references resolved (through `secrets`) as the store's build resolves them.
pub fn configured_identity(
    doc: &ConfigDocument,
    kind: StoreKind,
    secrets: Option<&dyn SecretLookup>,
) -> Result<StoreIdentity, ConfigError> {
    let spec = store_spec(&selection(doc, kind.as_str())?, &doc.env, secrets)?;
    Ok(identity_of(&spec))
}

/// The identity of the store `spec` builds.
pub fn identity_of(spec: &StoreSpec) -> StoreIdentity {
    let class = spec
        .impl_name
        .rsplit(':')
        .next()
        .unwrap_or(&spec.impl_name)
        .trim();
    let text = |key: &str| spec.config.get(key).and_then(serde_json::Value::as_str);
    let builtin = matches!(classify(spec.kind, &spec.impl_name), Ok(Target::Builtin(_)));
    if let Some((server, schema)) = builtin
        .then(|| crate::stores::hosted::postgres_place(class, &spec.config))
        .flatten()
    {
        let name = format!("{class} at {server}, schema {schema}");
        return StoreIdentity::of(&[class, &server, &schema], name);
    }
    let path = local_builtin(spec.kind, &spec.impl_name)
        .and_then(crate::stores::local::path_key)
        .and_then(text);
    if let Some(path) = path {
        let path = std::path::absolute(path)
            .map_or_else(|_| path.to_string(), |p| p.display().to_string());
        let name = format!("{class} at {path}");
        return StoreIdentity::of(&[class, &path], name);
    }
    // A plugin's store (or a built-in one whose settings do not read): its class and what its table
    // says, but for secrets, which may change while the place stays.
    let table = serde_json::Value::Object(without_secrets(&spec.config));
    let impl_name = spec.impl_name.trim();
    StoreIdentity::of(&[impl_name, &table.to_string()], impl_name.to_string())
}

/// A copy of `table` without the entries under secret-like keys, and with the secrets inside strings
/// (a URL's password) masked. Its keys are sorted, so the same table always reads the same.
fn without_secrets(
    table: &serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut keys: Vec<&String> = table.keys().collect();
    keys.sort();
    keys.into_iter()
        .filter(|key| !super::mask::is_secret_key(key))
        .filter_map(|key| Some((key.clone(), value_without_secrets(table.get(key)?))))
        .collect()
}

fn value_without_secrets(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(super::mask_text::mask_text(s)),
        Value::Array(items) => Value::Array(items.iter().map(value_without_secrets).collect()),
        Value::Object(table) => Value::Object(without_secrets(table)),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn spec(impl_name: &str, config: serde_json::Value) -> StoreSpec {
        StoreSpec {
            kind: StoreKind::Document,
            impl_name: impl_name.to_string(),
            config: config.as_object().cloned().unwrap_or_default(),
            read_from: Default::default(),
            env: Arc::new(crate::environment::Environment::from_vars(
                Vec::<(String, String)>::new(),
                std::path::Path::new("/"),
            )),
        }
    }

    fn pg(dsn: &str, schema: Option<&str>) -> StoreIdentity {
        let mut config = serde_json::json!({ "dsn": dsn });
        if let Some(schema) = schema {
            config["schema"] = schema.into();
        }
        identity_of(&spec("PostgresDocumentStore", config))
    }

    #[test]
    fn postgres_stores_differ_by_server_database_and_schema_not_by_password() {
        let ours = pg("postgres://u:one@db:5432/team", None);
        assert_eq!(ours, pg("postgres://u:two@db:5432/team", Some("public")));
        assert_eq!(
            ours,
            pg("host=db port=5432 dbname=team user=u password=x", None)
        );
        assert_ne!(ours, pg("postgres://u:one@db:5432/team", Some("other")));
        assert_ne!(ours, pg("postgres://u:one@db:5432/otherdb", None));
        assert_ne!(ours, pg("postgres://u:one@db2:5432/team", None));
        assert_ne!(ours, pg("postgres://u:one@db:5433/team", None));
        assert_eq!(
            ours.name,
            "PostgresDocumentStore at db:5432/team, schema public"
        );
        assert!(!ours.name.contains("one") && ours.fingerprint.len() == 64);
    }

    #[test]
    fn a_local_store_is_its_path_and_a_plugin_store_its_class_and_table_without_secrets() {
        let local = |path: &str| {
            identity_of(&spec(
                "LocalSqliteDocumentStore",
                serde_json::json!({ "path": path }),
            ))
        };
        assert_eq!(local("/a/documents.db"), local("/a/documents.db"));
        assert_ne!(local("/a/documents.db"), local("/b/documents.db"));
        assert_eq!(
            local("/a/documents.db").name,
            "LocalSqliteDocumentStore at /a/documents.db"
        );
        let plugin = |table: serde_json::Value| identity_of(&spec("acme:AcmeDocs", table));
        let ours = plugin(serde_json::json!({ "table": "runs", "token": "one" }));
        assert_eq!(
            ours,
            plugin(serde_json::json!({ "token": "two", "table": "runs" }))
        );
        assert_ne!(
            ours,
            plugin(serde_json::json!({ "table": "other", "token": "one" }))
        );
        assert_ne!(
            ours,
            identity_of(&spec(
                "other:AcmeDocs",
                serde_json::json!({ "table": "runs" })
            ))
        );
        assert_eq!(ours.name, "acme:AcmeDocs");
    }
}
