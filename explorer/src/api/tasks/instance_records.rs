//! What an instance's run recorded beside it: its triggers and its conversations, a page at a time.

use axum::extract::State;
use axum::Json;
use serde_json::Value;

use crate::api::extract::{Ids, TaskIds, Q};
use crate::data::instances;
use crate::http::blocking::blocking;
use crate::http::page::{Page, Window};
use crate::http::problem::ApiResult;
use crate::state::Shared;
use agent_env_store::document::{DocumentStore, Filter};

/// A page of `collection`'s documents whose `field` is `value`.
fn page_of(
    docs: &dyn DocumentStore,
    collection: &str,
    field: &str,
    value: &str,
    w: Window,
) -> ApiResult<Page> {
    let filter = Filter::eq(field, value);
    let total = docs.count(collection, &filter)?;
    let items = docs.query(
        collection,
        &filter,
        None,
        Some(w.limit as usize),
        w.offset as usize,
    )?;
    Ok(Page::new(
        items.into_iter().map(Value::Object).collect(),
        total,
        w,
    ))
}

/// An instance document's whole id.
fn id_of(doc: &agent_env_store::document::Document) -> &str {
    doc.get("instance_id").and_then(Value::as_str).unwrap_or("")
}

pub async fn triggers(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
    Q(q): Q,
) -> ApiResult<Json<Page>> {
    let (task, instance) = (ids.at(0)?.to_string(), ids.at(1)?.to_string());
    let window = Window::from_query(&q, 50)?;
    blocking(move || {
        let r = s.reading();
        // By the whole id: the path may give the short one.
        let answer = instances::get(r.docs(), &instance, Some(&task))
            .and_then(|d| page_of(r.docs(), "triggers", "instance_id", id_of(&d), window));
        r.page(answer)
    })
    .await
    .map(Json)
}

pub async fn conversations(State(s): State<Shared>, ids: Ids, Q(q): Q) -> ApiResult<Json<Page>> {
    let instance = ids.at(0)?.to_string();
    let window = Window::from_query(&q, 50)?;
    blocking(move || {
        let r = s.reading();
        let answer = instances::get(r.docs(), &instance, None).and_then(|d| {
            page_of(
                r.docs(),
                "conversations",
                "task_instance_id",
                id_of(&d),
                window,
            )
        });
        r.page(answer)
    })
    .await
    .map(Json)
}
