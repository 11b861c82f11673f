//! The checks every request passes before routing, and the headers every answer leaves with:
//!
//! - a `Host` outside the loopback names and `[explorer] allowed_hosts` gets **421** (a page on another
//!   site that resolves its own name to 127.0.0.1 — DNS rebinding — cannot read the explorer);
//! - an `/api` request a browser marks `Sec-Fetch-Site: cross-site` from an origin not allowed gets
//!   **403**, and so does any write (`POST`) whose `Origin` is neither this server nor allowed;
//! - CORS answers only allowed origins (`[explorer] cors_origins`, else the loopback ones);
//! - every answer but the object proxy's (which sets a policy per content type) carries the
//!   original's `Content-Security-Policy`, `X-Content-Type-Options`, `Referrer-Policy` and
//!   `X-Frame-Options`.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::http::problem::ApiError;
use agent_env::config::explorer::ExplorerSettings;

/// The policy of the explorer's own pages and API answers.
pub const PAGE_CSP: &str = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

/// Where the object proxy answers; it sets its own headers.
pub const OBJECTS_PREFIX: &str = "/api/v1/objects/";

/// The names a loopback request carries in `Host` (port stripped).
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// What the guard checks against.
#[derive(Debug, Clone)]
pub struct Guard {
    allowed_hosts: Vec<String>,
    cors_origins: Vec<String>,
}

impl Guard {
    pub fn new(settings: &ExplorerSettings) -> Arc<Guard> {
        Arc::new(Guard {
            allowed_hosts: settings.allowed_hosts.clone(),
            cors_origins: settings.cors_origins.clone(),
        })
    }

    /// Whether `host` (the `Host` header, port stripped, lowercased) may be served.
    pub fn host_allowed(&self, host: &str) -> bool {
        LOOPBACK_HOSTS.contains(&host) || self.allowed_hosts.iter().any(|h| h == host)
    }

    /// Whether a page at `origin` may call the API: one of `cors_origins`, or with none listed,
    /// `http(s)://localhost|127.0.0.1[:port]`.
    pub fn origin_allowed(&self, origin: &str) -> bool {
        if !self.cors_origins.is_empty() {
            return self.cors_origins.iter().any(|o| o == origin);
        }
        let rest = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"));
        let Some(rest) = rest else {
            return false;
        };
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (h, Some(p)),
            _ => (rest, None),
        };
        let port_ok = port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        port_ok && (host == "localhost" || host == "127.0.0.1")
    }
}

/// The `Host` header's host: port stripped (an IPv6 address keeps its brackets), lowercased.
pub fn host_of(headers: &HeaderMap) -> String {
    let raw = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if raw.starts_with('[') {
        return match raw.find(']') {
            Some(end) => raw[..=end].to_string(),
            None => raw,
        };
    }
    match raw.rsplit_once(':') {
        Some((host, _port)) => host.to_string(),
        None => raw,
    }
}

/// The middleware: refuses what the rules refuse, answers CORS preflights, and adds the headers.
pub async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let host = host_of(request.headers());
    if !guard.host_allowed(&host) {
        let mut response = ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            format!("host '{host}' not allowed"),
        )
        .into_response();
        add_page_headers(response.headers_mut());
        return response;
    }
    let path = request.uri().path().to_string();
    let is_api = path == "/api" || path.starts_with("/api/");
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let cross_site = request
        .headers()
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("cross-site"));
    let origin_ok = origin.as_deref().is_some_and(|o| guard.origin_allowed(o));
    // A browser that sends no Sec-Fetch-Site still sends Origin with a POST: one from another
    // origin, not allowed, is refused as well (a form on another site cannot start runs).
    let same_origin = origin.as_deref().is_some_and(|o| {
        let raw_host = request
            .headers()
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        o.eq_ignore_ascii_case(&format!("http://{raw_host}"))
    });
    // A page whose referrer policy is `no-referrer` (the explorer's own) sends `Origin: null` with a
    // form's POST; the browser's `Sec-Fetch-Site: same-origin`, which no page can set, vouches for it.
    let same_origin = same_origin
        || request
            .headers()
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("same-origin"));
    let unsafe_method = !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    let foreign_write = unsafe_method && origin.is_some() && !same_origin && !origin_ok;
    if (is_api && cross_site && !origin_ok) || foreign_write {
        let mut response =
            ApiError::new(StatusCode::FORBIDDEN, "cross-site request refused").into_response();
        add_page_headers(response.headers_mut());
        return response;
    }
    let preflight = request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut response = if preflight {
        preflight_answer(origin_ok)
    } else {
        next.run(request).await
    };
    let headers = response.headers_mut();
    if let (Some(origin), true) = (origin, origin_ok) {
        if let Ok(value) = HeaderValue::from_str(&origin) {
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
        }
    }
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
    if !path.starts_with(OBJECTS_PREFIX) {
        add_page_headers(headers);
    }
    response
}

fn preflight_answer(origin_ok: bool) -> Response {
    if !origin_ok {
        return ApiError::new(StatusCode::BAD_REQUEST, "Disallowed CORS origin").into_response();
    }
    let mut response = Response::new(Body::empty());
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("content-type"),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    response
}

/// The original's security headers, on every page and API answer.
pub fn add_page_headers(headers: &mut HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(PAGE_CSP),
    );
    add_common_headers(headers);
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

/// What every answer carries, the object proxy's included.
pub fn add_common_headers(headers: &mut HeaderMap) {
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(hosts: &[&str], origins: &[&str]) -> Guard {
        Guard {
            allowed_hosts: hosts.iter().map(|s| s.to_string()).collect(),
            cors_origins: origins.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn host(value: &str) -> String {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(value).unwrap());
        host_of(&headers)
    }

    #[test]
    fn the_host_header_loses_its_port_and_keeps_ipv6_brackets() {
        assert_eq!(host("LocalHost:8234"), "localhost");
        assert_eq!(host("127.0.0.1"), "127.0.0.1");
        assert_eq!(host("[::1]:8234"), "[::1]");
        assert_eq!(host_of(&HeaderMap::new()), "");
    }

    #[test]
    fn loopback_names_and_listed_hosts_pass() {
        let g = guard(&["explorer.example.com"], &[]);
        for ok in ["localhost", "127.0.0.1", "[::1]", "explorer.example.com"] {
            assert!(g.host_allowed(ok), "{ok}");
        }
        for refused in ["evil.example", "", "127.0.0.2"] {
            assert!(!g.host_allowed(refused), "{refused}");
        }
    }

    #[test]
    fn origins_default_to_loopback_and_a_list_replaces_that() {
        let g = guard(&[], &[]);
        assert!(g.origin_allowed("http://localhost:3000"));
        assert!(g.origin_allowed("https://127.0.0.1"));
        assert!(!g.origin_allowed("http://evil.example"));
        assert!(!g.origin_allowed("http://localhost.evil.example:1"));
        let g = guard(&[], &["https://app.example"]);
        assert!(g.origin_allowed("https://app.example"));
        assert!(!g.origin_allowed("http://localhost:3000"));
    }
}
