//! An explorer plugin for the explorer's tests, whose package name is its first argument (so one
//! binary can stand for two packages that claim the same explorer name). Its explorer `fx` serves:
//!
//! - `GET /ext/fx` (its page) and `GET /ext/fx/item/{id}`: what it was asked (id, query, pid);
//! - `POST /ext/fx/echo`: the body back, with the method and a request header;
//! - `GET /api/v1/envs/from-plugin`: a literal path under a core prefix;
//! - `GET /ext/fx/hang`: never answers; `GET /ext/fx/crash`: the process exits;
//! - `GET /ext/fx/garbage`: an answer that is not HTTP (status 999); `GET /ext/fx/panic`: panics;
//! - `GET /ext/fx/object`: writes an object to the host's object store and answers its URL.
//!
//! A second argument `--bad-routes` makes it declare routes the explorer cannot serve.

use agent_env_plugin_sdk::{json, Explorer, ExplorerResponse, ObjectStore, Plugin};

fn main() {
    let mut args = std::env::args().skip(1);
    let package = args
        .next()
        .unwrap_or_else(|| "agentenv-fixture-explorer".into());
    let bad_routes = args.next().as_deref() == Some("--bad-routes");
    let mut fx = Explorer::new("fx")
        .class("FixtureExplorer")
        .page("/ext/fx", "Fixture page")
        .get("/ext/fx", |_req, _host| {
            ExplorerResponse::html(format!(
                "<!doctype html><title>fx</title><h1 id=\"fx\">Fixture page</h1><p>pid {}</p>",
                std::process::id()
            ))
        })
        .get("/ext/fx/item/{id}", |req, _host| {
            ExplorerResponse::json(
                200,
                &json!({
                    "id": req.param("id"),
                    "raw": req.path_params.get("id"),
                    "q": req.query_value("q"),
                    "pid": std::process::id(),
                }),
            )
        })
        .post("/ext/fx/echo", |req, _host| {
            ExplorerResponse::empty(201)
                .header("content-type", "application/octet-stream")
                .header("x-method", req.method.clone())
                .header(
                    "x-seen",
                    req.headers.get("x-test").cloned().unwrap_or_default(),
                )
                .body(String::from_utf8_lossy(&req.body_bytes()).into_owned())
        })
        .get("/api/v1/envs/from-plugin", |_req, _host| {
            ExplorerResponse::json(200, &json!({"served_by": "fixture-explorer"}))
        })
        .get("/ext/fx/hang", |_req, _host| loop {
            std::thread::sleep(std::time::Duration::from_secs(60));
        })
        .get("/ext/fx/crash", |_req, _host| std::process::exit(3))
        .get("/ext/fx/garbage", |_req, _host| {
            ExplorerResponse::empty(999)
        })
        .get("/ext/fx/panic", |_req, _host| panic!("the fixture panics"))
        .get("/ext/fx/object", |_req, host| {
            let url = host
                .objects()
                .put(
                    "fx/object.txt",
                    b"from the explorer plugin",
                    "text/plain",
                    true,
                )
                .unwrap_or_else(|e| format!("error: {e}"));
            ExplorerResponse::text(200, url)
        });
    if bad_routes {
        fx = fx
            .get("relative/path", |_req, _host| ExplorerResponse::empty(200))
            .get("/ext/fx", |_req, _host| ExplorerResponse::empty(200));
    }
    Plugin::new(&package, "0.1.0").explorer(fx).serve()
}
