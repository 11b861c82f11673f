//! The UI: server-rendered page shells with a little vanilla JavaScript that reads the API. Every
//! asset is compiled into the binary (`include_str!`); nothing is fetched from anywhere else.

use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::http::problem::ApiError;
use crate::state::Shared;

/// The page routes.
pub fn router() -> Router<Shared> {
    Router::new()
        .route("/", get(|| async { page("Home", "home") }))
        .route(
            "/static/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/static/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }),
        )
}

const APP_JS: &str = include_str!("assets/app.js");
const STYLE_CSS: &str = include_str!("assets/style.css");

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

fn page(title: &str, view: &str) -> Html<String> {
    Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title} · agent-env explorer</title><link rel=\"stylesheet\" href=\"/static/style.css\"></head><body data-view=\"{view}\"><main id=\"main\"></main><script src=\"/static/app.js\"></script></body></html>"
    ))
}

/// What answers a path nothing serves: JSON under `/api`, a page elsewhere.
pub async fn fallback(request: Request) -> Response {
    let path = request.uri().path();
    if path == "/api" || path.starts_with("/api/") {
        return ApiError::not_found("Not Found").into_response();
    }
    (StatusCode::NOT_FOUND, page("Not found", "not-found")).into_response()
}
