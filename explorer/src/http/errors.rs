//! Every failure under `/api` answers `{"detail": sentence}`, including the ones the router and the
//! body reader give before a handler runs: an unknown path, a method a path does not take, a body
//! too large. Plugin routes are forwarded before this and answer as their plugin does.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::problem::ApiError;
use super::shown::shown;

/// The largest request body the API reads (axum's default limit).
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// The first words of the answer to a path no route serves.
pub const NO_ROUTE: &str = "Not Found: no API route serves";

/// The 404 for `method path` under `/api`: a path ending in `/` is told that no route does (and the
/// path without it, when a route serves that); any other, the rule ids in paths follow.
pub fn no_route(method: &Method, path: &str) -> ApiError {
    let shown_path = shown(path);
    let without = path.trim_end_matches('/');
    if without.len() < path.len() {
        let instead = if without.is_empty() || crate::api::methods_at(without).is_empty() {
            String::new()
        } else {
            format!(": ask for {}", shown(without))
        };
        return ApiError::not_found(format!(
            "{NO_ROUTE} {method} {shown_path}: no API path ends in '/'{instead}; /openapi.json lists the routes"
        ));
    }
    ApiError::not_found(format!(
        "{NO_ROUTE} {method} {shown_path}. An id in a path is one percent-encoded segment: write a '/' in it as %2F (/api/v1/tasks/team%2Fhello for the task team/hello); /openapi.json lists the routes"
    ))
}

/// Rewrites an `/api` failure the router or the body reader answered in its own shape, and refuses
/// with 415 a body sent to an API route as anything but JSON ([`not_json`]).
pub async fn json_errors(request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    let method = request.method().clone();
    if is_api(&path) && crate::api::methods_at(&path).contains(&method) {
        if let Some(refused) = not_json(request.headers()) {
            return refused.into_response();
        }
    }
    let response = next.run(request).await;
    if response.status() == StatusCode::METHOD_NOT_ALLOWED {
        // Any path's, a page's and /openapi.json's too: the router's own 405 has no body.
        let mut methods: Vec<String> = crate::api::methods_at(&path)
            .iter()
            .map(|m| m.to_string())
            .collect();
        if methods.is_empty() && !is_api(&path) {
            // Outside the API only pages and /openapi.json are served, each by GET alone (the
            // router writes its `Allow` after this, and only when none is set).
            methods = vec![Method::GET.to_string(), Method::HEAD.to_string()];
        }
        return method_not_allowed(&method, &methods);
    }
    if !is_api(&path) {
        return response;
    }
    match response.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request body is larger than the {} MB the API reads; send a smaller one",
                MAX_BODY_BYTES / (1024 * 1024)
            ),
        )
        .into_response(),
        status if (status.is_client_error() || status.is_server_error()) && !is_json(&response) => {
            let text = body_text(response).await;
            let detail = if text.trim().is_empty() {
                status
                    .canonical_reason()
                    .unwrap_or("the request failed")
                    .to_string()
            } else {
                text
            };
            ApiError::new(status, detail).into_response()
        }
        _ => response,
    }
}

/// 415 for a request body that is not sent as JSON: a `Content-Type` other than
/// `application/json` (`text/plain`, a form's), or a body with none. Only a request that has a body
/// is judged by its type: one without (a GET, a POST read as `{}`) is served whatever type it names.
fn not_json(headers: &HeaderMap) -> Option<ApiError> {
    let has_body = headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|n| n.trim() != "0");
    if !has_body {
        return None;
    }
    let sent_as = match headers.get(header::CONTENT_TYPE) {
        Some(value) => String::from_utf8_lossy(value.as_bytes()).into_owned(),
        None => "no Content-Type".to_string(),
    };
    let media = sent_as.split(';').next().unwrap_or("").trim();
    if media.eq_ignore_ascii_case("application/json") {
        return None;
    }
    Some(ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        format!(
            "the request body is sent as {}; the API reads JSON only: send it with Content-Type: application/json",
            super::shown::shown(&sent_as)
        ),
    ))
}

fn is_api(path: &str) -> bool {
    path == "/api" || path.starts_with("/api/")
}

/// 405 naming the methods the path takes (also in an `Allow` header, `GET, HEAD`: one form for
/// every path).
pub fn method_not_allowed(method: &Method, methods: &[String]) -> Response {
    let detail = if methods.is_empty() {
        format!("Method Not Allowed: this path does not take {method}")
    } else {
        format!(
            "Method Not Allowed: this path does not take {method}; it takes {}",
            methods.join(", ")
        )
    };
    let mut answer = ApiError::new(StatusCode::METHOD_NOT_ALLOWED, detail).into_response();
    if let Ok(allow) = HeaderValue::from_str(&methods.join(", ")) {
        if !methods.is_empty() {
            answer.headers_mut().insert(header::ALLOW, allow);
        }
    }
    answer
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|t| t.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json") || t.starts_with("text/event-stream"))
}

/// The body of a short error answer as text (at most 4 kB of it).
async fn body_text(response: Response) -> String {
    let body: Body = response.into_body();
    match axum::body::to_bytes(body, 4096).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
        Err(_) => String::new(),
    }
}
