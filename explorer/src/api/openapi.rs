//! The OpenAPI 3.1 document, built from the same route list as the router ([`super::routes`]), so
//! every path served is documented and nothing documented is missing.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::tasks::MAX_RUNS_PER_REQUEST;
use super::{In, Route};

/// The document for `routes`.
pub fn document(routes: &[Route]) -> Value {
    let mut paths: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    for r in routes {
        let method = r.method.as_str().to_ascii_lowercase();
        let mut op = json!({
            "summary": r.summary,
            "tags": [r.tag],
            "operationId": operation_id(&method, &r.path),
            "parameters": r.params.iter().map(parameter).collect::<Vec<_>>(),
            "responses": responses(r.produces, r.answer),
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
            "description": "The REST API of agent-env up. Ids are one percent-encoded path segment ('/' as %2F). Lists answer {items, total, limit, offset, has_more}; errors answer {detail}.",
        },
        "paths": paths,
        "components": {"schemas": schemas()},
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

fn parameter(p: &super::Param) -> Value {
    let schema = match p.schema {
        "array" => json!({"type": "array", "items": {"type": "string"}}),
        other => json!({"type": other}),
    };
    json!({
        "name": p.name,
        "in": if p.location == In::Path { "path" } else { "query" },
        "required": p.required,
        "description": p.description,
        "schema": schema,
    })
}

fn responses(produces: &str, answer: Option<&str>) -> Value {
    let ok = match produces {
        "application/json" => {
            let schema = match answer {
                Some(name) => json!({"$ref": format!("#/components/schemas/{name}")}),
                None => json!({}),
            };
            json!({"description": "OK", "content": {"application/json": {"schema": schema}}})
        }
        other => json!({"description": "OK", "content": {other: {}}}),
    };
    let error = |what: &str| json!({"description": what, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}});
    json!({
        "200": ok,
        "400": error("Bad request"),
        "404": error("Not found"),
        "422": error("The request does not validate"),
    })
}

fn schemas() -> Value {
    let string = json!({"type": ["string", "null"]});
    // A model's or an agent's name (`tasks::MAX_NAME_CHARS`).
    let name = json!({"type": ["string", "null"], "maxLength": super::tasks::MAX_NAME_CHARS});
    let seed =
        json!({"type": ["object", "null"], "description": "values for the steps' <key> tokens"});
    json!({
        "Error": {
            "type": "object",
            "properties": {"detail": {"description": "a sentence, or a list of {loc, msg, type}"}},
            "required": ["detail"],
        },
        "Page": {
            "type": "object",
            "properties": {
                "items": {"type": "array"},
                "total": {"type": "integer"},
                "limit": {"type": "integer"},
                "offset": {"type": "integer"},
                "has_more": {"type": "boolean"},
                "warnings": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "what the list left out and why (a configured document store that cannot be read); absent when nothing was",
                },
            },
        },
        "ObjectMetadata": {
            "type": "object",
            "properties": {
                "size_bytes": {"type": ["integer", "null"], "description": "the object's size, when its store knows it"},
                "content_type": {"type": "string", "description": "the stored content type, else one guessed from the file name"},
                "shown_inline": {
                    "type": "boolean",
                    "description": "true when /api/v1/objects/content serves the object to be shown in the page (text, images, audio, video, JSON, PDF, and HTML, SVG and XML sandboxed); false when it is only a download (application/octet-stream, as an attachment)",
                },
            },
            "required": ["size_bytes", "content_type", "shown_inline"],
        },
        "RunGroup": {
            "type": "object",
            "properties": {
                "run_group_id": {"type": "string"},
                "task_id": {"type": ["string", "null"], "description": "the one task its runs are of; null for a group of several"},
                "task_ids": {"type": "array", "items": {"type": "string"}},
                "total": {"type": ["integer", "null"], "description": "the runs planned when the explorer started them, else the instances recorded; null while a run not started here is live"},
                "recorded": {"type": "integer"},
                "running": {"type": "integer"},
                "run_live": {"type": "boolean"},
                "complete": {"type": "boolean"},
                "outcomes": {"type": "object", "additionalProperties": {"type": "integer"}, "description": "how many runs came out each way (passed, failed, running, error, ...)"},
                "errors": {"type": "array", "items": {"type": "string"}},
                "score_spread_by_task": {
                    "type": "object",
                    "description": "for each task the group's runs are of (keyed by its id), each of its scores (keyed as an instance's scores are, by the verifying step's id) over that task's runs that record a number for it, whatever their outcome; tasks whose steps share an id are never counted together",
                    "additionalProperties": {
                        "type": "object",
                        "additionalProperties": {"$ref": "#/components/schemas/ScoreSpread"},
                    },
                },
                "score_spread": {
                    "type": ["object", "null"],
                    "description": "the one task's entry of score_spread_by_task ({} while none is recorded); null for a group of several tasks, as task_id is",
                    "additionalProperties": {"$ref": "#/components/schemas/ScoreSpread"},
                },
                "runs": {
                    "type": "object",
                    "description": "one page of the group's runs (limit, offset, outcome), as a list answers: items, total, limit, offset, has_more. Each item is {place, instance, workflow}: the explorer's runs in the order it started them (instance null until it records one), then the runs it did not start, oldest first; an instance is its summary, with the workflow_id of the explorer's run that recorded it",
                    "properties": {
                        "items": {"type": "array", "items": {"type": "object"}},
                        "total": {"type": "integer"},
                        "limit": {"type": "integer"},
                        "offset": {"type": "integer"},
                        "has_more": {"type": "boolean"},
                    },
                },
                "run_words": {"type": "object", "additionalProperties": {"type": "integer"}, "description": "how many of the group's runs have each word the outcome filter takes (an instance's outcome, else its run's status), over the whole group"},
                "workflows": {"type": "array", "items": {"type": "object"}, "description": "the runs the explorer started for the group (one request starts at most a hundred), each with its index, seed and status"},
            },
        },
        "ScoreSpread": {
            "type": "object",
            "description": "one score over the runs that record a number for it",
            "properties": {
                "runs": {"type": "integer"},
                "mean": {"type": "number"},
                "min": {"type": "number"},
                "max": {"type": "number"},
            },
            "required": ["runs", "mean", "min", "max"],
        },
        "RunRequest": {
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "version": {"type": ["integer", "null"]},
                "agent_model": name,
                "user_model": name,
                "judge_model": name,
                "agent_artifact_id": name,
                "seed": seed,
            },
        },
        "RunGroupRequest": {
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "version": {"type": ["integer", "null"]},
                "agent_model": name,
                "user_model": name,
                "judge_model": name,
                "agent_artifact_id": name,
                "count": {"type": ["integer", "null"], "minimum": 1, "maximum": MAX_RUNS_PER_REQUEST},
                "seeds": {"type": ["array", "null"], "items": seed, "maxItems": MAX_RUNS_PER_REQUEST},
            },
        },
        "CancelRequest": {
            "type": "object",
            "additionalProperties": false,
            "properties": {"workflow_id": string, "instance_id": string, "run_group_id": string},
        },
        "BundleRunRequest": {
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "tasks": {"type": "array", "items": {"type": "string"}},
                "evals": {"type": "array", "items": {"type": "string"}},
                "agent_model": name,
                "user_model": name,
                "judge_model": name,
                "agent": name,
            },
        },
    })
}
