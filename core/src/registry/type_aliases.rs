//! `[artifacts] type_aliases`: legacy artifact type names the config maps to the types that replaced
//! them (`old_name = "new_name"`), so stored documents and task files that still say the old name resolve.
//!
//! The original's rules: a value is a string; an alias may not map to itself, nor to another alias; a
//! target nobody registers is a ConfigError that fails the artifacts group (`… maps to 'x', which no
//! artifact registers; declare it under [artifacts].impls or correct the alias`), unless the target is
//! left out for a reason already reported (a conflict: the alias is refused with a warning; a plugin that
//! failed: the alias is skipped with a warning). A legacy name that plugins conflict on, or that a plugin
//! or an impl registers to a different class, is a ConfigError too.

use super::outcome::{codes, Diagnostic};
use super::resolve::{conflicted, Entry, Registry};
use crate::words::with_article;

/// Why `[artifacts] type_aliases` fails the artifacts group; the message follows `ConfigError: ` in
/// the group's `config-invalid` diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum TypeAliasError {
    #[error(
        "[artifacts] type_aliases must be a table of old_name = \"new_name\", not {}",
        with_article(found)
    )]
    NotATable { found: &'static str },
    #[error("[artifacts] type_aliases.{legacy} must be a string (the artifact type it stands for), not {}", with_article(found))]
    NotAString { legacy: String, found: &'static str },
    #[error("[artifacts] type_aliases maps '{legacy}' to itself; remove it")]
    ToItself { legacy: String },
    /// Its target is an alias too; `next` is what that one stands for.
    #[error("[artifacts] type_aliases maps '{legacy}' to '{target}', which is an alias itself; map '{legacy}' to '{next}'")]
    ToAnAlias {
        legacy: String,
        target: String,
        next: String,
    },
    #[error("[artifacts] type_aliases maps '{legacy}' to '{target}', which no artifact registers; declare it under [artifacts].impls or correct the alias")]
    ToNothing { legacy: String, target: String },
    #[error("[artifacts] type_aliases maps '{legacy}', which plugins conflict on; uninstall one of them or drop the alias")]
    ConflictedName { legacy: String },
    #[error("[artifacts] type_aliases maps '{legacy}' to '{target}', but '{legacy}' is registered to another class; drop the alias or the registration")]
    NameTaken { legacy: String, target: String },
}

/// Applies the config's aliases to the artifacts registry (after the config's impls took effect).
pub(super) fn apply(reg: &mut Registry) {
    let Some(doc) = reg.config.document.clone() else {
        return;
    };
    if reg.group_errors.contains_key("artifacts") {
        return;
    }
    let Ok(table) = doc.require() else {
        return;
    };
    let Some(aliases) = table
        .get("artifacts")
        .and_then(toml::Value::as_table)
        .and_then(|t| t.get("type_aliases"))
    else {
        return;
    };
    if let Err(message) = apply_table(reg, aliases) {
        reg.group_errors.insert(
            "artifacts",
            Diagnostic {
                code: codes::CONFIG_INVALID.into(),
                reason: format!("ConfigError: {message}"),
            },
        );
    }
}

fn apply_table(reg: &mut Registry, aliases: &toml::Value) -> Result<(), TypeAliasError> {
    let Some(aliases) = aliases.as_table() else {
        return Err(TypeAliasError::NotATable {
            found: aliases.type_str(),
        });
    };
    let mut pairs = Vec::new();
    for (legacy, target) in aliases {
        let Some(target) = target.as_str() else {
            return Err(TypeAliasError::NotAString {
                legacy: legacy.clone(),
                found: target.type_str(),
            });
        };
        if target == legacy {
            return Err(TypeAliasError::ToItself {
                legacy: legacy.clone(),
            });
        }
        if let Some(next) = aliases.get(target).and_then(toml::Value::as_str) {
            return Err(TypeAliasError::ToAnAlias {
                legacy: legacy.clone(),
                target: target.to_string(),
                next: next.to_string(),
            });
        }
        pairs.push((legacy.clone(), target.to_string()));
    }
    for (legacy, target) in pairs {
        let target_key = ("artifacts", target.clone());
        let Some(entry) = reg.entries.get(&target_key).cloned() else {
            match reg.failures.get(&target_key).cloned() {
                Some(why) if conflicted(reg, "artifacts", &target) => reg.warnings.push(format!(
                    "[artifacts] type_aliases maps '{legacy}' to '{target}', which is refused: {why}"
                )),
                Some(why) => reg.warnings.push(format!(
                    "[artifacts] type_aliases maps '{legacy}' to '{target}', skipped: {why}"
                )),
                None => return Err(TypeAliasError::ToNothing { legacy, target }),
            }
            continue;
        };
        let legacy_key = ("artifacts", legacy.clone());
        if conflicted(reg, "artifacts", &legacy) {
            return Err(TypeAliasError::ConflictedName { legacy });
        }
        match reg.entries.get(&legacy_key) {
            None => {
                reg.entries.insert(legacy_key, entry);
            }
            Some(existing) if same_class(existing, &entry) => {}
            Some(_) => return Err(TypeAliasError::NameTaken { legacy, target }),
        }
    }
    Ok(())
}

fn same_class(a: &Entry, b: &Entry) -> bool {
    match (a, b) {
        (
            Entry::Plugin {
                plugin: pa,
                class: ca,
                ..
            },
            Entry::Plugin {
                plugin: pb,
                class: cb,
                ..
            },
        ) => pa == pb && ca == cb,
        (Entry::BuiltIn { .. }, Entry::BuiltIn { .. }) => true,
        _ => false,
    }
}
