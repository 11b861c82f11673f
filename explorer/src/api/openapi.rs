//! The OpenAPI 3.1 document, built from the same route list as the router ([`super::routes`]), so
//! every path served is documented and nothing documented is missing. What each operation answers
//! and the failures it can give are in `operations`; the schemas they name in `schemas`.

use super::group_runs::RUN_WORDS;
use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::{In, Route};
use crate::data::entities::SORT_FIELDS;
use crate::data::filter::{OUTCOMES, STATUSES};
use crate::http::page::MAX_LIMIT;

mod operations;
mod schemas;

pub use operations::{Failure, Operation};

/// The document for `routes`.
pub fn document(routes: &[Route]) -> Value {
    let mut paths: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    for r in routes {
        let method = r.method.as_str().to_ascii_lowercase();
        let more = Operation::of(&r.method, &r.path)
            .map(Operation::more_params)
            .unwrap_or_default();
        let mut op = json!({
            "summary": r.summary,
            "tags": [r.tag],
            "operationId": operation_id(&method, &r.path),
            "parameters": r.params.iter().chain(&more).map(|p| parameter(p, &r.path)).collect::<Vec<_>>(),
            "responses": responses(r),
        });
        if let Some(body) = r.body {
            op["requestBody"] = json!({
                "required": false,
                "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{body}")}}},
            });
        }
        paths.entry(r.path.clone()).or_default().insert(method, op);
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "agent-env explorer",
            "version": agent_env::VERSION,
            "description": "The REST API of agent-env up. Ids are one percent-encoded path segment ('/' as %2F). Lists answer {items, total, limit, offset, has_more}; the lists of task instances add next_cursor, which their cursor parameter takes to page stably while runs write; errors answer {detail}: a sentence, or for a request that does not validate (422) a list of {loc, msg, type}.",
        },
        "paths": paths,
        "components": {"schemas": schemas::all()},
    })
}

/// `document` with the routes explorer plugins serve (tag `explorer plugins`); a plugin route on a
/// path the explorer documents already takes that method's place, as it does in serving.
pub fn with_plugin_routes(
    mut document: Value,
    listings: &[crate::plugins::mounted::Listing],
) -> Value {
    let Some(paths) = document["paths"].as_object_mut() else {
        return document;
    };
    for listing in listings {
        for route in &listing.routes {
            let method = route.method.to_ascii_lowercase();
            let params: Vec<Value> = route
                .path
                .split('/')
                .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
                .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
                .collect();
            let op = json!({
                "summary": format!("Served by the explorer plugin '{}' ({})", listing.name, listing.package.as_deref().unwrap_or("")),
                "tags": ["explorer plugins"],
                "operationId": format!("{}_{}", operation_id(&method, &route.path), listing.name.replace('-', "_")),
                "parameters": params,
                "responses": {"default": {"description": "what the plugin answers"}},
            });
            if let Some(ops) = paths
                .entry(route.path.clone())
                .or_insert_with(|| json!({}))
                .as_object_mut()
            {
                ops.insert(method, op);
            }
        }
    }
    document
}

fn operation_id(method: &str, path: &str) -> String {
    let words: Vec<String> = path
        .trim_start_matches("/api/v1/")
        .split('/')
        .map(|part| {
            part.trim_matches(|c| c == '{' || c == '}')
                .replace('-', "_")
        })
        .collect();
    format!("{method}_{}", words.join("_"))
}

/// The words a run group's `outcome` filter takes: those its runs are said in (the filter's own
/// list, so the two cannot drift), and `scored_below_one`, as `agent-env run --json` words one.
fn outcome_words() -> Vec<&'static str> {
    let mut words = RUN_WORDS.to_vec();
    words.push("scored_below_one");
    words
}

/// The words a `status` filter takes: the statuses a run records, the outcome words beside them, and
/// `scored_below_one` as `agent-env run --json` words it.
fn status_words() -> Vec<&'static str> {
    let mut words: Vec<&'static str> = STATUSES.to_vec();
    words.extend(OUTCOMES.iter().map(|(word, _)| *word));
    words.push("scored_below_one");
    words
}

/// A parameter of the route at `path`, with the bounds, words and default the handler holds it to.
fn parameter(p: &super::Param, path: &str) -> Value {
    let mut schema = match p.schema {
        "array" => json!({"type": "array", "items": {"type": "string"}}),
        other => json!({"type": other}),
    };
    match (p.location, p.name) {
        (In::Query, "limit") => {
            let default = if path.ends_with("/versions") { 100 } else { 50 };
            schema =
                json!({"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": default});
        }
        (In::Query, "offset") => {
            schema = json!({"type": "integer", "minimum": 0, "default": 0});
        }
        (In::Query, "since") => {
            schema = json!({"type": "integer", "minimum": 0, "default": 0});
        }
        (In::Query, "version") => {
            schema = json!({"type": "integer", "minimum": super::tasks::FIRST_VERSION});
        }
        (In::Query, "sort_by") => {
            schema = json!({"type": "string", "enum": SORT_FIELDS, "default": "created_at_utc"});
        }
        (In::Query, "descending") => {
            schema = json!({"type": "boolean", "default": true});
        }
        (In::Query, "download") => {
            schema = json!({"type": "boolean", "default": false});
        }
        (In::Query, "status") => {
            schema = json!({"type": "array", "items": {"type": "string", "enum": status_words()}});
        }
        (In::Query, "outcome") => {
            schema = json!({"type": "string", "enum": outcome_words()});
        }
        _ => {}
    }
    json!({
        "name": p.name,
        "in": if p.location == In::Path { "path" } else { "query" },
        "required": p.required,
        "description": p.description,
        "schema": schema,
    })
}

/// The route's responses: its `200` and each failure it can give.
fn responses(r: &Route) -> Value {
    let operation = Operation::of(&r.method, &r.path);
    let schema = operation
        .map(Operation::answer)
        .unwrap_or_else(|| json!({}));
    let mut all = Map::new();
    all.insert(
        "200".into(),
        json!({"description": "OK", "content": {r.produces: {"schema": schema}}}),
    );
    for failure in operation.map(Operation::failures).unwrap_or_default() {
        all.insert(failure.status().to_string(), failure.response());
    }
    Value::Object(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::routes;

    /// Every `$ref` in `value`.
    fn refs(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    found.push(r.clone());
                }
                map.values().for_each(|v| refs(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, found)),
            _ => {}
        }
    }

    /// The document and the router's routes are one list: every route is an operation of the
    /// document with a known kind, a non-empty `200` schema and its failures; every operation is a
    /// route; and every schema an operation names is there.
    #[test]
    fn every_route_is_documented_with_what_it_answers() {
        let all = routes();
        let doc = document(&all);
        let mut documented: Vec<(String, String)> = Vec::new();
        for (path, ops) in doc["paths"].as_object().unwrap() {
            for method in ops.as_object().unwrap().keys() {
                documented.push((method.to_uppercase(), path.clone()));
            }
        }
        let mut served: Vec<(String, String)> = all
            .iter()
            .map(|r| (r.method.to_string(), r.path.clone()))
            .collect();
        documented.sort();
        served.sort();
        assert_eq!(documented, served);

        for r in &all {
            let kind = Operation::of(&r.method, &r.path)
                .unwrap_or_else(|| panic!("{} {} has no operation kind", r.method, r.path));
            let op = &doc["paths"][&r.path][r.method.as_str().to_ascii_lowercase()];
            let ok = &op["responses"]["200"]["content"][r.produces]["schema"];
            assert!(
                ok.as_object().is_some_and(|s| !s.is_empty()),
                "{} {}: empty 200 schema",
                r.method,
                r.path
            );
            let codes: Vec<&String> = op["responses"].as_object().unwrap().keys().collect();
            for failure in kind.failures() {
                assert!(codes.contains(&&failure.status().to_string()));
            }
            // A body is read (and so may be too large) exactly where one is declared.
            assert_eq!(
                r.body.is_some(),
                kind.failures().contains(&Failure::TooLarge),
                "{} {}",
                r.method,
                r.path
            );
        }

        let mut named = Vec::new();
        refs(&doc, &mut named);
        for r in named {
            let name = r.trim_start_matches("#/components/schemas/");
            assert!(
                doc["components"]["schemas"].get(name).is_some(),
                "{r} is not in the document"
            );
        }
    }

    #[test]
    fn the_health_route_answers_its_version_and_fails_only_before_its_handler() {
        let doc = document(&routes());
        let responses = doc["paths"]["/api/v1/health"]["get"]["responses"]
            .as_object()
            .unwrap();
        let codes: Vec<&str> = responses.keys().map(String::as_str).collect();
        assert_eq!(codes, ["200", "403", "405", "421"]);
        assert_eq!(
            doc["components"]["schemas"]["Health"]["required"],
            json!(["status", "version"])
        );
    }

    #[test]
    fn query_parameters_carry_the_bounds_and_words_the_handlers_hold_them_to() {
        let doc = document(&routes());
        let params = |path: &str| -> Vec<Value> {
            doc["paths"][path]["get"]["parameters"]
                .as_array()
                .unwrap()
                .clone()
        };
        let schema_of = |path: &str, name: &str| -> Value {
            params(path)
                .into_iter()
                .find(|p| p["name"] == name)
                .unwrap_or_else(|| panic!("{path} has no {name}"))["schema"]
                .clone()
        };
        let limit = schema_of("/api/v1/tasks", "limit");
        assert_eq!(
            (limit["minimum"].clone(), limit["maximum"].clone()),
            (json!(1), json!(500))
        );
        assert_eq!(limit["default"], 50);
        assert_eq!(
            schema_of("/api/v1/tasks/{entity_id}/versions", "limit")["default"],
            100
        );
        assert_eq!(schema_of("/api/v1/workflows", "offset")["minimum"], 0);
        // The lists of instances take the cursor their pages answer; other lists do not.
        for path in [
            "/api/v1/task-instances",
            "/api/v1/tasks/{task_id}/runs",
            "/api/v1/tasks/{task_id}/instances",
        ] {
            assert_eq!(schema_of(path, "cursor")["type"], "string");
        }
        assert!(params("/api/v1/workflows")
            .iter()
            .all(|p| p["name"] != "cursor"));
        assert_eq!(
            schema_of("/api/v1/workflows/{workflow_id}", "since")["minimum"],
            0
        );
        assert_eq!(
            schema_of("/api/v1/tasks", "sort_by")["enum"],
            json!(["created_at_utc", "id", "name", "type", "version"])
        );
        let statuses = schema_of("/api/v1/task-instances", "status")["items"]["enum"].clone();
        for word in [
            "completed",
            "scored below 1",
            "scored_below_one",
            "interrupted",
        ] {
            assert!(
                statuses.as_array().unwrap().contains(&json!(word)),
                "{word}"
            );
        }
        let outcome = schema_of("/api/v1/run-groups/{run_group_id}", "outcome");
        assert_eq!(outcome["enum"], json!(outcome_words()));
    }

    /// The outcome filter's words are the words a group's runs have: each outcome an instance is
    /// judged to have, and each status a run the explorer started has.
    #[test]
    fn the_outcome_words_are_every_instance_outcome_and_run_status() {
        for word in schemas::INSTANCE_OUTCOMES
            .iter()
            .chain(&schemas::WORKFLOW_STATUSES)
        {
            assert!(RUN_WORDS.contains(word), "{word}");
        }
        for (word, _) in OUTCOMES {
            assert!(schemas::INSTANCE_OUTCOMES.contains(&word), "{word}");
        }
        use crate::runs::manager::Phase;
        for phase in [
            Phase::Queued,
            Phase::Running,
            Phase::Finished("finished"),
            Phase::Finished("failed"),
            Phase::Finished("cancelled"),
            Phase::Errored("x".into()),
        ] {
            assert!(schemas::WORKFLOW_STATUSES.contains(&phase.word()));
        }
    }
}
