//! The guards: 421 for a foreign Host (or absolute-form target), 400 for two Host headers, 403 for a
//! cross-site API call from an origin not allowed, the CORS allow-list, the security headers, and the
//! settings `up` refuses to start with.

use std::process::Stdio;

use crate::support::server::EXPLORER;
use crate::support::{Explorer, World};

const PAGE_CSP: &str = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

#[test]
fn a_host_outside_loopback_and_the_allow_list_gets_421() {
    let world = World::new();
    world.config("[explorer]\nallowed_hosts = ['Explorer.Example']\n");
    let server = Explorer::start(&world);
    let r = server.request(
        "GET",
        "/api/v1/health",
        &[("Host", "attacker.example:8234")],
        b"",
    );
    r.expect(421);
    // The answer says how to allow the host.
    assert_eq!(
        r.detail(),
        "host 'attacker.example' not allowed; to serve it, list it in .agentenv/config.toml under [explorer] as allowed_hosts = [\"attacker.example\"] and start agent-env up again"
    );
    let page = server.request("GET", "/", &[("Host", "attacker.example")], b"");
    page.expect(421);
    // An IPv6 address is read whole, bracketed or not (a bare one has no port).
    let r = server.request("GET", "/api/v1/health", &[("Host", "fe80::2")], b"");
    assert!(
        r.expect(421)
            .detail()
            .as_str()
            .unwrap()
            .starts_with("host '[fe80::2]' not allowed;"),
        "{}",
        r.text()
    );
    for host in [
        "localhost:1",
        "127.0.0.1",
        "[::1]:8234",
        "::1",
        "explorer.example",
    ] {
        server
            .request("GET", "/api/v1/health", &[("Host", host)], b"")
            .expect(200);
    }
}

/// An IPv6 address written bare in `allowed_hosts` is the host a request for it names, bracketed
/// (a browser's `Host: [fd00::5]:8234`) or bare (the config and the guard read hosts by one parser;
/// the config kept the bare form, which no request's host ever equalled).
#[test]
fn an_ipv6_address_allowed_is_served_however_either_side_writes_it() {
    let world = World::new();
    world.config("[explorer]\nallowed_hosts = ['FD00:0:0::5']\n");
    let server = Explorer::start(&world);
    // One address however it is written, and a name written fully qualified (`localhost.`).
    for host in [
        "[fd00::5]:8234",
        "[FD00::5]",
        "fd00::5",
        "[fd00:0:0:0:0:0:0:5]",
        "[0:0:0:0:0:0:0:1]",
        "LOCALHOST.:8234",
    ] {
        server
            .request("GET", "/api/v1/health", &[("Host", host)], b"")
            .expect(200);
    }
    server
        .request("GET", "/api/v1/health", &[("Host", "[fd00::6]")], b"")
        .expect(421);
}

/// Which of two `Host` headers a request means is not guessed (a proxy in front may have read the
/// other one): 400. An absolute-form target names the host a server reads in place of `Host`, so
/// its host is held to the same list: 421 for one not allowed, whatever `Host` says.
#[test]
fn two_host_headers_get_400_and_an_absolute_target_for_a_foreign_host_421() {
    let world = World::new();
    let server = Explorer::start(&world);
    for hosts in [["localhost", "evil.com"], ["localhost", "localhost"]] {
        let r = server.request(
            "GET",
            "/api/v1/tasks",
            &[("Host", hosts[0]), ("Host", hosts[1])],
            b"",
        );
        r.expect(400);
        assert_eq!(
            r.detail(),
            "a request with 2 Host headers is not served; send one, naming the host the explorer is reached by"
        );
        assert_eq!(r.header("x-frame-options"), Some("DENY"));
    }
    // Two Origins are refused the same way: the first is not taken for the one meant.
    let own = format!("http://127.0.0.1:{}", server.port);
    let r = server.request(
        "GET",
        "/api/v1/tasks",
        &[("Origin", own.as_str()), ("Origin", "http://evil.example")],
        b"",
    );
    assert_eq!(
        r.expect(400).detail(),
        "a request with 2 Origin headers is not served; send one, naming the page's origin"
    );

    let r = server.request(
        "GET",
        "http://evil.com/api/v1/tasks",
        &[("Host", "localhost")],
        b"",
    );
    r.expect(421);
    assert_eq!(
        r.detail(),
        "host 'evil.com' not allowed; to serve it, list it in .agentenv/config.toml under [explorer] as allowed_hosts = [\"evil.com\"] and start agent-env up again"
    );
    let own = format!("http://127.0.0.1:{}/api/v1/tasks", server.port);
    server
        .request("GET", &own, &[("Host", "localhost")], b"")
        .expect(200);
    server
        .request(
            "GET",
            "http://LocalHost:1/api/v1/health",
            &[("Host", "127.0.0.1")],
            b"",
        )
        .expect(200);
}

#[test]
fn a_cross_site_api_call_from_an_origin_not_listed_gets_403() {
    let world = World::new();
    world.config("[explorer]\ncors_origins = ['https://dash.example']\n");
    let server = Explorer::start(&world);
    let refused = server.request(
        "GET",
        "/api/v1/tasks",
        &[
            ("Sec-Fetch-Site", "cross-site"),
            ("Origin", "https://evil.example"),
        ],
        b"",
    );
    refused.expect(403);
    // The refusal says what allows the origin, as the 421 does for a host.
    assert_eq!(
        refused.detail(),
        "cross-site request refused: origin 'https://evil.example' is not allowed; to allow it, list it in .agentenv/config.toml under [explorer] as cors_origins = [\"https://evil.example\"] and start agent-env up again"
    );
    assert!(refused.header("access-control-allow-origin").is_none());
    let preflight = server.request(
        "OPTIONS",
        "/api/v1/tasks/x/run",
        &[
            ("Origin", "https://evil.example"),
            ("Access-Control-Request-Method", "POST"),
        ],
        b"",
    );
    preflight.expect(400);
    let detail = preflight.detail();
    let detail = detail.as_str().unwrap();
    assert!(
        detail.starts_with("Disallowed CORS origin: origin 'https://evil.example' is not allowed;")
            && detail.contains("cors_origins = [\"https://evil.example\"]"),
        "{detail}"
    );

    let allowed = server.request(
        "GET",
        "/api/v1/tasks",
        &[
            ("Sec-Fetch-Site", "cross-site"),
            ("Origin", "https://dash.example"),
        ],
        b"",
    );
    allowed.expect(200);
    assert_eq!(
        allowed.header("access-control-allow-origin"),
        Some("https://dash.example")
    );

    let preflight = server.request(
        "OPTIONS",
        "/api/v1/tasks/x/run",
        &[
            ("Origin", "https://dash.example"),
            ("Access-Control-Request-Method", "POST"),
        ],
        b"",
    );
    preflight.expect(200);
    assert_eq!(
        preflight.header("access-control-allow-methods"),
        Some("POST, OPTIONS")
    );
    // Each path's own methods, written as a 405's Allow is.
    let preflight = server.request(
        "OPTIONS",
        "/api/v1/tasks",
        &[
            ("Origin", "https://dash.example"),
            ("Access-Control-Request-Method", "GET"),
        ],
        b"",
    );
    assert_eq!(
        preflight.expect(200).header("access-control-allow-methods"),
        Some("GET, HEAD, OPTIONS")
    );
    assert_eq!(preflight.header("allow"), Some("GET, HEAD, OPTIONS"));

    // A page (not the API) may be reached from anywhere: a link is not an attack.
    server
        .request("GET", "/", &[("Sec-Fetch-Site", "cross-site")], b"")
        .expect(200);
}

/// With no `cors_origins`, only the explorer's own origin (under either loopback name) may call the
/// API from a page: a page served on another port of this machine is another site, and its preflight
/// is refused, so it cannot start runs. Listed, such a page (a UI dev server) is let in, and the
/// explorer's own origin still is.
#[test]
fn with_no_cors_origins_only_the_explorers_own_origin_passes() {
    let world = World::new();
    let server = Explorer::start(&world);
    let preflight = |server: &Explorer, origin: &str| {
        server.request(
            "OPTIONS",
            "/api/v1/tasks/x/run",
            &[
                ("Origin", origin),
                ("Access-Control-Request-Method", "POST"),
                ("Access-Control-Request-Headers", "content-type"),
            ],
            b"",
        )
    };
    let other_port = format!("http://localhost:{}", server.port.wrapping_add(1));
    for origin in [other_port.as_str(), "http://127.0.0.1:3000"] {
        let r = preflight(&server, origin);
        r.expect(400);
        assert!(
            r.header("access-control-allow-origin").is_none(),
            "{origin}"
        );
        assert_eq!(
            r.detail(),
            format!("Disallowed CORS origin: origin '{origin}' is not allowed; to allow it, list it in .agentenv/config.toml under [explorer] as cors_origins = [\"{origin}\"] and start agent-env up again").as_str()
        );
        server
            .request(
                "GET",
                "/api/v1/health",
                &[("Sec-Fetch-Site", "cross-site"), ("Origin", origin)],
                b"",
            )
            .expect(403);
    }
    for own in [
        format!("http://127.0.0.1:{}", server.port),
        format!("http://localhost:{}", server.port),
    ] {
        let r = preflight(&server, &own);
        r.expect(200);
        assert_eq!(r.header("access-control-allow-origin"), Some(own.as_str()));
    }
    server
        .request(
            "GET",
            "/api/v1/health",
            &[
                ("Sec-Fetch-Site", "cross-site"),
                ("Origin", "http://localhost.evil.example"),
            ],
            b"",
        )
        .expect(403);
    drop(server);

    world.config("[explorer]\ncors_origins = ['http://localhost:3000']\n");
    let server = Explorer::start(&world);
    let r = preflight(&server, "http://localhost:3000");
    r.expect(200);
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("http://localhost:3000")
    );
    let own = format!("http://localhost:{}", server.port);
    preflight(&server, &own).expect(200);
    preflight(&server, "http://localhost:3001").expect(400);
}

#[test]
fn pages_and_api_answers_carry_the_security_headers() {
    let world = World::new();
    let server = Explorer::start(&world);
    for path in [
        "/",
        "/api/v1/health",
        "/api/v1/tasks",
        "/openapi.json",
        "/api/v1/nope",
    ] {
        let r = server.get(path);
        assert_eq!(
            r.header("content-security-policy"),
            Some(PAGE_CSP),
            "{path}"
        );
        assert_eq!(
            r.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
        assert_eq!(r.header("referrer-policy"), Some("no-referrer"), "{path}");
        assert_eq!(r.header("x-frame-options"), Some("DENY"), "{path}");
    }
}

#[test]
fn a_wildcard_origin_or_a_bad_port_stops_up_with_the_reason() {
    let world = World::new();
    world.config("[explorer]\ncors_origins = ['*']\n");
    let out = world
        .command(std::path::Path::new(EXPLORER))
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cors_origins cannot contain '*'"), "{err}");

    world.config("[explorer]\nport = 'eighty'\n");
    let out = world
        .command(std::path::Path::new(EXPLORER))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[explorer] port must be a whole number"),
        "{err}"
    );

    // Every problem at once, one per line.
    world.config("[explorer]\nport = 'eighty'\ncors_origins = ['*']\nplugin_timeout_seconds = 0\n");
    let out = world
        .command(std::path::Path::new(EXPLORER))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[explorer] table has 3 problems"), "{err}");
    for problem in [
        "\n  - [explorer] port must be a whole number",
        "\n  - [explorer] cors_origins cannot contain '*'",
        "\n  - [explorer] plugin_timeout_seconds must be",
    ] {
        assert!(err.contains(problem), "{problem}: {err}");
    }
}

#[test]
fn the_port_flag_serves_despite_a_bad_port_in_the_config() {
    let world = World::new();
    world.config("[explorer]\nport = 'eighty'\n");
    let server = Explorer::start(&world);
    server.get("/api/v1/health").expect(200);
}

#[test]
fn a_post_from_another_origin_is_refused_even_without_fetch_metadata() {
    let world = World::new();
    world.run_hello();
    let server = Explorer::start(&world);
    let path = "/api/v1/bundles/hello/run";
    let r = server.request("POST", path, &[("Origin", "http://evil.example")], b"{}");
    r.expect(403);
    let detail = r.detail();
    assert!(
        detail
            .as_str()
            .unwrap()
            .starts_with("cross-site request refused: origin 'http://evil.example' is not allowed"),
        "{detail}"
    );
    let own = format!("http://127.0.0.1:{}", server.port);
    server
        .request(
            "POST",
            path,
            &[
                ("Origin", own.as_str()),
                ("Content-Type", "application/json"),
            ],
            b"{}",
        )
        .expect(200);
    // A form on the explorer's own pages posts with `Origin: null` (their referrer policy is
    // no-referrer); the browser's Sec-Fetch-Site says it is the same origin. Without it, refused.
    server
        .request("POST", path, &[("Origin", "null")], b"{}")
        .expect(403);
    server
        .request(
            "POST",
            path,
            &[
                ("Origin", "null"),
                ("Sec-Fetch-Site", "same-origin"),
                ("Content-Type", "application/json"),
            ],
            b"{}",
        )
        .expect(200);
    server
        .request(
            "POST",
            path,
            &[("Origin", "null"), ("Sec-Fetch-Site", "cross-site")],
            b"{}",
        )
        .expect(403);
    // An Origin of bytes beyond ASCII (no browser sends one) is an origin no entry allows, not
    // none at all: the run is refused.
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nOrigin: http://\u{e9}vil.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}",
        server.port
    );
    let (status, body) = raw_request(server.port, &head);
    assert_eq!(status, 403, "{body}");
}

/// What the explorer answers `head` (a request head, written out whole): its status line's code and
/// its body. For requests the test client will not write (no `Host` at all, HTTP/1.0).
fn raw_request(port: u16, head: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {answer}"));
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default();
    (status, body)
}

/// A request names its host in `Host`, or in an absolute-form target (RFC 7230 §5.4: its authority
/// wins), which HTTP/1.0 clients send without a `Host`: served when that host is allowed. A request
/// naming no host, an empty `Host`, or one that is no host name is told so, and what to send, never
/// to allow something the config would refuse.
#[test]
fn a_request_is_for_the_host_its_target_or_host_header_names() {
    let world = World::new();
    let server = Explorer::start(&world);
    let (status, body) = raw_request(
        server.port,
        "GET http://localhost/api/v1/health HTTP/1.0\r\n\r\n",
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = raw_request(
        server.port,
        "GET http://evil.com/api/v1/health HTTP/1.0\r\n\r\n",
    );
    assert_eq!(status, 421, "{body}");
    assert!(body.contains("host 'evil.com' not allowed;"), "{body}");
    let (status, body) = raw_request(server.port, "GET /api/v1/health HTTP/1.0\r\n\r\n");
    assert_eq!(status, 421, "{body}");
    assert!(
        body.contains("a request with no Host header is not served; send one Host header naming the host the explorer is reached by (localhost, 127.0.0.1 or [::1], or one of [explorer] allowed_hosts in .agentenv/config.toml)"),
        "{body}"
    );

    let empty = server.request("GET", "/api/v1/health", &[("Host", "")], b"");
    empty.expect(421);
    assert_eq!(
        empty.detail(),
        "a request with an empty Host header is not served; send one Host header naming the host the explorer is reached by (localhost, 127.0.0.1 or [::1], or one of [explorer] allowed_hosts in .agentenv/config.toml)"
    );
    let joined = server.request(
        "GET",
        "/api/v1/health",
        &[("Host", "localhost,evil.com")],
        b"",
    );
    joined.expect(421);
    assert_eq!(
        joined.detail(),
        "a request for host 'localhost,evil.com' is not served: that names several hosts, as a proxy joins two Host headers, and which one is meant is not guessed; send one Host header naming the host the explorer is reached by (localhost, 127.0.0.1 or [::1], or one of [explorer] allowed_hosts in .agentenv/config.toml)"
    );
}

/// `Origin: null` (a page opened from a file, a sandboxed frame) cannot be let in, and the refusal
/// says so rather than advising `cors_origins = ["null"]`, which stops `up`. An origin the config
/// would read as the explorer's own (a trailing `/`, capitals) is the explorer's own; another one is
/// told the entry the config keeps, and listing that lets it in.
#[test]
fn a_refused_origin_is_told_only_what_the_config_accepts() {
    let world = World::new();
    world.run_hello();
    let server = Explorer::start(&world);
    let path = "/api/v1/bundles/hello/run";
    let null = server.request("POST", path, &[("Origin", "null")], b"{}");
    null.expect(403);
    assert_eq!(
        null.detail(),
        "cross-site request refused: origin 'null' cannot be allowed: a browser sends it for a page opened from a file or in a sandboxed frame, so letting it in would let any such page drive the explorer (cors_origins refuses 'null'); serve the page over http or https and list its origin in .agentenv/config.toml under [explorer] as cors_origins, or open it from the explorer itself"
    );
    let extension = server.request("POST", path, &[("Origin", "chrome-extension://abc")], b"{}");
    extension.expect(403);
    let detail = extension.detail();
    let detail = detail.as_str().unwrap();
    assert!(
        detail.starts_with("cross-site request refused: origin 'chrome-extension://abc' cannot be allowed: the explorer lets in pages served over http or https only")
            && !detail.contains("cors_origins = ["),
        "{detail}"
    );
    for own in [
        format!("http://127.0.0.1:{}/", server.port),
        format!("http://LOCALHOST:{}", server.port),
    ] {
        let r = server.request(
            "POST",
            path,
            &[
                ("Origin", own.as_str()),
                ("Content-Type", "application/json"),
            ],
            b"{}",
        );
        r.expect(200);
        assert_eq!(r.header("access-control-allow-origin"), Some(own.as_str()));
    }
    let other = server.request("POST", path, &[("Origin", "HTTPS://Dash.Example/")], b"{}");
    other.expect(403);
    assert_eq!(
        other.detail(),
        "cross-site request refused: origin 'HTTPS://Dash.Example/' is not allowed; to allow it, list it in .agentenv/config.toml under [explorer] as cors_origins = [\"https://dash.example\"] and start agent-env up again"
    );
    drop(server);

    // Following the advice lets the origin in.
    world.config("[explorer]\ncors_origins = [\"https://dash.example\"]\n");
    let server = Explorer::start(&world);
    server
        .request(
            "POST",
            path,
            &[
                ("Origin", "https://dash.example"),
                ("Content-Type", "application/json"),
            ],
            b"{}",
        )
        .expect(200);
}
