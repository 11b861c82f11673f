//! The lists of instances: a task's runs (as summaries), a task's instance documents, and every
//! instance (as summaries), a page at a time.

use axum::extract::State;
use axum::Json;
use serde::Serialize;
use serde_json::Value;

use super::known_workflow::known_workflow_id;
use super::task_lookup::require_task;
use crate::api::extract::{TaskIds, Q};
use crate::data::entities;
use crate::data::instances::{self, InstanceFilter, Listed, Paging, Shape};
use crate::data::records::{DocumentStores, Reading};
use crate::http::blocking::{blocking, blocking_scan};
use crate::http::page::Page;
use crate::http::problem::ApiResult;
use crate::state::Shared;

pub async fn list_runs(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
    Q(q): Q,
) -> ApiResult<Json<InstancePage>> {
    let task_id = ids.at(0)?.to_string();
    let paging = Paging::from_query(&q, 50)?;
    require_task(&s, &task_id).await?;
    let which = InstanceFilter {
        task_id: Some(task_id),
        ..InstanceFilter::default()
    };
    summaries_page(s, which, paging).await
}

/// One page of the instances `which` selects as summaries, each with the `workflow_id` of the
/// explorer's run that recorded it ([`known_workflow_id`]).
async fn summaries_page(
    s: Shared,
    which: InstanceFilter,
    paging: Paging,
) -> ApiResult<Json<InstancePage>> {
    // The summaries read the stores too (each instance's task version): on the blocking pool, with
    // the listing, since a hosted store blocks on the explorer's own runtime.
    blocking_scan(move || {
        let r = s.reading();
        let docs = r.docs();
        let judge = s.judge(docs);
        let mut listed = instances::list(docs, &which, &paging, &judge, Shape::Documents)?;
        listed.page.items = listed
            .page
            .items
            .into_iter()
            .map(|doc| {
                let Value::Object(doc) = doc else { return doc };
                let mut summary = instances::summary(&doc, &judge);
                summary["workflow_id"] = known_workflow_id(&s, &doc);
                summary
            })
            .collect();
        InstancePage::of(&r, Ok(listed))
    })
    .await
    .map(Json)
}

pub async fn list_instances(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
    Q(q): Q,
) -> ApiResult<Json<InstancePage>> {
    let task_id = ids.at(0)?.to_string();
    let paging = Paging::from_query(&q, 50)?;
    let which = InstanceFilter {
        task_id: Some(task_id.clone()),
        ..InstanceFilter::default()
    }
    .with_status(&q.all("status"))?;
    require_task(&s, &task_id).await?;
    scan_instances(s, which, paging, Shape::Documents).await
}

pub async fn list_all_instances(State(s): State<Shared>, Q(q): Q) -> ApiResult<Json<InstancePage>> {
    let paging = Paging::from_query(&q, 50)?;
    let task_id = match q.get("task_id").filter(|t| !t.is_empty()) {
        Some(given) => {
            let (s, given) = (s.clone(), given.to_string());
            Some(
                blocking(move || Ok(entities::task_id_as_stored(s.reading().docs(), &given)))
                    .await?,
            )
        }
        None => None,
    };
    let which = InstanceFilter {
        task_id,
        ..InstanceFilter::default()
    }
    .with_status(&q.all("status"))?;
    summaries_page(s, which, paging).await
}

/// One page of the instances `which` selects, each judged, in `shape`.
async fn scan_instances(
    s: Shared,
    which: InstanceFilter,
    paging: Paging,
    shape: Shape,
) -> ApiResult<Json<InstancePage>> {
    blocking_scan(move || {
        let r = s.reading();
        let judge = s.judge(r.docs());
        InstancePage::of(
            &r,
            instances::list(r.docs(), &which, &paging, &judge, shape),
        )
    })
    .await
    .map(Json)
}

/// A page of instances: the envelope every list answers with, and `next_cursor`, where the next
/// page starts (`null` on the last page).
#[derive(Debug, Serialize)]
pub struct InstancePage {
    #[serde(flatten)]
    page: Page,
    next_cursor: Option<String>,
}

impl InstancePage {
    /// The answer of `listed`, read through `r` (which says what it left out).
    fn of(r: &Reading<DocumentStores>, listed: ApiResult<Listed>) -> ApiResult<InstancePage> {
        let (page, next_cursor) = match listed {
            Ok(listed) => (Ok(listed.page), listed.next_cursor),
            Err(e) => (Err(e), None),
        };
        Ok(InstancePage {
            page: r.page(page)?,
            next_cursor,
        })
    }
}
