//! The UI: each page is a small server-rendered shell (title, navigation, the view's name and id)
//! and one script, `app.js`, that fills it from the API and keeps live pages live. Every asset is
//! compiled into the binary (`include_str!`); nothing is fetched from anywhere else, so it works
//! offline.

mod shell;

use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::api::extract::Ids;
use crate::state::Shared;
pub use shell::{page, View};

const APP_JS: &str = include_str!("assets/app.js");
const STYLE_CSS: &str = include_str!("assets/style.css");

/// The pages and their assets.
pub fn router() -> Router<Shared> {
    Router::new()
        .route("/", get(|| async { page(View::Home, None) }))
        .route("/bundles", get(|| async { page(View::Bundles, None) }))
        .route("/tasks", get(|| async { page(View::Tasks, None) }))
        .route(
            "/tasks/{id}",
            get(|ids: Ids| async move { with_id(View::Task, ids) }),
        )
        .route(
            "/runs/{id}",
            get(|ids: Ids| async move { with_id(View::Run, ids) }),
        )
        .route(
            "/run-groups/{id}",
            get(|ids: Ids| async move { with_id(View::RunGroup, ids) }),
        )
        .route(
            "/instances/{id}",
            get(|ids: Ids| async move { with_id(View::Instance, ids) }),
        )
        .route("/artifacts", get(|| async { page(View::Artifacts, None) }))
        .route(
            "/artifacts/{id}",
            get(|ids: Ids| async move { with_id(View::Artifact, ids) }),
        )
        .route("/plugins", get(|| async { page(View::Plugins, None) }))
        .route(
            "/plugins/{id}",
            get(|ids: Ids| async move { with_id(View::Plugin, ids) }),
        )
        .route("/config", get(|| async { page(View::Config, None) }))
        .route(
            "/static/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/static/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }),
        )
}

fn with_id(view: View, ids: Ids) -> Response {
    match ids.at(0) {
        Ok(id) => page(view, Some(id)).into_response(),
        Err(e) => e.into_response(),
    }
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// What answers a path nothing serves: JSON under `/api`, a page elsewhere.
pub async fn fallback(request: Request) -> Response {
    let path = request.uri().path();
    if path == "/api" || path.starts_with("/api/") {
        return crate::http::errors::no_route(request.method(), path).into_response();
    }
    (StatusCode::NOT_FOUND, page(View::NotFound, None)).into_response()
}
