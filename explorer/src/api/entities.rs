//! `GET /api/v1/<collection>`, `/<collection>/{entity_id}`, `/<collection>/{entity_id}/versions`.

use axum::extract::State;
use axum::Json;
use serde_json::Value;

use super::extract::{Ids, Q};
use crate::data::entities::{self, check_sort_field, Collection, ListRequest};
use crate::http::blocking::blocking;
use crate::http::page::{Page, Window};
use crate::http::problem::ApiResult;
use crate::state::Shared;

pub async fn list(c: Collection, State(s): State<Shared>, Q(q): Q) -> ApiResult<Json<Page>> {
    let sort_by = q.get("sort_by").unwrap_or("created_at_utc").to_string();
    check_sort_field(&sort_by)?;
    let request = ListRequest {
        types: q
            .all("type")
            .into_iter()
            .filter(|t| !t.is_empty())
            .collect(),
        id_contains: q.get("id").filter(|s| !s.is_empty()).map(String::from),
        sort_by,
        descending: q.bool("descending", true)?,
        window: Window::from_query(&q, 50)?,
    };
    blocking(move || {
        let r = s.reading();
        r.page(entities::list(r.docs(), c, &request))
    })
    .await
    .map(Json)
}

pub async fn get_one(
    c: Collection,
    State(s): State<Shared>,
    ids: Ids,
    Q(q): Q,
) -> ApiResult<Json<Value>> {
    let id = ids.at(0)?.to_string();
    let version = q.opt_int("version", super::tasks::FIRST_VERSION)?;
    blocking(move || {
        let r = s.reading();
        let id = as_stored(r.docs(), c, id);
        r.document(entities::get(r.docs(), c, &id, version))
    })
    .await
    .map(Json)
}

pub async fn versions(
    c: Collection,
    State(s): State<Shared>,
    ids: Ids,
    Q(q): Q,
) -> ApiResult<Json<Page>> {
    let id = ids.at(0)?.to_string();
    let window = Window::from_query(&q, 100)?;
    blocking(move || {
        let r = s.reading();
        let id = as_stored(r.docs(), c, id);
        r.page(entities::versions(r.docs(), c, &id, window))
    })
    .await
    .map(Json)
}

/// A task's id as the store holds it (see [`entities::task_id_as_stored`]); another entity's as given.
fn as_stored(
    docs: &dyn agent_env_store::document::DocumentStore,
    c: Collection,
    id: String,
) -> String {
    match c.collection {
        "tasks" => entities::task_id_as_stored(docs, &id),
        _ => id,
    }
}
