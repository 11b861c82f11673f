//! The semantics of the query algebra (`docs/protocol.md`, Documents), evaluated on JSON documents: path
//! resolution, predicate matching, update application and the two sort orders. Every document store may
//! use it; the SQLite store evaluates everything but index narrowing here.

use std::cmp::Ordering;

use serde_json::{Map, Number, Value};

use super::query::{Document, Filter, Predicate, Sort, UpdateSpec};
use crate::error::{StoreError, StoreResult};

/// The values a dotted path resolves to; empty when the path is absent. A numeric segment indexes an
/// array; any other segment applied to an array traverses its elements.
pub fn resolve<'a>(doc: &'a Document, path: &str) -> Vec<&'a Value> {
    let segments: Vec<&str> = path.split('.').collect();
    let mut out = Vec::new();
    if let Some((first, rest)) = segments.split_first() {
        if let Some(v) = doc.get(*first) {
            resolve_in(v, rest, &mut out);
        }
    }
    out
}

fn resolve_in<'a>(value: &'a Value, segments: &[&str], out: &mut Vec<&'a Value>) {
    let Some((seg, rest)) = segments.split_first() else {
        out.push(value);
        return;
    };
    match value {
        Value::Object(map) => {
            if let Some(v) = map.get(*seg) {
                resolve_in(v, rest, out);
            }
        }
        Value::Array(items) => {
            if let Ok(index) = seg.parse::<usize>() {
                if let Some(v) = items.get(index) {
                    resolve_in(v, rest, out);
                }
            } else {
                for item in items.iter().filter(|i| i.is_object()) {
                    resolve_in(item, segments, out);
                }
            }
        }
        _ => {}
    }
}

/// JSON equality with numbers compared by value (`1 == 1.0`).
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => number_cmp(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn number_cmp(x: &Number, y: &Number) -> Option<Ordering> {
    match (x.as_i64(), y.as_i64()) {
        (Some(p), Some(q)) => Some(p.cmp(&q)),
        _ => x.as_f64()?.partial_cmp(&y.as_f64()?),
    }
}

/// Order of two values of the same comparable type (numbers, strings, booleans); `None` otherwise.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => number_cmp(x, y),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

fn eq_matches(values: &[&Value], target: &Value) -> bool {
    if values.is_empty() {
        return target.is_null();
    }
    values.iter().any(|v| {
        json_eq(v, target)
            || matches!(v, Value::Array(items) if items.iter().any(|i| json_eq(i, target)))
    })
}

fn any_compares(values: &[&Value], bound: &Value, accept: fn(Ordering) -> bool) -> bool {
    values.iter().any(|v| {
        let direct = compare(v, bound).is_some_and(accept);
        let element = matches!(v, Value::Array(items)
            if items.iter().any(|i| compare(i, bound).is_some_and(accept)));
        direct || element
    })
}

/// Whether the values a path resolved to satisfy one predicate.
pub fn predicate_matches(values: &[&Value], predicate: &Predicate) -> bool {
    let present = !values.is_empty();
    let any_null = values.iter().any(|v| v.is_null());
    match predicate {
        Predicate::Eq(target) => eq_matches(values, target),
        Predicate::Ne(target) => present && !eq_matches(values, target),
        Predicate::In(list) => {
            present
                && values.iter().any(|v| {
                    list.iter().any(|c| json_eq(v, c))
                        || matches!(v, Value::Array(items)
                            if items.iter().any(|i| list.iter().any(|c| json_eq(i, c))))
                })
        }
        Predicate::Gte(bound) => any_compares(values, bound, Ordering::is_ge),
        Predicate::Lte(bound) => any_compares(values, bound, Ordering::is_le),
        Predicate::Exists(wanted) => present == *wanted,
        Predicate::LteOrAbsent(bound) => {
            !present || any_null || any_compares(values, bound, Ordering::is_le)
        }
        Predicate::AbsentOrNull => !present || any_null,
    }
}

/// Whether a document satisfies every condition of a filter.
pub fn matches(doc: &Document, filter: &Filter) -> bool {
    filter.conditions.iter().all(|(path, predicates)| {
        let values = resolve(doc, path);
        predicates.iter().all(|p| predicate_matches(&values, p))
    })
}

/// Applies an update in the order set, unset, inc, add_to_set, push.
pub fn apply_update(doc: &mut Document, update: &UpdateSpec) -> StoreResult<()> {
    update.validate()?;
    for (path, value) in &update.set {
        *slot(doc, path)? = value.clone();
    }
    for path in &update.unset {
        unset(doc, path);
    }
    for (path, by) in &update.inc {
        let target = slot(doc, path)?;
        *target = add_numbers(path, target, by)?;
    }
    for (path, value) in &update.add_to_set {
        let items = array_slot(doc, path, "add_to_set")?;
        if !items.iter().any(|i| json_eq(i, value)) {
            items.push(value.clone());
        }
    }
    for (path, value) in &update.push {
        array_slot(doc, path, "push")?.push(value.clone());
    }
    Ok(())
}

/// The document an upsert inserts: the filter's `Eq` conditions as paths, then the update.
pub fn synthesize_upsert(filter: &Filter, update: &UpdateSpec) -> StoreResult<Document> {
    let mut doc = Document::new();
    for (path, value) in filter.equalities() {
        *slot(&mut doc, path)? = value.clone();
    }
    apply_update(&mut doc, update)?;
    Ok(doc)
}

/// The value at `path`, created (as `null`, through new maps) when missing.
fn slot<'a>(doc: &'a mut Document, path: &str) -> StoreResult<&'a mut Value> {
    let mut segments = path.split('.');
    let first = segments.next().unwrap_or_default();
    let mut current = doc.entry(first.to_string()).or_insert(Value::Null);
    for seg in segments {
        current = match current {
            Value::Array(items) => match seg.parse::<usize>() {
                Ok(i) if i < items.len() => &mut items[i],
                Ok(i) => {
                    return Err(StoreError::InvalidValue(format!(
                        "cannot set '{path}': index {i} is past the end of an array of {}",
                        items.len()
                    )))
                }
                Err(_) => {
                    return Err(StoreError::InvalidValue(format!(
                        "cannot set '{path}': '{seg}' is not an index of the array it names"
                    )))
                }
            },
            other => {
                if !other.is_object() {
                    *other = Value::Object(Map::new());
                }
                let Value::Object(map) = other else {
                    return Err(StoreError::Internal(format!(
                        "cannot set '{path}': a map could not be made at '{seg}'"
                    )));
                };
                map.entry(seg.to_string()).or_insert(Value::Null)
            }
        };
    }
    Ok(current)
}

fn array_slot<'a>(doc: &'a mut Document, path: &str, op: &str) -> StoreResult<&'a mut Vec<Value>> {
    let target = slot(doc, path)?;
    if target.is_null() {
        *target = Value::Array(Vec::new());
    }
    match target {
        Value::Array(items) => Ok(items),
        _ => Err(StoreError::InvalidValue(format!(
            "cannot {op} to '{path}': it holds a value that is not an array"
        ))),
    }
}

fn unset(doc: &mut Document, path: &str) {
    let segments: Vec<&str> = path.split('.').collect();
    let Some((last, parents)) = segments.split_last() else {
        return;
    };
    if parents.is_empty() {
        doc.remove(*last);
        return;
    }
    let Some(mut current) = doc.get_mut(parents[0]) else {
        return;
    };
    for seg in &parents[1..] {
        let next = match current {
            Value::Object(map) => map.get_mut(*seg),
            Value::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
            _ => None,
        };
        match next {
            Some(v) => current = v,
            None => return,
        }
    }
    match current {
        Value::Object(map) => {
            map.remove(*last);
        }
        Value::Array(items) => {
            if let Some(v) = last.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                *v = Value::Null;
            }
        }
        _ => {}
    }
}

fn add_numbers(path: &str, current: &Value, by: &Value) -> StoreResult<Value> {
    let zero = Value::from(0);
    let current = if current.is_null() { &zero } else { current };
    let (Value::Number(a), Value::Number(b)) = (current, by) else {
        return Err(StoreError::InvalidValue(format!(
            "cannot inc '{path}': both the field and the amount must be numbers"
        )));
    };
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        if let Some(sum) = x.checked_add(y) {
            return Ok(Value::from(sum));
        }
    }
    let sum = a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0);
    Ok(Number::from_f64(sum).map_or(Value::Null, Value::Number))
}

/// Mongo's order of types: null, numbers, strings, objects, arrays, booleans.
fn mongo_rank(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Number(_) => 1,
        Value::String(_) => 2,
        Value::Object(_) => 3,
        Value::Array(_) => 4,
        Value::Bool(_) => 5,
    }
}

fn same_type_order(a: &Value, b: &Value) -> Ordering {
    compare(a, b).unwrap_or_else(|| a.to_string().cmp(&b.to_string()))
}

/// The value a sort key sees: the first value the path resolves to, or null when absent.
fn sort_value<'a>(doc: &'a Document, path: &str) -> &'a Value {
    resolve(doc, path)
        .into_iter()
        .next()
        .unwrap_or(&Value::Null)
}

/// `query`'s order: absent and null lowest (first ascending, last descending), types in Mongo's order.
pub fn query_order(a: &Document, b: &Document, sort: &Sort) -> Ordering {
    for key in &sort.keys {
        let (x, y) = (sort_value(a, &key.field), sort_value(b, &key.field));
        let ord = mongo_rank(x)
            .cmp(&mongo_rank(y))
            .then_with(|| same_type_order(x, y));
        let ord = if key.descending { ord.reverse() } else { ord };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

/// The original orders mixed types by Python type name: bool, dict, float/int, list, str.
fn type_name_rank(v: &Value) -> u8 {
    match v {
        Value::Bool(_) => 0,
        Value::Object(_) => 1,
        Value::Number(_) => 2,
        Value::Array(_) => 3,
        Value::String(_) | Value::Null => 4,
    }
}

/// `latest_per_id`'s order: absent and null last in both directions, mixed types by type name first.
pub fn latest_order(a: &Document, b: &Document, sort: &Sort) -> Ordering {
    for key in &sort.keys {
        let (x, y) = (sort_value(a, &key.field), sort_value(b, &key.field));
        let ord = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => {
                let ord = type_name_rank(x)
                    .cmp(&type_name_rank(y))
                    .then_with(|| same_type_order(x, y));
                if key.descending {
                    ord.reverse()
                } else {
                    ord
                }
            }
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

/// Sorts (when asked), skips `offset`, then keeps `limit` (0 or none keeps all).
pub fn window(
    mut docs: Vec<Document>,
    sort: Option<&Sort>,
    order: fn(&Document, &Document, &Sort) -> Ordering,
    limit: Option<usize>,
    offset: usize,
) -> Vec<Document> {
    if let Some(sort) = sort {
        docs.sort_by(|a, b| order(a, b, sort));
    }
    let rest = docs.into_iter().skip(offset);
    match limit {
        Some(n) if n > 0 => rest.take(n).collect(),
        _ => rest.collect(),
    }
}

/// The ids of the rows `offset..offset + limit` of `keyed` (each row's id, in insertion order, and a
/// document of the fields it is sorted by) in `sort`'s order as [`window`] puts whole documents in
/// it, ties by id: what a store that reads only its rows' sort keys gives a page from. Only the rows
/// up to the window's end are sorted; the rest are set apart in linear time.
pub fn keyed_window(
    mut keyed: Vec<(i64, Document)>,
    sort: Option<&Sort>,
    limit: usize,
    offset: usize,
) -> Vec<i64> {
    let order = |a: &(i64, Document), b: &(i64, Document)| -> Ordering {
        sort.map_or(Ordering::Equal, |s| query_order(&a.1, &b.1, s))
            .then(a.0.cmp(&b.0))
    };
    let end = offset.saturating_add(limit).min(keyed.len());
    if end == 0 {
        return Vec::new();
    }
    if end < keyed.len() {
        keyed.select_nth_unstable_by(end - 1, order);
        keyed.truncate(end);
    }
    keyed.sort_by(order);
    keyed
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(id, _)| id)
        .collect()
}

/// `find_one` over every match: the first of `docs` in `query`'s order by `sort` (of equals, the one
/// read first), or without a sort the first read.
pub fn first(docs: Vec<Document>, sort: Option<&Sort>) -> Option<Document> {
    match sort {
        Some(sort) => docs.into_iter().min_by(|a, b| query_order(a, b, sort)),
        None => docs.into_iter().next(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> Document {
        match v {
            Value::Object(m) => m,
            _ => Document::new(),
        }
    }

    #[test]
    fn predicates_follow_mongo() {
        let d = doc(json!({"tags":["a","b"],"n":3,"s":null,"tasks":[{"id":"x"},{"id":"y"}]}));
        let m = |path: &str, p: Predicate| matches(&d, &Filter::default().and(path, p));
        assert!(m("tags", Predicate::Eq(json!("a"))));
        assert!(m("tags", Predicate::Eq(json!(["a", "b"]))));
        assert!(m("absent", Predicate::Eq(Value::Null)));
        assert!(!m("absent", Predicate::Ne(json!(1))));
        assert!(m("n", Predicate::Ne(json!(4))));
        assert!(m("n", Predicate::Eq(json!(3.0))));
        assert!(m("tags", Predicate::In(vec![json!("b")])));
        assert!(!m("absent", Predicate::In(vec![Value::Null])));
        assert!(m("n", Predicate::Gte(json!(3))) && !m("n", Predicate::Gte(json!("3"))));
        assert!(m("s", Predicate::AbsentOrNull) && m("zz", Predicate::AbsentOrNull));
        assert!(
            m("zz", Predicate::LteOrAbsent(json!(1))) && !m("n", Predicate::LteOrAbsent(json!(2)))
        );
        assert!(m("tasks.id", Predicate::Eq(json!("y"))));
        assert!(
            m("tasks.1.id", Predicate::Eq(json!("y")))
                && !m("tasks.0.id", Predicate::Eq(json!("y")))
        );
        assert!(m("s", Predicate::Exists(true)) && m("zz", Predicate::Exists(false)));
    }

    #[test]
    fn updates_apply_in_order() {
        let mut d = doc(json!({"a":1,"tags":["x"],"list":[{"state":"new"},{"state":"new"}]}));
        let u = UpdateSpec::new()
            .set("b.c", 2)
            .unset("a")
            .inc("n", 5)
            .add_to_set("tags", "x")
            .push("log", "p")
            .set("list.0.state", "done");
        apply_update(&mut d, &u).unwrap();
        assert_eq!(
            Value::Object(d),
            json!({"b":{"c":2},"n":5,"tags":["x"],"log":["p"],"list":[{"state":"done"},{"state":"new"}]})
        );
    }

    #[test]
    fn sort_orders_differ_on_absent_values() {
        let a = doc(json!({"r": 1}));
        let none = doc(json!({}));
        let asc = Sort::by("r", false);
        let desc = Sort::by("r", true);
        assert_eq!(query_order(&none, &a, &asc), Ordering::Less);
        assert_eq!(query_order(&none, &a, &desc), Ordering::Greater);
        assert_eq!(latest_order(&none, &a, &asc), Ordering::Greater);
        assert_eq!(latest_order(&none, &a, &desc), Ordering::Greater);
    }

    #[test]
    fn the_first_match_is_the_least_in_query_order_else_the_first_read() {
        let docs = || {
            vec![
                doc(json!({"n": "a", "r": 2})),
                doc(json!({"n": "b", "r": 1})),
                doc(json!({"n": "c", "r": 1})),
            ]
        };
        let name = |d: Option<Document>| d.and_then(|d| d.get("n").cloned());
        assert_eq!(
            name(first(docs(), Some(&Sort::by("r", false)))),
            Some(json!("b"))
        );
        assert_eq!(
            name(first(docs(), Some(&Sort::by("r", true)))),
            Some(json!("a"))
        );
        assert_eq!(name(first(docs(), None)), Some(json!("a")));
        assert_eq!(first(Vec::new(), None), None);
    }
}
