//! The `explorer_plugins` group's methods: a plugin's explorer class says which HTTP routes it serves
//! (`explorer.router`), and `agent-env up` forwards each request that matches one to it as a call
//! (`explorer.request`) and relays the answer. See `docs/protocol.md` §4.6.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Asks an explorer class for its routes, once per start of the plugin.
pub const EXPLORER_ROUTER: &str = "explorer.router";
/// Hands an explorer class one HTTP request that matched one of its routes.
pub const EXPLORER_REQUEST: &str = "explorer.request";

/// `explorer.router` params: which of the plugin's explorer classes is asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExplorerRouterParams {
    /// The name under `[provides.explorer_plugins]`.
    pub name: String,
    /// Its class label.
    pub class: String,
}

/// One route: a method and a path. A path segment `{name}` matches any one segment (still
/// percent-encoded, as sent); every other segment matches itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExplorerRoute {
    /// `GET`, `POST`, …
    pub method: String,
    /// An absolute path: `/plugins/words/stats`, `/api/v1/agents/trajectory-url`, `/plugins/words/{id}`.
    pub path: String,
}

/// `explorer.router` result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExplorerResponse {
    /// The status code, 100 to 599.
    #[cfg_attr(feature = "schema", schemars(range(min = 100, max = 599)))]
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

impl ExplorerRequestParams {
    /// The `{name}` segment `name` of the route, percent-decoded.
    pub fn param(&self, name: &str) -> Option<String> {
        self.path_params.get(name).map(|v| percent_decode(v))
    }

    /// The first value of `name` in the query string, percent-decoded (`+` as a space).
    pub fn query_value(&self, name: &str) -> Option<String> {
        self.query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(&key.replace('+', " ")) == name)
                .then(|| percent_decode(&value.replace('+', " ")))
        })
    }

    /// The request body's bytes (`body` or the decoded `body_base64`; empty when neither).
    pub fn body_bytes(&self) -> Vec<u8> {
        use base64::Engine;
        match (&self.body, &self.body_base64) {
            (Some(text), _) => text.as_bytes().to_vec(),
            (None, Some(encoded)) => base64::engine::general_purpose::STANDARD
                .decode(encoded.as_bytes())
                .unwrap_or_default(),
            (None, None) => Vec::new(),
        }
    }
}

/// `%XX` sequences decoded (invalid ones kept as written); bytes that are not UTF-8 become U+FFFD.
pub fn percent_decode(text: &str) -> String {
    String::from_utf8_lossy(&percent_decode_bytes(text, false)).into_owned()
}

/// The bytes `text` stands for: `%XX` sequences decoded, invalid ones kept as written, and `+` read
/// as a space when `plus_is_space` (as in a query string).
pub fn percent_decode_bytes(text: &str, plus_is_space: bool) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let hex = |b: u8| (b as char).to_digit(16);
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                if let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    out.push((hi * 16 + lo) as u8);
                    i += 3;
                    continue;
                }
                out.push(b'%');
            }
            b'+' if plus_is_space => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    out
}

impl ExplorerResponse {
    /// An answer with `status`, no headers and no body.
    pub fn empty(status: u16) -> ExplorerResponse {
        ExplorerResponse {
            status,
            ..ExplorerResponse::default()
        }
    }

    /// A `text/plain` answer.
    pub fn text(status: u16, body: impl Into<String>) -> ExplorerResponse {
        ExplorerResponse::empty(status)
            .header("content-type", "text/plain; charset=utf-8")
            .body(body)
    }

    /// A `200` HTML page.
    pub fn html(body: impl Into<String>) -> ExplorerResponse {
        ExplorerResponse::empty(200)
            .header("content-type", "text/html; charset=utf-8")
            .body(body)
    }

    /// A JSON answer.
    pub fn json(status: u16, value: &serde_json::Value) -> ExplorerResponse {
        ExplorerResponse::empty(status)
            .header("content-type", "application/json")
            .body(value.to_string())
    }

    /// The same answer with header `name` set to `value` (names are kept lowercased).
    pub fn header(mut self, name: &str, value: impl Into<String>) -> ExplorerResponse {
        self.headers.insert(name.to_ascii_lowercase(), value.into());
        self
    }

    /// The same answer with a text body.
    pub fn body(mut self, body: impl Into<String>) -> ExplorerResponse {
        self.body = Some(body.into());
        self.body_base64 = None;
        self
    }
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
        assert_eq!(request.param("id").as_deref(), Some("a/b"));
    }

    #[test]
    fn queries_and_bodies_decode() {
        let request: ExplorerRequestParams = serde_json::from_value(json!({
            "name": "w", "class": "W", "route": "/x", "method": "POST", "path": "/x",
            "query": "q=a+b%21&empty&n=%zz", "body_base64": "AP8="
        }))
        .unwrap();
        assert_eq!(request.query_value("q").as_deref(), Some("a b!"));
        assert_eq!(request.query_value("empty").as_deref(), Some(""));
        assert_eq!(request.query_value("n").as_deref(), Some("%zz"));
        assert_eq!(request.query_value("missing"), None);
        assert_eq!(request.body_bytes(), vec![0, 255]);
        assert_eq!(percent_decode("%"), "%");
        assert_eq!(percent_decode("a%2"), "a%2");
    }
}
