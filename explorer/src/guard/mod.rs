//! The checks every request passes before routing, and the headers every answer leaves with:
//!
//! - a `Host` outside the loopback names and `[explorer] allowed_hosts` gets **421** (a page on another
//!   site that resolves its own name to 127.0.0.1 — DNS rebinding — cannot read the explorer), and so
//!   do an absolute-form target (`GET http://host/…`) naming such a host and a request with no host at
//!   all; a request with two `Host` headers gets **400** ([`hosts`]), and so does one with two
//!   `Origin` headers;
//! - an `/api` request a browser marks `Sec-Fetch-Site: cross-site` from an origin not allowed gets
//!   **403**, and so does any write (`POST`) whose `Origin` is neither this server nor allowed;
//! - CORS answers only the explorer's own origin (`http://127.0.0.1:<port>`, `http://localhost:<port>`)
//!   and those `[explorer] cors_origins` adds (a page on another local port is another site); origins
//!   are compared in the form the config keeps them in ([`origins`]);
//! - every answer but the object proxy's (which sets a policy per content type) carries the
//!   original's `Content-Security-Policy`, `X-Content-Type-Options`, `Referrer-Policy` and
//!   `X-Frame-Options`.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::http::common_headers::add_common_headers;
use crate::http::problem::ApiError;
use agent_env::config::explorer::ExplorerSettings;

pub mod hosts;
pub mod origins;

use hosts::checked_host;
use origins::{how_to_allow, Origin};

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
    /// The origins that may call the API: the explorer's own, then `cors_origins`, each in the form
    /// [`Origin::read`] gives.
    cors_origins: Vec<String>,
}

impl Guard {
    /// The guard of an explorer listening on 127.0.0.1:`port` (the port it got, when it asked for 0).
    pub fn new(settings: &ExplorerSettings, port: u16) -> Arc<Guard> {
        let cors_origins = own_origins(port)
            .into_iter()
            .chain(settings.cors_origins.iter().cloned())
            .map(|origin| match Origin::read(&origin) {
                Origin::Site(site) => site,
                _ => origin,
            })
            .collect();
        Arc::new(Guard {
            allowed_hosts: settings.allowed_hosts.clone(),
            cors_origins,
        })
    }

    /// Whether `host` (the `Host` header, port stripped, lowercased) may be served.
    pub fn host_allowed(&self, host: &str) -> bool {
        // An IPv6 address matches with or without its brackets (the config keeps a bare one bare).
        let host = unbracketed(host);
        LOOPBACK_HOSTS
            .iter()
            .copied()
            .chain(self.allowed_hosts.iter().map(String::as_str))
            .any(|h| unbracketed(h) == host)
    }

    /// Whether a page at `origin` may call the API: the explorer's own (under either loopback name),
    /// or one of `cors_origins`, compared as the config reads them (so `http://LOCALHOST:8234/` is
    /// the explorer's own; see [`origins`] for why that is safe). A page on another port of this
    /// machine is another origin: it may be anything (a dev server, a page a tool serves), so it is
    /// not let in unless listed.
    pub fn origin_allowed(&self, origin: &str) -> bool {
        Origin::read(origin)
            .site()
            .is_some_and(|site| self.cors_origins.iter().any(|o| o == site))
    }
}

/// The origins of the explorer's own pages, as a browser sends them: `http://127.0.0.1:<port>` and
/// `http://localhost:<port>` (it binds 127.0.0.1 only, so `[::1]` does not reach it).
fn own_origins(port: u16) -> Vec<String> {
    ["127.0.0.1", "localhost"]
        .iter()
        .map(|host| format!("http://{host}:{port}"))
        .collect()
}

/// An IPv6 address without its brackets; any other host as it is.
fn unbracketed(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

/// The middleware: refuses what the rules refuse, answers CORS preflights, and adds the headers.
pub async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if let Err(refused) = checked_host(|host| guard.host_allowed(host), &request) {
        let mut response = refused.into_response();
        add_page_headers(response.headers_mut());
        return response;
    }
    // Two Origins, as two Hosts, are refused: which one the browser meant is not guessed (the first
    // was taken, so a request could be let in by one and answered for the other).
    let origins = request.headers().get_all(header::ORIGIN).iter().count();
    if origins > 1 {
        let mut response = ApiError::bad_request(format!(
            "a request with {origins} Origin headers is not served; send one, naming the page's origin"
        ))
        .into_response();
        add_page_headers(response.headers_mut());
        return response;
    }
    let path = request.uri().path().to_string();
    let is_api = path == "/api" || path.starts_with("/api/");
    // An Origin that is not text (bytes beyond ASCII, which no browser sends) is still an origin,
    // and one no entry allows: read lossily, it is refused rather than taken for no Origin.
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
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
        let own = Origin::read(&format!("http://{raw_host}"));
        own.site().is_some() && Origin::read(o) == own
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
        let mut response = ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "cross-site request refused: {}",
                how_to_allow(origin.as_deref())
            ),
        )
        .into_response();
        add_page_headers(response.headers_mut());
        return response;
    }
    let preflight = request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut response = if preflight {
        preflight_answer(origin.as_deref(), origin_ok, &path)
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

/// The methods a preflight for `path` is told it may use, written as a 405's `Allow` is (`GET, HEAD,
/// OPTIONS`): the path's own, as the router serves them (a page's, GET and HEAD), and OPTIONS.
fn preflight_methods(path: &str) -> String {
    let mut methods: Vec<String> = crate::api::methods_at(path)
        .iter()
        .map(Method::to_string)
        .collect();
    let is_api = path == "/api" || path.starts_with("/api/");
    if methods.is_empty() && !is_api {
        methods = vec![Method::GET.to_string(), Method::HEAD.to_string()];
    }
    methods.push(Method::OPTIONS.to_string());
    methods.join(", ")
}

fn preflight_answer(origin: Option<&str>, origin_ok: bool, path: &str) -> Response {
    if !origin_ok {
        return ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("Disallowed CORS origin: {}", how_to_allow(origin)),
        )
        .into_response();
    }
    let mut response = Response::new(Body::empty());
    let headers = response.headers_mut();
    if let Ok(methods) = HeaderValue::from_str(&preflight_methods(path)) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, methods.clone());
        headers.insert(header::ALLOW, methods);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(hosts: &[&str], origins: &[&str]) -> Guard {
        let settings = ExplorerSettings {
            allowed_hosts: hosts.iter().map(|s| s.to_string()).collect(),
            cors_origins: origins.iter().map(|s| s.to_string()).collect(),
            ..ExplorerSettings::default()
        };
        Guard::new(&settings, 8234).as_ref().clone()
    }

    #[test]
    fn loopback_names_and_listed_hosts_pass() {
        let g = guard(&["explorer.example.com", "fe80::1"], &[]);
        for ok in [
            "localhost",
            "127.0.0.1",
            "[::1]",
            "explorer.example.com",
            "[fe80::1]",
        ] {
            assert!(g.host_allowed(ok), "{ok}");
        }
        for refused in ["evil.example", "", "127.0.0.2"] {
            assert!(!g.host_allowed(refused), "{refused}");
        }
    }

    #[test]
    fn origins_default_to_the_explorers_own_and_a_list_adds_to_it() {
        let g = guard(&[], &[]);
        assert!(g.origin_allowed("http://localhost:8234"));
        assert!(g.origin_allowed("http://127.0.0.1:8234"));
        for refused in [
            "http://localhost:3000",
            "http://127.0.0.1:8235",
            "https://127.0.0.1:8234",
            "http://127.0.0.1",
            "http://evil.example",
            "http://localhost.evil.example:8234",
        ] {
            assert!(!g.origin_allowed(refused), "{refused}");
        }
        let g = guard(&[], &["https://app.example", "http://localhost:3000"]);
        assert!(g.origin_allowed("https://app.example"));
        assert!(g.origin_allowed("http://localhost:3000"));
        assert!(g.origin_allowed("http://127.0.0.1:8234"));
        assert!(!g.origin_allowed("http://localhost:3001"));
    }

    /// An origin that the config would read as one already allowed is that origin: a trailing `/`
    /// or capitals (which no browser sends) change nothing, and neither does a default port.
    #[test]
    fn an_origin_is_compared_as_the_config_reads_it() {
        let g = guard(&[], &["https://app.example"]);
        for same in [
            "http://127.0.0.1:8234/",
            "http://LOCALHOST:8234",
            "HTTP://LocalHost:8234/",
            "https://App.Example/",
            "https://app.example:443",
        ] {
            assert!(g.origin_allowed(same), "{same}");
        }
        for refused in ["null", "http://127.0.0.1:8234/x", "http://app.example"] {
            assert!(!g.origin_allowed(refused), "{refused}");
        }
        // On port 80 a browser sends no port: the explorer's own origin is then the bare host.
        let settings = ExplorerSettings::default();
        let on_80 = Guard::new(&settings, 80);
        assert!(on_80.origin_allowed("http://localhost"));
        assert!(on_80.origin_allowed("http://127.0.0.1:80"));
    }
}
