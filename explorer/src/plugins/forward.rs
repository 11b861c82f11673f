//! The middleware that puts explorer plugins' routes before the explorer's own: a request matching a
//! plugin route becomes an `explorer.request` call, and the plugin's answer becomes the response.
//! Everything else goes on to the core routes. It runs inside the guard, so the host, cross-site
//! and header rules hold for plugin routes too.

use std::collections::BTreeMap;
use std::sync::Arc;

use agent_env_protocol::explorer::{ExplorerRequestParams, ExplorerResponse};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use tokio::sync::watch;

use super::bridge::{ExplorerPlugins, ForwardError};
use crate::http::problem::ApiError;

/// The largest request body forwarded to a plugin.
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// What the middleware needs: the plugins, and whether their routes are loaded yet.
#[derive(Clone)]
pub struct PluginRouting {
    pub plugins: Arc<ExplorerPlugins>,
    /// Turns true once the routes table is built; requests wait for it, so a plugin's literal route
    /// under a core prefix is never answered by the core route while plugins start.
    pub loaded: watch::Receiver<bool>,
}

/// The middleware.
pub async fn forward(
    State(routing): State<PluginRouting>,
    request: Request,
    next: Next,
) -> Response {
    let mut loaded = routing.loaded.clone();
    let _ = loaded.wait_for(|done| *done).await;
    let Some(table) = routing.plugins.table() else {
        return next.run(request).await;
    };
    let method = request.method().as_str().to_string();
    let path = request.uri().path().to_string();
    let Some((index, route, path_params)) = table.find(&method, &path) else {
        let plugin_methods = table.methods_at(&path);
        let answer = next.run(request).await;
        // A plugin's path asked with a method it does not declare, which no core route serves
        // either: a 405 naming the plugin's methods, not the page's 404.
        if answer.status() == StatusCode::NOT_FOUND && !plugin_methods.is_empty() {
            let method = axum::http::Method::from_bytes(method.as_bytes())
                .unwrap_or(axum::http::Method::GET);
            return crate::http::errors::method_not_allowed(&method, &plugin_methods);
        }
        return answer;
    };
    let mounted = &table.mounted[index];
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(body) => body,
        Err(_) => {
            return ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the request body is over {MAX_BODY_BYTES} bytes, the most forwarded to an explorer plugin"),
            )
            .into_response()
        }
    };
    let (text, base64_body) = if body.is_empty() {
        (None, None)
    } else {
        match std::str::from_utf8(&body) {
            Ok(text) => (Some(text.to_string()), None),
            Err(_) => (
                None,
                Some(base64::engine::general_purpose::STANDARD.encode(&body)),
            ),
        }
    };
    let params = ExplorerRequestParams {
        name: mounted.name.clone(),
        class: mounted.class.clone(),
        route: route.path.clone(),
        method,
        path,
        path_params,
        query: parts.uri.query().unwrap_or("").to_string(),
        headers: headers_of(&parts.headers),
        body: text,
        body_base64: base64_body,
    };
    let plugins = routing.plugins.clone();
    let answer = tokio::task::spawn_blocking(move || plugins.forward(index, params)).await;
    match answer {
        Ok(Ok(answer)) => match response_of(answer) {
            Ok(response) => response,
            Err(problem) => failure(ForwardError::BadAnswer {
                name: mounted.name.clone(),
                package: mounted.package.clone(),
                problem,
            }),
        },
        Ok(Err(error)) => failure(error),
        Err(join) => ApiError::internal(format!(
            "the thread forwarding to the explorer plugin '{}' failed: {join}",
            mounted.name
        ))
        .into_response(),
    }
}

/// The request's headers, names lowercased, a repeated header's values joined with `, `.
fn headers_of(headers: &HeaderMap) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        out.entry(name.as_str().to_string())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    out
}

/// The plugin's answer as a response, or what is wrong with it.
fn response_of(answer: ExplorerResponse) -> Result<Response, String> {
    let status = StatusCode::from_u16(answer.status)
        .ok()
        .filter(|s| (100..=599).contains(&s.as_u16()))
        .ok_or_else(|| {
            format!(
                "status {}, which is not an HTTP status (100 to 599)",
                answer.status
            )
        })?;
    let body = match (answer.body, answer.body_base64) {
        (Some(_), Some(_)) => return Err("both 'body' and 'body_base64'".into()),
        (Some(text), None) => text.into_bytes(),
        (None, Some(encoded)) => base64::engine::general_purpose::STANDARD
            .decode(encoded.as_bytes())
            .map_err(|e| format!("a 'body_base64' that is not base64 ({e})"))?,
        (None, None) => Vec::new(),
    };
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    for (name, value) in &answer.headers {
        let name = HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes())
            .map_err(|_| format!("the header name '{name}', which HTTP does not allow"))?;
        if matches!(
            name.as_str(),
            "content-length" | "transfer-encoding" | "connection" | "keep-alive" | "upgrade"
        ) {
            continue;
        }
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("a value of the header '{name}' that HTTP does not allow"))?;
        headers.append(name, value);
    }
    if !headers.contains_key(header::CONTENT_TYPE) {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
    }
    Ok(response)
}

/// The answer to a request its plugin could not answer.
fn failure(error: ForwardError) -> Response {
    let status = match error {
        ForwardError::Timeout { .. } => StatusCode::GATEWAY_TIMEOUT,
        ForwardError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
        ForwardError::Failed { .. } | ForwardError::BadAnswer { .. } => StatusCode::BAD_GATEWAY,
    };
    ApiError::new(status, error.to_string()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_becomes_a_response() {
        let answer = ExplorerResponse::html("<p>hi</p>").header("X-Thing", "1");
        let response = response_of(answer).unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"],
            "text/html; charset=utf-8"
        );
        assert_eq!(response.headers()["x-thing"], "1");
        let plain = response_of(ExplorerResponse::empty(204)).unwrap();
        assert_eq!(plain.headers()["content-type"], "text/plain; charset=utf-8");
    }

    #[test]
    fn garbage_answers_are_named() {
        let e = response_of(ExplorerResponse::empty(999)).unwrap_err();
        assert!(e.contains("status 999"), "{e}");
        let mut both = ExplorerResponse::text(200, "a");
        both.body_base64 = Some("YQ==".into());
        assert!(response_of(both).unwrap_err().contains("both"));
        let mut bad = ExplorerResponse::empty(200);
        bad.body_base64 = Some("%%%".into());
        assert!(response_of(bad).unwrap_err().contains("not base64"));
        let e = response_of(ExplorerResponse::empty(200).header("bad name", "x")).unwrap_err();
        assert!(e.contains("header name"), "{e}");
    }

    #[test]
    fn repeated_headers_are_joined() {
        let mut headers = HeaderMap::new();
        headers.append("accept", HeaderValue::from_static("a"));
        headers.append("accept", HeaderValue::from_static("b"));
        assert_eq!(headers_of(&headers)["accept"], "a, b");
    }
}
