//! An explorer plugin's declared routes, and matching a request against them. A path segment
//! `{name}` matches any one segment (still percent-encoded, as sent); every other segment matches
//! itself exactly. A `GET` route answers `HEAD` too.

use std::collections::BTreeMap;

use agent_env_protocol::explorer::ExplorerRoute;

/// One segment of a route's path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Param(String),
}

/// A route ready to match requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutePattern {
    /// The method, uppercased.
    pub method: String,
    /// The path as the plugin declared it.
    pub path: String,
    segments: Vec<Segment>,
}

/// Why a declared route cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error(
        "route '{method} {path}': the method must be one HTTP method word such as GET or POST"
    )]
    Method { method: String, path: String },
    #[error("route '{method} {path}': the path must start with '/' (an absolute path such as /ext/words)")]
    Relative { method: String, path: String },
    #[error(
        "route '{method} {path}': segment '{segment}' is neither a literal nor one whole {{name}}"
    )]
    Segment {
        method: String,
        path: String,
        segment: String,
    },
}

impl RoutePattern {
    /// Reads one declared route.
    pub fn parse(route: &ExplorerRoute) -> Result<RoutePattern, RouteError> {
        let method = route.method.trim().to_ascii_uppercase();
        if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(RouteError::Method {
                method: route.method.clone(),
                path: route.path.clone(),
            });
        }
        let Some(rest) = route.path.strip_prefix('/') else {
            return Err(RouteError::Relative {
                method,
                path: route.path.clone(),
            });
        };
        let segments = rest
            .split('/')
            .map(|segment| parse_segment(segment, &method, &route.path))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RoutePattern {
            method,
            path: route.path.clone(),
            segments,
        })
    }

    /// Whether `other` is the same route (method and path as declared).
    pub fn same_route(&self, other: &RoutePattern) -> bool {
        self.method == other.method && self.path == other.path
    }

    /// The `{name}` values when `method` and `path` (percent-encoded, without the query) match.
    pub fn matches(&self, method: &str, path: &str) -> Option<BTreeMap<String, String>> {
        let method_ok = self.method == method || (method == "HEAD" && self.method == "GET");
        if !method_ok {
            return None;
        }
        let rest = path.strip_prefix('/')?;
        let mut given = rest.split('/');
        let mut params = BTreeMap::new();
        for segment in &self.segments {
            let value = given.next()?;
            match segment {
                Segment::Literal(literal) if literal == value => {}
                Segment::Literal(_) => return None,
                Segment::Param(_) if value.is_empty() => return None,
                Segment::Param(name) => {
                    params.insert(name.clone(), value.to_string());
                }
            }
        }
        given.next().is_none().then_some(params)
    }
}

fn parse_segment(segment: &str, method: &str, path: &str) -> Result<Segment, RouteError> {
    let braces = segment.contains('{') || segment.contains('}');
    if !braces {
        return Ok(Segment::Literal(segment.to_string()));
    }
    let name = segment
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .filter(|name| {
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
    match name {
        Some(name) => Ok(Segment::Param(name.to_string())),
        None => Err(RouteError::Segment {
            method: method.to_string(),
            path: path.to_string(),
            segment: segment.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(method: &str, path: &str) -> Result<RoutePattern, RouteError> {
        RoutePattern::parse(&ExplorerRoute {
            method: method.into(),
            path: path.into(),
        })
    }

    #[test]
    fn literals_match_themselves_and_params_one_segment() {
        let p = pattern("get", "/ext/words/{id}").unwrap();
        assert_eq!(p.method, "GET");
        let params = p.matches("GET", "/ext/words/a%2Fb").unwrap();
        assert_eq!(params["id"], "a%2Fb");
        assert!(p.matches("HEAD", "/ext/words/x").is_some());
        assert!(p.matches("POST", "/ext/words/x").is_none());
        assert!(p.matches("GET", "/ext/words/x/y").is_none());
        assert!(p.matches("GET", "/ext/words/").is_none());
        assert!(p.matches("GET", "/ext/word/x").is_none());
        assert!(p.matches("GET", "/ext/words").is_none());
    }

    #[test]
    fn a_trailing_slash_is_a_segment_of_its_own() {
        let p = pattern("GET", "/ext/words").unwrap();
        assert!(p.matches("GET", "/ext/words").is_some());
        assert!(p.matches("GET", "/ext/words/").is_none());
        let root = pattern("GET", "/").unwrap();
        assert!(root.matches("GET", "/").is_some());
        assert!(root.matches("GET", "/x").is_none());
    }

    #[test]
    fn bad_routes_say_what_is_wrong() {
        let e = pattern("GET", "ext/words").unwrap_err();
        assert!(e.to_string().contains("must start with '/'"), "{e}");
        let e = pattern("GE T", "/x").unwrap_err();
        assert!(e.to_string().contains("HTTP method"), "{e}");
        let e = pattern("GET", "/x/a{id}").unwrap_err();
        assert!(e.to_string().contains("segment 'a{id}'"), "{e}");
    }
}
