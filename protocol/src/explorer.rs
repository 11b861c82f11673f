//! The `explorer_plugins` group's methods: a plugin's explorer class says which HTTP routes it serves
//! (`explorer.router`), and `agent-env up` forwards each request that matches one to it as a call
//! (`explorer.request`) and relays the answer. See `docs/protocol.md` §4.7.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Asks an explorer class for its routes, once per start of the plugin.
pub const EXPLORER_ROUTER: &str = "explorer.router";
/// Hands an explorer class one HTTP request that matched one of its routes.
pub const EXPLORER_REQUEST: &str = "explorer.request";

/// `explorer.router` params: which of the plugin's explorer classes is asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExplorerRouterParams {
    /// The name under `[provides.explorer_plugins]`.
    pub name: String,
    /// Its class label.
    pub class: String,
}

/// One route: a method and a path. A path segment `{name}` matches any one segment (still
/// percent-encoded, as sent); every other segment matches itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExplorerRoute {
    /// `GET`, `POST`, …
    pub method: String,
    /// An absolute path: `/plugins/words/stats`, `/api/v1/agents/trajectory-url`, `/plugins/words/{id}`.
    pub path: String,
}

/// `explorer.router` result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExplorerRouterResult {
    /// The routes the class serves; they are matched before the explorer's own.
    pub routes: Vec<ExplorerRoute>,
    /// A page of the class (a `GET` route) the explorer's navigation links to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    /// The page's link text (else the name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// `explorer.request` params: one HTTP request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExplorerRequestParams {
    /// The name under `[provides.explorer_plugins]`.
    pub name: String,
    /// Its class label.
    pub class: String,
    /// The route that matched, as the class declared it.
    pub route: String,
    /// The request's method.
    pub method: String,
    /// The request's path, still percent-encoded.
    pub path: String,
    /// The `{name}` segments of the route, still percent-encoded.
    #[serde(default)]
    pub path_params: BTreeMap<String, String>,
    /// The query string after `?`, as sent (empty when none).
    #[serde(default)]
    pub query: String,
    /// The request headers, names lowercased (a repeated header's values joined with `, `).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The body when it is UTF-8 text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The body, base64-encoded, when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_base64: Option<String>,
}

/// `explorer.request` result: the HTTP answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExplorerResponse {
    /// The status code, 100 to 599.
    pub status: u16,
    /// Response headers (`content-type` defaults to `text/plain; charset=utf-8`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A text body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// A binary body, base64-encoded (instead of `body`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_base64: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_shapes_on_the_wire() {
        let routes: ExplorerRouterResult = serde_json::from_value(json!({
            "routes": [{"method": "GET", "path": "/plugins/w/{id}"}], "page": "/plugins/w"
        }))
        .unwrap();
        assert_eq!(routes.routes[0].path, "/plugins/w/{id}");
        assert_eq!(routes.title, None);
        let answer: ExplorerResponse = serde_json::from_value(json!({"status": 200})).unwrap();
        assert!(answer.headers.is_empty() && answer.body.is_none());
        let request = ExplorerRequestParams {
            name: "w".into(),
            class: "W".into(),
            route: "/plugins/w/{id}".into(),
            method: "GET".into(),
            path: "/plugins/w/a%2Fb".into(),
            path_params: [("id".to_string(), "a%2Fb".to_string())].into(),
            query: String::new(),
            headers: BTreeMap::new(),
            body: None,
            body_base64: None,
        };
        let wire = serde_json::to_value(&request).unwrap();
        assert_eq!(wire["path_params"]["id"], "a%2Fb");
        assert!(wire.get("body").is_none());
    }
}
