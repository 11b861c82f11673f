//! The versioned collections (`artifacts`, `envs`, `tasks`, `agents`, `evals`): list the newest
//! version of each id, get one version, list an id's versions.

use agent_env_store::document::eval::{latest_order, window};
use agent_env_store::document::{reduce_to_latest, DocumentStore, Filter, Predicate, Sort};
use serde_json::Value;

use crate::http::page::{Page, Window};
use crate::http::problem::{ApiError, ApiResult};
use crate::http::shown::shown;

/// One versioned collection as the API names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Collection {
    /// The path segment: `/api/v1/<route>`.
    pub route: &'static str,
    /// The document collection.
    pub collection: &'static str,
    /// The word a message uses: `Task '<id>' (latest) not found`.
    pub label: &'static str,
}

/// Every versioned collection, in the original's order.
pub const COLLECTIONS: [Collection; 5] = [
    Collection {
        route: "artifacts",
        collection: "artifacts",
        label: "Artifact",
    },
    Collection {
        route: "envs",
        collection: "envs",
        label: "Env",
    },
    Collection {
        route: "tasks",
        collection: "tasks",
        label: "Task",
    },
    Collection {
        route: "agents",
        collection: "a2a_agents",
        label: "Agent",
    },
    Collection {
        route: "evals",
        collection: "evals",
        label: "Eval",
    },
];

/// What a list asks for.
#[derive(Debug, Clone)]
pub struct ListRequest {
    pub types: Vec<String>,
    pub id_contains: Option<String>,
    pub sort_by: String,
    pub descending: bool,
    pub window: Window,
}

/// The fields a list sorts by: those the versioned documents have (`name` and `type` may be
/// missing from some, which then sort as null).
pub const SORT_FIELDS: [&str; 5] = ["created_at_utc", "id", "name", "type", "version"];

/// A `sort_by` that is one of [`SORT_FIELDS`]; else a 422 naming them (a field no document has
/// would sort nothing, silently).
pub fn check_sort_field(field: &str) -> ApiResult<()> {
    if SORT_FIELDS.contains(&field) {
        return Ok(());
    }
    let quoted: Vec<String> = SORT_FIELDS.iter().map(|f| format!("'{f}'")).collect();
    Err(ApiError::invalid(
        &["query", "sort_by"],
        format!(
            "sort_by can't be '{field}': it should be one of {}",
            quoted.join(", ")
        ),
        "enum",
    ))
}

/// The newest version of each id, filtered, sorted and paged.
pub fn list(docs: &dyn DocumentStore, c: Collection, request: &ListRequest) -> ApiResult<Page> {
    let mut filter = Filter::default();
    if !request.types.is_empty() {
        let types = request.types.iter().cloned().map(Value::String).collect();
        filter = filter.and("type", Predicate::In(types));
    }
    let sort = Sort::by(&request.sort_by, request.descending).then("id", false);
    let w = request.window;
    let (items, total) = match &request.id_contains {
        None => docs.latest_per_id_page(
            c.collection,
            &filter,
            "id",
            "version",
            Some(&sort),
            Some(w.limit as usize),
            w.offset as usize,
        )?,
        Some(part) => {
            let latest = reduce_to_latest(
                docs.query(c.collection, &filter, None, None, 0)?,
                "id",
                "version",
            );
            let matching: Vec<_> = latest
                .into_iter()
                .filter(|d| {
                    d.get("id")
                        .and_then(Value::as_str)
                        .is_some_and(|id| id.contains(part.as_str()))
                })
                .collect();
            let total = matching.len() as u64;
            let page = window(
                matching,
                Some(&sort),
                latest_order,
                Some(w.limit as usize),
                w.offset as usize,
            );
            (page, total)
        }
    };
    Ok(Page::new(
        items.into_iter().map(Value::Object).collect(),
        total,
        w,
    ))
}

/// One version of `id` (the newest when `version` is none).
pub fn get(
    docs: &dyn DocumentStore,
    c: Collection,
    id: &str,
    version: Option<i64>,
) -> ApiResult<Value> {
    let found = match version {
        None => docs.latest_version(c.collection, id)?,
        Some(v) => docs.find_one(
            c.collection,
            &Filter::eq("id", id).and("version", Predicate::Eq(v.into())),
            None,
        )?,
    };
    found
        .map(Value::Object)
        .ok_or_else(|| ApiError::not_found(not_found(c, id, version)))
}

/// The id a task is stored under, for `id` as `agent-env task list` may print it: a bundle run's task
/// is shown without its `@local/` prefix, so a bare id no task has is taken as the `@local/` one when
/// that one exists. Any other id is as given.
pub fn task_id_as_stored(docs: &dyn DocumentStore, id: &str) -> String {
    stored_task_id(docs, id).unwrap_or_else(|| id.to_string())
}

/// The id a task given as `id` is stored under (`id`, else `@local/<id>`), as
/// [`task_id_as_stored`] reads it; `None` when `docs` hold no task under either.
pub fn stored_task_id(docs: &dyn DocumentStore, id: &str) -> Option<String> {
    let tasks = COLLECTIONS[2].collection;
    let has = |id: &str| {
        docs.count(tasks, &Filter::eq("id", id))
            .is_ok_and(|n| n > 0)
    };
    let local = format!("@local/{id}");
    if has(id) {
        Some(id.to_string())
    } else if !id.starts_with('@') && has(&local) {
        Some(local)
    } else {
        None
    }
}

/// `Task '<id>' (latest) not found` / `Task '<id>' version 3 not found`.
pub fn not_found(c: Collection, id: &str, version: Option<i64>) -> String {
    let label = match version {
        None => "(latest)".to_string(),
        Some(v) => format!("version {v}"),
    };
    format!("{} '{}' {label} not found", c.label, shown(id))
}

/// Every version of `id`, newest first, paged; 404 when there is none.
pub fn versions(docs: &dyn DocumentStore, c: Collection, id: &str, w: Window) -> ApiResult<Page> {
    let filter = Filter::eq("id", id);
    let total = docs.count(c.collection, &filter)?;
    if total == 0 {
        return Err(ApiError::not_found(format!(
            "{} '{}' not found: no version of it is stored",
            c.label,
            shown(id)
        )));
    }
    let items = docs.query(
        c.collection,
        &filter,
        Some(&Sort::by("version", true)),
        Some(w.limit as usize),
        w.offset as usize,
    )?;
    Ok(Page::new(
        items.into_iter().map(Value::Object).collect(),
        total,
        w,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_fields_are_the_documents_own() {
        for ok in SORT_FIELDS {
            assert!(check_sort_field(ok).is_ok(), "{ok}");
        }
        for bad in ["", "nosuch", "a;drop", "$where", "context.metadata.x"] {
            assert!(check_sort_field(bad).is_err(), "{bad}");
        }
        let e = check_sort_field("nosuch").unwrap_err();
        assert_eq!(
            e.detail[0]["msg"],
            "sort_by can't be 'nosuch': it should be one of 'created_at_utc', 'id', 'name', 'type', 'version'"
        );
    }

    #[test]
    fn not_found_names_the_version_asked_for() {
        assert_eq!(
            not_found(COLLECTIONS[2], "@local/x", None),
            "Task '@local/x' (latest) not found"
        );
        assert_eq!(
            not_found(COLLECTIONS[0], "a", Some(3)),
            "Artifact 'a' version 3 not found"
        );
    }
}
