//! The object proxy: bytes of any store's object by URL, each content type under its own policy, so
//! stored HTML cannot script the explorer.

use agent_env::run::local_stores;

use crate::support::{seg, Explorer, World};

fn content(url: &str) -> String {
    format!("/api/v1/objects/content?object_url={}", seg(url))
}

#[test]
fn an_artifact_file_is_served_inline_as_text() {
    let world = World::new();
    world.run_hello();
    let server = Explorer::start(&world);
    let artifact = server
        .get(&format!(
            "/api/v1/artifacts/{}",
            seg("@local/agentenv-framework/hello/greeting")
        ))
        .expect(200)
        .json();
    let file = artifact["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "hello.txt")
        .expect("hello.txt is listed");
    let url = file["object_url"].as_str().unwrap();

    let r = server.get(&content(url));
    r.expect(200);
    assert_eq!(r.text(), "hello\n");
    assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(
        r.header("content-disposition"),
        Some("inline; filename=\"hello.txt\"")
    );
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    let csp = r.header("content-security-policy").unwrap();
    assert!(csp.starts_with("sandbox;"), "{csp}");

    let meta = server
        .get(&format!("/api/v1/objects/metadata?object_url={}", seg(url)))
        .expect(200)
        .json();
    assert_eq!(meta["size_bytes"], 6);
    assert_eq!(meta["content_type"], "text/plain; charset=utf-8");
    assert_eq!(meta["shown_inline"], true);
}

/// The metadata answers what the OpenAPI document says it does, field for field, and its
/// `shown_inline` is the disposition the content route serves the object under.
#[test]
fn the_metadata_says_whether_the_content_is_served_inline() {
    let world = World::new();
    let objects = local_stores::open(&world.state_root()).objects;
    let binary = objects
        .put(
            "files/blob.bin",
            b"\x00\x01\x02",
            "application/x-thing",
            false,
        )
        .unwrap();
    let picture = objects
        .put("files/dot.png", b"\x89PNG", "image/png", false)
        .unwrap();
    let server = Explorer::start(&world);

    let doc = server.get("/openapi.json").expect(200).json();
    let answer = &doc["paths"]["/api/v1/objects/metadata"]["get"]["responses"]["200"]["content"]
        ["application/json"]["schema"]["$ref"];
    assert_eq!(answer, "#/components/schemas/ObjectMetadata");
    let schema = &doc["components"]["schemas"]["ObjectMetadata"];
    let mut documented: Vec<&str> = schema["properties"]
        .as_object()
        .expect("the schema lists its properties")
        .keys()
        .map(String::as_str)
        .collect();
    documented.sort();

    for (url, inline) in [(&binary, false), (&picture, true)] {
        let meta = server
            .get(&format!("/api/v1/objects/metadata?object_url={}", seg(url)))
            .expect(200)
            .json();
        let mut fields: Vec<&str> = meta
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        fields.sort();
        assert_eq!(fields, documented, "{meta}");
        assert_eq!(meta["shown_inline"], inline, "{url}: {meta}");
        assert_eq!(meta["size_bytes"], if inline { 4 } else { 3 });
        let served = server.get(&content(url));
        served.expect(200);
        let disposition = served.header("content-disposition").unwrap_or("");
        assert_eq!(
            disposition.starts_with("inline"),
            inline,
            "{url}: {disposition}"
        );
    }
}

#[test]
fn stored_html_runs_sandboxed_in_an_opaque_origin() {
    let world = World::new();
    let objects = local_stores::open(&world.state_root()).objects;
    let html = b"<html><script>fetch('/api/v1/config')</script></html>";
    let url = objects
        .put("replays/game.html", html, "text/html", false)
        .expect("stored");
    let server = Explorer::start(&world);
    let r = server.get(&content(&url));
    r.expect(200);
    assert_eq!(r.body, html);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    let csp = r.header("content-security-policy").unwrap();
    assert!(csp.starts_with("sandbox allow-scripts;"), "{csp}");
    assert!(!csp.contains("allow-same-origin"), "{csp}");
    assert!(csp.contains("connect-src 'none'"), "{csp}");
    assert_ne!(
        r.header("x-frame-options"),
        Some("DENY"),
        "the UI may frame it"
    );

    let svg = objects
        .put(
            "pics/a.svg",
            b"<svg xmlns='http://www.w3.org/2000/svg'/>",
            "image/svg+xml",
            false,
        )
        .unwrap();
    let csp = server
        .get(&content(&svg))
        .header("content-security-policy")
        .unwrap()
        .to_string();
    assert!(csp.starts_with("sandbox allow-scripts;"), "{csp}");

    let download = server.get(&format!("{}&download=true", content(&url)));
    assert!(download
        .header("content-disposition")
        .unwrap()
        .starts_with("attachment;"));
}

#[test]
fn unknown_types_download_under_their_rfc_6266_name() {
    let world = World::new();
    let objects = local_stores::open(&world.state_root()).objects;
    let url = objects
        .put(
            "files/résumé.bin",
            b"\x00\x01",
            "application/x-thing",
            false,
        )
        .unwrap();
    let server = Explorer::start(&world);
    let r = server.get(&content(&url));
    r.expect(200);
    assert_eq!(r.header("content-type"), Some("application/octet-stream"));
    assert_eq!(
        r.header("content-disposition"),
        Some("attachment; filename=\"r_sum_.bin\"; filename*=UTF-8''r%C3%A9sum%C3%A9.bin")
    );
}

#[test]
fn an_object_nobody_holds_is_404_and_a_missing_url_422() {
    let world = World::new();
    let server = Explorer::start(&world);
    let inside = format!(
        "file://{}/object_store/nothing/here.txt",
        world.state_root().display()
    );
    let r = server.get(&content(&inside));
    r.expect(404);
    assert_eq!(r.detail(), "no object at the given object_url");
    // A URL of no store here (another bucket, not a URL at all) says so, as `store get` does.
    for url in ["s3://bucket/key", "not a url"] {
        let r = server.get(&content(url));
        r.expect(404);
        assert_eq!(
            r.detail(),
            format!("'{url}' is not a URL of the configured object store or of the local one")
                .as_str(),
            "{url}"
        );
    }
    let r = server.get("/api/v1/objects/content");
    r.expect(422);
    assert_eq!(r.detail()[0]["loc"][1], "object_url");
    server.get("/api/v1/objects/metadata").expect(422);
}

/// An object the local object store refuses to read, a symlink under its root, is not "no object":
/// the proxy says what `agent-env store get` says of it, in the store's words, as the 400 of any
/// value a store refuses, and serves none of what the link points at.
#[test]
fn a_symlink_in_the_local_object_store_is_refused_in_the_words_store_get_uses() {
    let world = World::new();
    let objects = local_stores::open(&world.state_root()).objects;
    let url = objects
        .put("files/linked.txt", b"inside\n", "text/plain", false)
        .unwrap();
    let path = std::path::PathBuf::from(url.strip_prefix("file://").unwrap());
    let outside = world.dirs.home.join("outside.txt");
    std::fs::write(&outside, "OUTSIDE\n").unwrap();
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&outside, &path).unwrap();

    let got = world.agent_env(&["store", "get", &url]);
    assert_ne!(got.code, 0, "{}", got.both());
    assert!(got.stderr.contains("Found a symlink at"), "{}", got.both());

    let server = Explorer::start(&world);
    for route in ["content", "metadata"] {
        let r = server.get(&format!("/api/v1/objects/{route}?object_url={}", seg(&url)));
        r.expect(400);
        let detail = r.detail();
        let detail = detail.as_str().unwrap();
        assert!(
            detail.starts_with(&format!("Found a symlink at {}", path.display()))
                && detail.contains("the local object store follows no symlink inside its root"),
            "{route}: {detail}"
        );
        assert!(
            got.stderr.contains(detail),
            "{route}: store get said {:?}, the proxy {detail:?}",
            got.stderr
        );
        assert!(!r.text().contains("OUTSIDE"));
    }
}

/// A URL under the local object store's folder whose key the store refuses (a part longer than a
/// file name may be) is a 400 in the store's words, as `agent-env store get` says it, not a 404
/// calling it no store's URL.
#[test]
fn a_url_the_local_store_refuses_is_400_in_the_words_store_get_uses() {
    let world = World::new();
    let url = format!(
        "file://{}/object_store/{}",
        world.state_root().display(),
        "y".repeat(300)
    );
    let got = world.agent_env(&["store", "get", &url]);
    assert_eq!(got.code, 1, "{}", got.both());
    let server = Explorer::start(&world);
    for route in ["content", "metadata"] {
        let r = server.get(&format!("/api/v1/objects/{route}?object_url={}", seg(&url)));
        r.expect(400);
        let detail = r.detail();
        let detail = detail.as_str().unwrap();
        assert!(
            detail.contains("has a part of 300 bytes") && !detail.contains("is not a URL of"),
            "{route}: {detail}"
        );
        assert!(
            got.stderr.contains(detail),
            "{route}: store get said {:?}, the proxy {detail:?}",
            got.stderr
        );
    }
}
