//! The backend-neutral query algebra: filters of predicates on dotted paths, sorts and updates.
//!
//! Every type serializes, so a query crosses the pipe to a plugin store unchanged:
//! a filter is `{"<path>": [{"op": "eq", "value": 1}, {"op": "absent_or_null"}]}`, a sort is
//! `[{"field": "version", "descending": true}]`, an update is
//! `{"set": {...}, "unset": [...], "inc": {...}, "add_to_set": {...}, "push": {...}}` (empty parts omitted).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{StoreError, StoreResult};

/// A stored document: a JSON object.
pub type Document = Map<String, Value>;

/// One condition on the values a path resolves to (Mongo semantics are the oracle).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", content = "value", rename_all = "snake_case")]
pub enum Predicate {
    /// A value equals it, or is an array containing it; an absent path matches only `null`.
    Eq(Value),
    /// The path is present and no value equals it.
    Ne(Value),
    /// A value compares `>=` (values of another type never match).
    Gte(Value),
    /// A value compares `<=`.
    Lte(Value),
    /// The path is present and a value (or an element of an array value) is in the list.
    In(Vec<Value>),
    /// The path's presence is this.
    Exists(bool),
    /// The path is absent, or a value is null, or a value is `<=` it.
    LteOrAbsent(Value),
    /// The path is absent or a value is null.
    AbsentOrNull,
}

/// A flat AND of predicates, keyed by dotted path. The empty filter matches every document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Filter {
    /// Each field path and the predicates its value must meet (all of them).
    pub conditions: BTreeMap<String, Vec<Predicate>>,
}

impl Filter {
    /// The filter that matches every document.
    pub fn all() -> Self {
        Filter::default()
    }

    /// All-`Eq` conditions, one per pair.
    pub fn of<'a>(pairs: impl IntoIterator<Item = (&'a str, Value)>) -> Self {
        pairs.into_iter().fold(Filter::default(), |f, (path, v)| {
            f.and(path, Predicate::Eq(v))
        })
    }

    /// `path == value`.
    pub fn eq(path: &str, value: impl Into<Value>) -> Self {
        Filter::default().and(path, Predicate::Eq(value.into()))
    }

    /// This filter with one more predicate ANDed on `path`.
    pub fn and(mut self, path: &str, predicate: Predicate) -> Self {
        self.conditions
            .entry(path.to_string())
            .or_default()
            .push(predicate);
        self
    }

    /// The `Eq` conditions, as an upsert synthesizes a new document from them.
    pub fn equalities(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.conditions.iter().flat_map(|(path, preds)| {
            preds.iter().filter_map(move |p| match p {
                Predicate::Eq(v) => Some((path.as_str(), v)),
                _ => None,
            })
        })
    }
}

/// One sort key; descending unless said otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SortKey {
    /// The field path to order by.
    pub field: String,
    /// Highest first when true.
    #[serde(default = "default_descending")]
    pub descending: bool,
}

fn default_descending() -> bool {
    true
}

/// Sort keys, primary first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Sort {
    /// The keys, most significant first.
    pub keys: Vec<SortKey>,
}

impl Sort {
    /// Sorts by one field.
    pub fn by(field: &str, descending: bool) -> Self {
        Sort {
            keys: vec![SortKey {
                field: field.to_string(),
                descending,
            }],
        }
    }

    /// This sort with one more (lower-priority) key.
    pub fn then(mut self, field: &str, descending: bool) -> Self {
        self.keys.push(SortKey {
            field: field.to_string(),
            descending,
        });
        self
    }
}

/// An update on dotted paths, applied in the order set, unset, inc, add_to_set, push. A part of
/// another name (`$set`, as MongoDB writes it) is refused, not ignored: an update that changed
/// nothing would still say it matched.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateSpec {
    /// Values to set, by field path.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub set: Map<String, Value>,
    /// Field paths to remove.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unset: Vec<String>,
    /// Numbers to add; a missing field counts as 0.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub inc: Map<String, Value>,
    /// One value each, appended unless an equal one is there.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub add_to_set: Map<String, Value>,
    /// One value each, always appended.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub push: Map<String, Value>,
}

impl UpdateSpec {
    /// An update that changes nothing yet.
    pub fn new() -> Self {
        UpdateSpec::default()
    }

    /// Also sets `path` to `value`.
    pub fn set(mut self, path: &str, value: impl Into<Value>) -> Self {
        self.set.insert(path.to_string(), value.into());
        self
    }

    /// Also removes `path`.
    pub fn unset(mut self, path: &str) -> Self {
        self.unset.push(path.to_string());
        self
    }

    /// Also adds `by` to the number at `path` (a missing field counts as 0).
    pub fn inc(mut self, path: &str, by: impl Into<Value>) -> Self {
        self.inc.insert(path.to_string(), by.into());
        self
    }

    /// Also appends `value` to the array at `path` unless it holds it already.
    pub fn add_to_set(mut self, path: &str, value: impl Into<Value>) -> Self {
        self.add_to_set.insert(path.to_string(), value.into());
        self
    }

    /// Also appends `value` to the array at `path`.
    pub fn push(mut self, path: &str, value: impl Into<Value>) -> Self {
        self.push.insert(path.to_string(), value.into());
        self
    }

    /// Every path the update writes, with repeats.
    pub fn paths(&self) -> Vec<&str> {
        self.set
            .keys()
            .map(String::as_str)
            .chain(self.unset.iter().map(String::as_str))
            .chain(self.inc.keys().map(String::as_str))
            .chain(self.add_to_set.keys().map(String::as_str))
            .chain(self.push.keys().map(String::as_str))
            .collect()
    }

    /// Refuses a path under two operators, or a path together with one of its ancestors.
    pub fn validate(&self) -> StoreResult<()> {
        let paths = self.paths();
        let mut repeated: Vec<&str> = Vec::new();
        for (i, p) in paths.iter().enumerate() {
            if paths[..i].contains(p) && !repeated.contains(p) {
                repeated.push(p);
            }
        }
        if !repeated.is_empty() {
            repeated.sort_unstable();
            return Err(StoreError::InvalidValue(format!(
                "UpdateSpec emits the same path under multiple operators: {}",
                python_list(&repeated)
            )));
        }
        let mut nested: Vec<&str> = Vec::new();
        for p in &paths {
            for q in &paths {
                if q.len() > p.len() && q.starts_with(p) && q.as_bytes()[p.len()] == b'.' {
                    nested.push(p);
                    nested.push(q);
                }
            }
        }
        if !nested.is_empty() {
            nested.sort_unstable();
            nested.dedup();
            return Err(StoreError::InvalidValue(format!(
                "UpdateSpec emits a path and one of its ancestors: {}",
                python_list(&nested)
            )));
        }
        Ok(())
    }
}

/// `['a', 'b']`, as the original's messages print lists.
fn python_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("'{s}'")).collect();
    format!("[{}]", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_algebra_has_a_stable_wire_form() {
        let filter = Filter::eq("id", "a")
            .and("state", Predicate::AbsentOrNull)
            .and("n", Predicate::In(vec![json!(1)]));
        let wire = serde_json::to_value(&filter).unwrap();
        assert_eq!(
            wire,
            json!({"id":[{"op":"eq","value":"a"}],"state":[{"op":"absent_or_null"}],"n":[{"op":"in","value":[1]}]})
        );
        assert_eq!(serde_json::from_value::<Filter>(wire).unwrap(), filter);
        let sort: Sort = serde_json::from_value(json!([{"field":"version"}])).unwrap();
        assert_eq!(sort, Sort::by("version", true));
        let update = UpdateSpec::new().set("a", 1).inc("n", 2);
        assert_eq!(
            serde_json::to_value(&update).unwrap(),
            json!({"set":{"a":1},"inc":{"n":2}})
        );
    }

    #[test]
    fn update_parts_of_other_names_are_refused() {
        let update = serde_json::from_value::<UpdateSpec>(json!({"$set": {"a": 1}}));
        let message = update.unwrap_err().to_string();
        assert!(
            message.contains("unknown field `$set`, expected one of `set`"),
            "{message}"
        );
    }

    #[test]
    fn validate_refuses_overlapping_paths() {
        let twice = UpdateSpec::new().set("a", 1).unset("a");
        assert_eq!(
            twice.validate().unwrap_err().to_string(),
            "UpdateSpec emits the same path under multiple operators: ['a']"
        );
        let nested = UpdateSpec::new().set("a", 1).inc("a.b", 1);
        assert_eq!(
            nested.validate().unwrap_err().to_string(),
            "UpdateSpec emits a path and one of its ancestors: ['a', 'a.b']"
        );
        assert!(UpdateSpec::new()
            .set("ab", 1)
            .set("a", 2)
            .validate()
            .is_ok());
    }
}
