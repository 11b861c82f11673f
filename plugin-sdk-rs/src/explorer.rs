//! Explorer routes: pages and endpoints served inside `agent-env up`.

pub use agent_env_protocol::explorer::{
    ExplorerRequestParams as ExplorerRequest, ExplorerResponse,
};
use agent_env_protocol::explorer::{ExplorerRoute, ExplorerRouterResult};

use crate::host::HostHandle;

type HandlerFn = dyn Fn(&ExplorerRequest, &HostHandle) -> ExplorerResponse + Send + Sync;
type RouteHandler = Box<HandlerFn>;

/// An explorer plugin (`explorer_plugins`): the HTTP routes it serves in `agent-env up`, and
/// optionally a page the explorer's navigation links to. Register it with [`crate::Plugin::explorer`].
///
/// The explorer matches every request against plugin routes before its own, so a route may add a
/// literal path under a core prefix. A path segment `{name}` matches any one segment; read it with
/// [`ExplorerRequest::param`]. Keep pages under a prefix of your own (`/ext/<name>/...`).
///
/// ```
/// use agent_env_plugin_sdk::{Explorer, ExplorerResponse, Plugin};
///
/// let words = Explorer::new("words")
///     .page("/ext/words", "Words")
///     .get("/ext/words", |_req, _host| ExplorerResponse::html("<h1>Words</h1>"))
///     .get("/ext/words/{word}", |req, _host| {
///         let word = req.param("word").unwrap_or_default();
///         ExplorerResponse::text(200, format!("{} letters", word.chars().count()))
///     });
/// let plugin = Plugin::new("agentenv-words", "0.1.0").explorer(words);
/// let answer = plugin.initialize_result(1);
/// assert_eq!(answer.contributions[0].group, "explorer_plugins");
/// assert_eq!(answer.contributions[0].methods, ["router"]);
/// ```
pub struct Explorer {
    name: String,
    class: String,
    page: Option<String>,
    title: Option<String>,
    routes: Vec<(ExplorerRoute, RouteHandler)>,
}

impl Explorer {
    /// An explorer plugin named `name` (its name under `[provides.explorer_plugins]`, and its class
    /// label unless [`Explorer::class`] says otherwise).
    pub fn new(name: &str) -> Explorer {
        Explorer {
            name: name.into(),
            class: name.into(),
            page: None,
            title: None,
            routes: Vec::new(),
        }
    }

    /// The class label the manifest names.
    pub fn class(mut self, class: &str) -> Explorer {
        self.class = class.into();
        self
    }

    /// The page the explorer's navigation links to (one of its `GET` routes), with the link text.
    pub fn page(mut self, path: &str, title: &str) -> Explorer {
        self.page = Some(path.into());
        self.title = Some(title.into());
        self
    }

    /// Serves `method` requests to `path` with `handler`.
    pub fn route(
        mut self,
        method: &str,
        path: &str,
        handler: impl Fn(&ExplorerRequest, &HostHandle) -> ExplorerResponse + Send + Sync + 'static,
    ) -> Explorer {
        let route = ExplorerRoute {
            method: method.to_ascii_uppercase(),
            path: path.into(),
        };
        self.routes.push((route, Box::new(handler)));
        self
    }

    /// Serves `GET` (and `HEAD`) requests to `path`.
    pub fn get(
        self,
        path: &str,
        handler: impl Fn(&ExplorerRequest, &HostHandle) -> ExplorerResponse + Send + Sync + 'static,
    ) -> Explorer {
        self.route("GET", path, handler)
    }

    /// Serves `POST` requests to `path`.
    pub fn post(
        self,
        path: &str,
        handler: impl Fn(&ExplorerRequest, &HostHandle) -> ExplorerResponse + Send + Sync + 'static,
    ) -> Explorer {
        self.route("POST", path, handler)
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn class_label(&self) -> &str {
        &self.class
    }

    /// The `explorer.router` answer.
    pub(crate) fn router(&self) -> ExplorerRouterResult {
        ExplorerRouterResult {
            routes: self.routes.iter().map(|(r, _)| r.clone()).collect(),
            page: self.page.clone(),
            title: self.title.clone(),
        }
    }

    /// The handler of the route the explorer matched, by the route as declared.
    pub(crate) fn handler(&self, method: &str, route: &str) -> Option<&HandlerFn> {
        let method = method.to_ascii_uppercase();
        self.routes
            .iter()
            .find(|(r, _)| {
                r.path == route && (r.method == method || (method == "HEAD" && r.method == "GET"))
            })
            .map(|(_, handler)| handler.as_ref())
    }
}
