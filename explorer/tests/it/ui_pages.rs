//! The UI's pages come from the binary: each is a shell naming its view, with the script and the
//! stylesheet served from the same server (nothing from elsewhere).

use crate::support::{seg, Explorer, World};

#[test]
fn every_page_is_a_shell_of_its_view_with_embedded_assets() {
    let world = World::new();
    let server = Explorer::start(&world);
    let id = seg("@local/a/b");
    for (path, view) in [
        ("/".to_string(), "home"),
        ("/bundles".to_string(), "bundles"),
        ("/tasks".to_string(), "tasks"),
        (format!("/tasks/{id}"), "task"),
        ("/runs/wf-1".to_string(), "run"),
        ("/run-groups/rg-1".to_string(), "run-group"),
        (format!("/instances/{id}"), "instance"),
        ("/artifacts".to_string(), "artifacts"),
        (format!("/artifacts/{id}"), "artifact"),
        ("/plugins".to_string(), "plugins"),
        ("/plugins/x".to_string(), "plugin"),
        ("/config".to_string(), "config"),
    ] {
        let r = server.get(&path);
        r.expect(200);
        assert!(
            r.header("content-type").unwrap().starts_with("text/html"),
            "{path}"
        );
        let html = r.text();
        assert!(
            html.contains(&format!("data-view=\"{view}\"")),
            "{path}: {html}"
        );
        assert!(html.contains("<script src=\"/static/app.js\">"), "{path}");
        // The page names its icon inline, so no browser asks for /favicon.ico (a 404 on each load).
        assert!(
            html.contains("<link rel=\"icon\" href=\"data:,\">"),
            "{path}"
        );
        assert!(
            !html.contains("http://") && !html.contains("https://"),
            "{path} loads nothing from elsewhere"
        );
    }
    let page = server
        .get(&format!("/artifacts/{}", seg("<script>x</script>")))
        .text();
    assert!(
        page.contains("data-id=\"&lt;script&gt;x&lt;/script&gt;\""),
        "{page}"
    );

    let js = server.get("/static/app.js");
    js.expect(200);
    assert!(js
        .header("content-type")
        .unwrap()
        .starts_with("text/javascript"));
    assert!(js.text().contains("/api/v1"));
    let css = server.get("/static/style.css");
    assert!(css
        .expect(200)
        .header("content-type")
        .unwrap()
        .starts_with("text/css"));

    let missing = server.get("/no/such/page");
    missing.expect(404);
    assert!(missing.text().contains("data-view=\"not-found\""));
}
