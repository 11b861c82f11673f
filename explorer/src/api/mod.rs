//! The REST API under `/api/v1`: the original's routes, and the ones the UI needs beyond them. Every
//! route is declared once, in [`routes`], with what the OpenAPI document says of it, so the document
//! and the router cannot drift apart.

pub mod bundles;
pub mod config;
pub mod entities;
pub mod events;
pub mod extract;
pub mod group_runs;
pub mod objects;
pub mod openapi;
pub mod plugins;
pub mod tasks;
pub mod workflows;

use axum::extract::State;
use axum::http::Method;
use axum::routing::{get, post, MethodRouter};
use axum::Router;

use crate::data::entities::COLLECTIONS;
use crate::state::Shared;

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum In {
    Path,
    Query,
}

/// One parameter as the OpenAPI document describes it.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub name: &'static str,
    pub location: In,
    pub required: bool,
    /// `string`, `integer`, `boolean`, or `array` (of strings).
    pub schema: &'static str,
    pub description: &'static str,
}

const fn path(name: &'static str, description: &'static str) -> Param {
    Param {
        name,
        location: In::Path,
        required: true,
        schema: "string",
        description,
    }
}

const fn query(name: &'static str, schema: &'static str, description: &'static str) -> Param {
    Param {
        name,
        location: In::Query,
        required: false,
        schema,
        description,
    }
}

/// One route: what serves it, and what the document says of it.
pub struct Route {
    pub method: Method,
    /// The path with `{name}` placeholders, as both axum and OpenAPI write them.
    pub path: String,
    pub summary: String,
    pub tag: &'static str,
    pub params: Vec<Param>,
    /// The request body's schema name (see [`openapi`]), when it takes one.
    pub body: Option<&'static str>,
    /// `application/json`, or `text/event-stream` / `*/*` / `text/plain` for the stream, the object
    /// bytes and a run log.
    pub produces: &'static str,
    pub handler: MethodRouter<Shared>,
}

const ID: Param = path(
    "entity_id",
    "the id, percent-encoded as one path segment ('/' as %2F)",
);
const TASK: Param = path("task_id", "the task's id, percent-encoded ('/' as %2F)");
const INSTANCE: Param = path("instance_id", "the task instance's id, percent-encoded");
const GROUP: Param = path("run_group_id", "the run group's id");
const LIMIT: Param = query("limit", "integer", "page size, 1 to 500");
const OFFSET: Param = query("offset", "integer", "items to skip, 0 or more");
const RUN_OUTCOME: Param = query(
    "outcome",
    "string",
    "only the runs with this word: an instance's outcome, else its run's status",
);

fn list_params() -> Vec<Param> {
    vec![
        LIMIT,
        OFFSET,
        query(
            "type",
            "array",
            "keep these types (repeatable; any of them)",
        ),
        query("id", "string", "keep ids containing this text"),
        query(
            "sort_by",
            "string",
            "the field to sort by (default created_at_utc)",
        ),
        query("descending", "boolean", "sort descending (default true)"),
    ]
}

fn route(
    method: Method,
    path: impl Into<String>,
    summary: impl Into<String>,
    tag: &'static str,
    params: Vec<Param>,
    handler: MethodRouter<Shared>,
) -> Route {
    Route {
        method,
        path: path.into(),
        summary: summary.into(),
        tag,
        params,
        body: None,
        produces: "application/json",
        handler,
    }
}

/// Every API route, in the order the document lists them. Literal paths come before the
/// `{entity_id}` routes they would otherwise be taken for (axum prefers literals anyway).
pub fn routes() -> Vec<Route> {
    let mut all = Vec::new();
    for c in COLLECTIONS {
        let base = format!("/api/v1/{}", c.route);
        all.push(route(
            Method::GET,
            &base,
            format!("List {} (the newest version of each id)", c.route),
            c.route,
            list_params(),
            get(move |s, q| entities::list(c, s, q)),
        ));
        all.push(route(
            Method::GET,
            format!("{base}/{{entity_id}}"),
            format!(
                "Get one of the {} (the newest version unless ?version=N)",
                c.route
            ),
            c.route,
            vec![
                ID,
                query("version", "integer", "this version instead of the newest"),
            ],
            get(move |s, p, q| entities::get_one(c, s, p, q)),
        ));
        all.push(route(
            Method::GET,
            format!("{base}/{{entity_id}}/versions"),
            format!("Every version of one of the {}, newest first", c.route),
            c.route,
            vec![
                ID,
                query("limit", "integer", "page size, 1 to 500 (default 100)"),
                OFFSET,
            ],
            get(move |s, p, q| entities::versions(c, s, p, q)),
        ));
    }
    let t = "/api/v1/tasks/{task_id}";
    let mut run = route(
        Method::POST,
        format!("{t}/run"),
        "Start one run of the task; answers its workflow and instance ids",
        "runs",
        vec![TASK],
        post(tasks::start_one),
    );
    run.body = Some("RunRequest");
    all.push(run);
    let mut runs = route(
        Method::POST,
        format!("{t}/runs"),
        "Start a group of runs of the task (count, or one per seed; at most 100)",
        "runs",
        vec![TASK],
        post(tasks::start_group),
    );
    runs.body = Some("RunGroupRequest");
    all.push(runs);
    let mut cancel = route(
        Method::POST,
        format!("{t}/cancel-run"),
        "Cancel the task's runs named by workflow_id, instance_id or run_group_id",
        "runs",
        vec![TASK],
        post(tasks::cancel_run),
    );
    cancel.body = Some("CancelRequest");
    all.push(cancel);
    all.push(route(
        Method::GET,
        format!("{t}/runs"),
        "The task's runs, newest first, each with its outcome and scores",
        "runs",
        vec![TASK, LIMIT, OFFSET],
        get(tasks::list_runs),
    ));
    all.push(route(
        Method::GET,
        format!("{t}/instances"),
        "The task's instance documents, newest first",
        "runs",
        vec![
            TASK,
            LIMIT,
            OFFSET,
            query("status", "array", "keep these statuses (repeatable)"),
        ],
        get(tasks::list_instances),
    ));
    all.push(route(
        Method::GET,
        format!("{t}/instances/{{instance_id}}"),
        "One instance document of the task",
        "runs",
        vec![TASK, INSTANCE],
        get(tasks::get_instance),
    ));
    all.push(route(
        Method::GET,
        format!("{t}/instances/{{instance_id}}/progress"),
        "An instance's progress: steps done of all, and each step's state",
        "runs",
        vec![TASK, INSTANCE],
        get(tasks::progress),
    ));
    all.push(route(
        Method::GET,
        format!("{t}/instances/{{instance_id}}/triggers"),
        "The triggers recorded for an instance",
        "runs",
        vec![TASK, INSTANCE, LIMIT, OFFSET],
        get(tasks::triggers),
    ));
    all.push(route(
        Method::GET,
        format!("{t}/run-groups"),
        "The task's run groups, newest first",
        "runs",
        vec![TASK, LIMIT, OFFSET],
        get(tasks::list_groups),
    ));
    let group = route(
        Method::GET,
        format!("{t}/run-groups/{{run_group_id}}"),
        "One run group of the task: how its runs came out, and a page of them",
        "runs",
        vec![TASK, GROUP, LIMIT, OFFSET, RUN_OUTCOME],
        get(tasks::get_group),
    );
    all.push(group);
    let mut stream = route(
        Method::GET,
        format!("{t}/run-groups/{{run_group_id}}/stream"),
        "Server-sent events: a snapshot of the group every 2 s, then complete (or not_found, or timeout)",
        "runs",
        vec![TASK, GROUP, LIMIT, OFFSET, RUN_OUTCOME],
        get(events::group_stream),
    );
    stream.produces = "text/event-stream";
    all.push(stream);
    all.push(route(
        Method::GET,
        "/api/v1/task-instances",
        "Every task instance, newest first, each with its outcome and scores",
        "runs",
        vec![
            LIMIT,
            OFFSET,
            query("task_id", "string", "only this task's"),
            query("status", "array", "keep these statuses (repeatable)"),
        ],
        get(tasks::list_all_instances),
    ));
    all.push(route(
        Method::GET,
        "/api/v1/task-instances/{task_instance_id}",
        "One task instance with its progress and, for a run the explorer started, its workflow",
        "runs",
        vec![path(
            "task_instance_id",
            "the instance's id, percent-encoded",
        )],
        get(tasks::get_any_instance),
    ));
    all.push(route(
        Method::GET,
        "/api/v1/task-instances/{task_instance_id}/conversations",
        "The conversations recorded for an instance",
        "runs",
        vec![
            path("task_instance_id", "the instance's id, percent-encoded"),
            LIMIT,
            OFFSET,
        ],
        get(tasks::conversations),
    ));
    let any_group = route(
        Method::GET,
        "/api/v1/run-groups/{run_group_id}",
        "One run group, whichever task or bundle it ran",
        "runs",
        vec![GROUP, LIMIT, OFFSET, RUN_OUTCOME],
        get(tasks::get_any_group),
    );
    all.push(any_group);
    let mut content = route(
        Method::GET,
        "/api/v1/objects/content",
        "An object's bytes, with a policy for its content type (HTML runs sandboxed)",
        "objects",
        vec![
            Param {
                required: true,
                ..query("object_url", "string", "the object's URL")
            },
            query("download", "boolean", "ask for an attachment"),
        ],
        get(objects::content),
    );
    content.produces = "*/*";
    all.push(content);
    let metadata = route(
        Method::GET,
        "/api/v1/objects/metadata",
        "An object's size and content type, and whether a browser is served it to show in the page",
        "objects",
        vec![Param {
            required: true,
            ..query("object_url", "string", "the object's URL")
        }],
        get(objects::metadata),
    );
    all.push(metadata);
    all.push(route(
        Method::GET,
        "/api/v1/bundles",
        "Every bundle agent-env run can name, with its tasks and evals",
        "bundles",
        vec![LIMIT, OFFSET],
        get(bundles::list_bundles),
    ));
    let mut run_bundle = route(
        Method::POST,
        "/api/v1/bundles/{bundle}/run",
        "Run a bundle (its tasks, or those named) as agent-env run does",
        "bundles",
        vec![path(
            "bundle",
            "the bundle's name or <package>/<name>, percent-encoded",
        )],
        post(bundles::run_bundle),
    );
    run_bundle.body = Some("BundleRunRequest");
    all.push(run_bundle);
    all.push(route(
        Method::GET,
        "/api/v1/workflows",
        "The runs this explorer started, newest first",
        "runs",
        vec![LIMIT, OFFSET],
        get(workflows::list_workflows),
    ));
    all.push(route(
        Method::GET,
        "/api/v1/workflows/{workflow_id}",
        "One run the explorer started: its state, its instances, and the lines it printed",
        "runs",
        vec![
            path("workflow_id", "the workflow's id"),
            query("since", "integer", "only lines numbered this or later"),
        ],
        get(workflows::get_workflow),
    ));
    let mut log = route(
        Method::GET,
        "/api/v1/workflows/{workflow_id}/log",
        "The run log of a run the explorer started, as text (the file agent-env run writes too)",
        "runs",
        vec![path("workflow_id", "the workflow's id")],
        get(workflows::workflow_log),
    );
    log.produces = "text/plain";
    all.push(log);
    all.push(route(
        Method::POST,
        "/api/v1/workflows/{workflow_id}/cancel",
        "Cancel a run the explorer started",
        "runs",
        vec![path("workflow_id", "the workflow's id")],
        post(workflows::cancel_workflow),
    ));
    all.push(route(
        Method::GET,
        "/api/v1/plugin-report",
        "The plugin report, as agent-env plugin list --json gives it",
        "plugins",
        vec![],
        get(plugins::plugin_report),
    ));
    all.push(route(
        Method::GET,
        "/api/v1/plugin-report/{package}",
        "One package of the plugin report with its child process, as agent-env plugin show --json",
        "plugins",
        vec![path("package", "the package's name")],
        get(plugins::plugin_show),
    ));
    all.push(route(
        Method::GET,
        "/api/v1/explorer-plugins",
        "The explorer plugins: the routes each serves and its page, or why it serves none",
        "plugins",
        vec![],
        get(plugins::explorer_plugins),
    ));
    all.push(route(
        Method::GET,
        "/api/v1/config",
        "The config as agent-env config show --json gives it (secrets masked)",
        "config",
        vec![],
        get(config::config_show),
    ));
    all.push(route(
        Method::GET,
        "/api/v1/health",
        "The server answers: its version",
        "server",
        vec![],
        get(config::health),
    ));
    all
}

/// The methods the API's routes take at `path` (a request path, its ids one segment each); `HEAD`
/// after `GET`, which serves it too.
pub fn methods_at(path: &str) -> Vec<Method> {
    static TABLE: std::sync::OnceLock<Vec<(Method, String)>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| routes().into_iter().map(|r| (r.method, r.path)).collect());
    let segments: Vec<&str> = path.split('/').collect();
    let mut found: Vec<Method> = Vec::new();
    for (method, pattern) in table {
        let parts: Vec<&str> = pattern.split('/').collect();
        let matches = parts.len() == segments.len()
            && parts
                .iter()
                .zip(&segments)
                .all(|(p, s)| p == s || (p.starts_with('{') && !s.is_empty()));
        if matches && !found.contains(method) {
            found.push(method.clone());
            if *method == Method::GET {
                found.push(Method::HEAD);
            }
        }
    }
    found
}

/// The API's router, `/openapi.json` included (unknown API paths and methods answer JSON: see
/// [`crate::http::errors`]).
pub fn router() -> Router<Shared> {
    let mut router = Router::new();
    let all = routes();
    // Shared, not owned, by the handler: a handler is cloned for every request it answers, and a
    // document owned by the closure (about 2 MB of JSON tree) was deep-copied with it; before the
    // server took the app through `into_make_service`, for every connection it accepted too.
    let document = std::sync::Arc::new(openapi::document(&all));
    for r in all {
        router = router.route(&r.path, r.handler);
    }
    router.route(
        "/openapi.json",
        get(move |State(s): State<Shared>| {
            let document = openapi::with_plugin_routes((*document).clone(), &s.plugins.listings());
            async move { axum::Json(document) }
        }),
    )
}
