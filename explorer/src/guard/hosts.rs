//! The host a request is for: its one `Host` header, or the authority of an absolute-form target
//! (`GET http://host/path`), which a server reads in place of `Host` (RFC 7230 §5.4), and the answers
//! refusing a request for a host the explorer does not serve, each saying what would be served.

use axum::extract::Request;
use axum::http::{header, HeaderMap, StatusCode};

use agent_env::config::explorer::host as config_host;

use crate::http::problem::ApiError;

/// What a request's `Host` header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostHeader {
    /// No `Host` header.
    Absent,
    /// A `Host` header with nothing in it.
    Empty,
    /// A host: its name lowercased, port stripped, an IPv6 address in brackets.
    Named(String),
    /// Something that is no `host[:port]` (a list joined with `,`, a path, spaces), as it was sent.
    Malformed(String),
}

impl HostHeader {
    /// Reads the (one) `Host` header of `headers`.
    pub fn read(headers: &HeaderMap) -> HostHeader {
        match headers.get(header::HOST) {
            None => HostHeader::Absent,
            Some(value) => {
                let sent = String::from_utf8_lossy(value.as_bytes()).trim().to_string();
                if sent.is_empty() {
                    return HostHeader::Empty;
                }
                match host_name(&sent) {
                    Some(host) => HostHeader::Named(host),
                    None => HostHeader::Malformed(sent),
                }
            }
        }
    }
}

/// `host[:port]`'s host as `[explorer] allowed_hosts` entries are read (core's one parser for both),
/// or none when it is no host: a name of letters, digits, `-`, `.` and `_`, an IPv4 address, or an
/// IPv6 address in brackets (one written bare has no port and is given its brackets).
pub fn host_name(raw: &str) -> Option<String> {
    config_host(raw).ok()
}

/// Where the explorer is reached, as a refusal names it.
const SERVED: &str =
    "localhost, 127.0.0.1 or [::1], or one of [explorer] allowed_hosts in .agentenv/config.toml";

/// The 421 a host not allowed gets, saying how to allow it: a name the config accepts.
pub fn host_refused(host: &str) -> ApiError {
    ApiError::new(
        StatusCode::MISDIRECTED_REQUEST,
        format!(
            "host '{host}' not allowed; to serve it, list it in .agentenv/config.toml under [explorer] as allowed_hosts = [\"{host}\"] and start agent-env up again"
        ),
    )
}

/// The 421 a request gets whose `Host` names no host it could be served under.
fn unnamed_refused(header: &HostHeader) -> ApiError {
    let what = match header {
        HostHeader::Absent => "a request with no Host header is not served".to_string(),
        HostHeader::Empty => "a request with an empty Host header is not served".to_string(),
        HostHeader::Malformed(sent) if sent.contains(',') => format!(
            "a request for host '{sent}' is not served: that names several hosts, as a proxy joins two Host headers, and which one is meant is not guessed"
        ),
        HostHeader::Malformed(sent) => format!(
            "a request for host '{sent}' is not served: that is no host name (letters, digits, '-' and '.', or an IP address, then :port if any)"
        ),
        HostHeader::Named(host) => return host_refused(host),
    };
    ApiError::new(
        StatusCode::MISDIRECTED_REQUEST,
        format!(
            "{what}; send one Host header naming the host the explorer is reached by ({SERVED})"
        ),
    )
}

/// The 400 a request with more than one `Host` header gets: which one it means is not for the
/// explorer to guess (a proxy may have read the other).
fn hosts_refused(count: usize) -> ApiError {
    ApiError::bad_request(format!(
        "a request with {count} Host headers is not served; send one, naming the host the explorer is reached by"
    ))
}

/// Whether the explorer may serve the request, by the host it is for; else the answer refusing it.
/// A request must carry at most one `Host` header (400 for more). The host of an absolute-form
/// target must be allowed, and so must the `Host` header's when it names one; a request without one
/// (HTTP/1.0 sends none), or with an empty one, is for the target's host, and is refused (421) when
/// it has no absolute-form target either.
pub fn checked_host(allowed: impl Fn(&str) -> bool, request: &Request) -> Result<(), ApiError> {
    let count = request.headers().get_all(header::HOST).iter().count();
    if count > 1 {
        return Err(hosts_refused(count));
    }
    let target = request
        .uri()
        .authority()
        .map(|authority| authority.host().to_ascii_lowercase());
    if let Some(target) = &target {
        match host_name(target) {
            Some(host) if allowed(&host) => {}
            Some(host) => return Err(host_refused(&host)),
            None => return Err(unnamed_refused(&HostHeader::Malformed(target.clone()))),
        }
    }
    match HostHeader::read(request.headers()) {
        HostHeader::Named(host) if allowed(&host) => Ok(()),
        HostHeader::Absent | HostHeader::Empty if target.is_some() => Ok(()),
        other => Err(unnamed_refused(&other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn host(value: &str) -> HostHeader {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(value).unwrap());
        HostHeader::read(&headers)
    }

    fn named(host: &str) -> HostHeader {
        HostHeader::Named(host.to_string())
    }

    #[test]
    fn the_host_header_loses_its_port_and_keeps_ipv6_brackets() {
        assert_eq!(host("LocalHost:8234"), named("localhost"));
        assert_eq!(host("127.0.0.1"), named("127.0.0.1"));
        assert_eq!(host("[::1]:8234"), named("[::1]"));
        assert_eq!(host("my_box.local:"), named("my_box.local"));
        assert_eq!(HostHeader::read(&HeaderMap::new()), HostHeader::Absent);
        assert_eq!(host(""), HostHeader::Empty);
        assert_eq!(host("  "), HostHeader::Empty);
        // An IPv6 address written bare has no port, and is the same host as in brackets.
        assert_eq!(host("::1"), named("[::1]"));
        assert_eq!(host("FE80::1"), named("[fe80::1]"));
        for malformed in [
            "[::1",
            "localhost,evil.com",
            "localhost:8234,evil.com:80",
            "evil.com/path",
            "a b",
            "host:port",
            "[::1]x",
            "[evil.com]",
        ] {
            assert_eq!(
                host(malformed),
                HostHeader::Malformed(malformed.to_string()),
                "{malformed}"
            );
        }
    }

    fn checked(target: &str, host: Option<&str>) -> Result<(), String> {
        let mut request = Request::builder().uri(target);
        if let Some(host) = host {
            request = request.header(header::HOST, host);
        }
        let request = request.body(axum::body::Body::empty()).unwrap();
        let loopback = |h: &str| ["localhost", "127.0.0.1", "[::1]"].contains(&h);
        checked_host(loopback, &request)
            .map_err(|e| e.detail.as_str().unwrap_or_default().to_string())
    }

    #[test]
    fn an_absolute_target_names_the_host_with_or_without_a_host_header() {
        assert_eq!(checked("http://localhost/x", None), Ok(()));
        assert_eq!(checked("http://LocalHost:1/x", Some("")), Ok(()));
        assert_eq!(checked("http://[::1]:8234/x", Some("127.0.0.1")), Ok(()));
        assert_eq!(checked("/x", Some("localhost:8234")), Ok(()));
        let refused = checked("http://evil.com/x", Some("localhost")).unwrap_err();
        assert!(
            refused.starts_with("host 'evil.com' not allowed;"),
            "{refused}"
        );
        let refused = checked("http://localhost/x", Some("evil.com")).unwrap_err();
        assert!(
            refused.starts_with("host 'evil.com' not allowed;"),
            "{refused}"
        );
        let refused = checked("/x", None).unwrap_err();
        assert!(
            refused.starts_with("a request with no Host header"),
            "{refused}"
        );
        let refused = checked("http://a,b/x", None).unwrap_err();
        assert!(
            refused.starts_with("a request for host 'a,b' is not served: that names several hosts"),
            "{refused}"
        );
    }

    #[test]
    fn a_refused_host_is_told_how_to_allow_it_and_one_that_is_no_host_what_to_send() {
        let e = host_refused("evil.com");
        assert_eq!(e.status, StatusCode::MISDIRECTED_REQUEST);
        let detail = e.detail.as_str().unwrap();
        assert!(
            detail.starts_with("host 'evil.com' not allowed;")
                && detail.contains("[explorer]")
                && detail.contains("allowed_hosts = [\"evil.com\"]"),
            "{detail}"
        );
        let told = |header: HostHeader| {
            let e = unnamed_refused(&header);
            assert_eq!(e.status, StatusCode::MISDIRECTED_REQUEST);
            let detail = e.detail.as_str().unwrap().to_string();
            assert!(!detail.contains("allowed_hosts = ["), "{detail}");
            assert!(
                detail.ends_with(&format!(
                    "; send one Host header naming the host the explorer is reached by ({SERVED})"
                )),
                "{detail}"
            );
            detail
        };
        assert!(
            told(HostHeader::Absent).starts_with("a request with no Host header is not served;")
        );
        assert!(told(HostHeader::Empty)
            .starts_with("a request with an empty Host header is not served;"));
        assert!(
            told(HostHeader::Malformed("localhost,evil.com".into())).starts_with(
                "a request for host 'localhost,evil.com' is not served: that names several hosts"
            )
        );
        assert!(told(HostHeader::Malformed("a/b".into()))
            .starts_with("a request for host 'a/b' is not served: that is no host name"));
    }
}
