//! The document's `components.schemas`: the request bodies the handlers read and the answers they
//! give, each written from the fields the handler (or the type it serializes) puts in it. An answer
//! that is a stored document as recorded (an entity, an instance, a trigger) names the fields the
//! explorer relies on and takes any others (`additionalProperties: true`); every other answer lists
//! all of its fields.

use serde_json::{json, Map, Value};

use crate::api::tasks::{FIRST_VERSION, MAX_NAME_CHARS, MAX_RUNS_PER_REQUEST};
use crate::data::filter::STATUSES;

/// `#/components/schemas/<name>`.
pub fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// `schema`, or null.
fn nullable(schema: Value) -> Value {
    json!({"anyOf": [schema, {"type": "null"}]})
}

/// A list's answer: the envelope with `item` as each item's schema.
pub fn page_of(item: Value) -> Value {
    json!({
        "allOf": [
            reference("Page"),
            {"type": "object", "properties": {"items": {"type": "array", "items": item}}},
        ],
    })
}

/// A list of instances' answer: [`page_of`], with `next_cursor`, where the next page starts.
pub fn cursor_page_of(item: Value) -> Value {
    json!({
        "allOf": [
            reference("Page"),
            {
                "type": "object",
                "properties": {
                    "items": {"type": "array", "items": item},
                    "next_cursor": {
                        "type": ["string", "null"],
                        "description": "where the next page starts: pass it as cursor (instead of offset) to list the items after this page's last, however many runs recorded since; null on the last page",
                    },
                },
                "required": ["next_cursor"],
            },
        ],
    })
}

/// The format of an instance's `created_at_utc` (and so a run group's): the minute, as a run records it.
const MINUTE: &str =
    "the minute, in UTC, as a run records it: '2026-12-07 01:42 UTC' (not ISO 8601)";

/// The words a workflow's `status` takes (see `Phase::word`).
pub const WORKFLOW_STATUSES: [&str; 6] = [
    "queued",
    "running",
    "finished",
    "failed",
    "cancelled",
    "error",
];

/// The words an instance's `outcome` takes (see `Judge::verdict`).
pub const INSTANCE_OUTCOMES: [&str; 7] = [
    "running",
    "interrupted",
    "passed",
    "scored below 1",
    "unscored",
    "failed",
    "cancelled",
];

/// A step's `state` in an instance's progress.
const STEP_STATES: [&str; 7] = [
    "succeeded",
    "failed",
    "cancelled",
    "running",
    "pending",
    "not run",
    "interrupted",
];

/// An object schema of `properties`, every one of them always present.
fn closed(description: &str, properties: Value) -> Value {
    let required: Vec<String> = properties
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    json!({
        "type": "object",
        "description": description,
        "properties": properties,
        "required": required,
    })
}

/// [`closed`], with `optional` properties that are present only sometimes.
fn with_optional(mut schema: Value, optional: Value) -> Value {
    if let (Some(props), Some(extra)) = (
        schema["properties"].as_object_mut(),
        optional.as_object().cloned(),
    ) {
        props.extend(extra);
    }
    schema
}

/// [`closed`], with `more` properties that are always present too.
fn with_required(schema: Value, more: Value) -> Value {
    let mut schema = with_optional(schema, more.clone());
    if let (Some(required), Some(more)) = (schema["required"].as_array_mut(), more.as_object()) {
        required.extend(more.keys().map(|k| json!(k)));
    }
    schema
}

/// `warnings` of an answer that left a store out.
fn warnings() -> Value {
    json!({
        "warnings": {
            "type": "array",
            "items": {"type": "string"},
            "description": "what the answer left out and why (a configured store that cannot be read); absent when nothing was",
        },
    })
}

/// A stored document: `named` fields described, any others taken as recorded.
fn document(description: &str, named: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "description": description,
        "properties": named,
        "required": required,
        "additionalProperties": true,
    })
}

/// Every schema the document names.
pub fn all() -> Value {
    let mut schemas = Map::new();
    for (name, schema) in errors()
        .into_iter()
        .chain(bodies())
        .chain(entities())
        .chain(instances())
        .chain(groups())
        .chain(workflows())
        .chain(others())
    {
        schemas.insert(name.to_string(), schema);
    }
    Value::Object(schemas)
}

fn errors() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Error",
            json!({
                "type": "object",
                "description": "every failure under /api: a sentence saying what went wrong and what to do",
                "properties": {"detail": {"type": "string"}},
                "required": ["detail"],
            }),
        ),
        (
            "ValidationError",
            json!({
                "type": "object",
                "description": "a request that does not validate: the list of problems, each naming the field at loc (as FastAPI answers)",
                "properties": {
                    "detail": {"type": "array", "items": reference("ValidationProblem")},
                },
                "required": ["detail"],
            }),
        ),
        (
            "ValidationProblem",
            closed(
                "one field that does not validate",
                json!({
                    "loc": {"type": "array", "items": {"type": "string"}, "description": "where: [\"query\", \"limit\"], [\"body\", \"seeds\", \"2\"]"},
                    "msg": {"type": "string"},
                    "type": {"type": "string", "description": "the kind of problem: missing, int_parsing, less_than_equal, enum, extra_forbidden, ..."},
                }),
            ),
        ),
        (
            "Page",
            with_optional(
                closed(
                    "one page of a list",
                    json!({
                        "items": {"type": "array"},
                        "total": {"type": "integer", "minimum": 0, "description": "how many the whole list holds"},
                        "limit": {"type": "integer", "minimum": 1},
                        "offset": {"type": "integer", "minimum": 0},
                        "has_more": {"type": "boolean", "description": "whether items follow this page"},
                    }),
                ),
                warnings(),
            ),
        ),
    ]
}

fn bodies() -> Vec<(&'static str, Value)> {
    let string = json!({"type": ["string", "null"]});
    // A model's or an agent's name (`tasks::MAX_NAME_CHARS`).
    let name = json!({"type": ["string", "null"], "maxLength": MAX_NAME_CHARS});
    let seed = json!({"type": ["object", "null"], "description": "values for the steps' <key> tokens; one that lands in a bash_cmd_succeeds command may hold only letters, digits and - _ . , : / @ + = % (no space, no - first), else a 422 naming it"});
    vec![
        (
            "RunRequest",
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "version": {"type": ["integer", "null"], "minimum": FIRST_VERSION, "description": "the version a run records now (else a 422 naming it); the newest when left out"},
                    "agent_model": name,
                    "user_model": name,
                    "judge_model": name,
                    "agent_artifact_id": name,
                    "seed": seed,
                },
            }),
        ),
        (
            "RunGroupRequest",
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "version": {"type": ["integer", "null"], "minimum": FIRST_VERSION},
                    "agent_model": name,
                    "user_model": name,
                    "judge_model": name,
                    "agent_artifact_id": name,
                    "count": {"type": ["integer", "null"], "minimum": 1, "maximum": MAX_RUNS_PER_REQUEST, "default": 1},
                    "seeds": {"type": ["array", "null"], "items": seed, "minItems": 1, "maxItems": MAX_RUNS_PER_REQUEST, "description": "one run per seed (count is then ignored)"},
                },
            }),
        ),
        (
            "CancelRequest",
            json!({
                "type": "object",
                "additionalProperties": false,
                "description": "at least one of them",
                "properties": {"workflow_id": string, "instance_id": string, "run_group_id": string},
            }),
        ),
        (
            "BundleRunRequest",
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "tasks": {"type": "array", "items": {"type": "string"}, "description": "these tasks of the bundle only"},
                    "evals": {"type": "array", "items": {"type": "string"}, "description": "these evals of the bundle only"},
                    "agent_model": name,
                    "user_model": name,
                    "judge_model": name,
                    "agent": name,
                },
            }),
        ),
    ]
}

fn entities() -> Vec<(&'static str, Value)> {
    vec![(
        "Entity",
        document(
            "one version of an artifact, env, task, agent or eval, as stored",
            json!({
                "id": {"type": "string"},
                "version": {"type": "integer"},
                "name": {"type": ["string", "null"]},
                "type": {"type": ["string", "null"]},
                "created_at_utc": {"type": ["string", "null"]},
            }),
            &["id", "version"],
        ),
    )]
}

fn instances() -> Vec<(&'static str, Value)> {
    let string = json!({"type": ["string", "null"]});
    vec![
        (
            "InstanceDocument",
            document(
                "a task instance's document, as the run recorded it",
                json!({
                    "instance_id": {"type": "string"},
                    "task_id": string,
                    "task_version": {"type": ["integer", "null"]},
                    "status": {"type": ["string", "null"], "description": format!("as recorded: {}", STATUSES.join(", "))},
                    "created_at_utc": {"type": ["string", "null"], "description": MINUTE},
                }),
                &["instance_id"],
            ),
        ),
        (
            "InstanceSummary",
            with_optional(
                closed(
                    "what a list of runs shows of one instance",
                    json!({
                        "instance_id": string,
                        "task_id": string,
                        "task_version": {"type": ["integer", "null"]},
                        "status": {"type": ["string", "null"], "description": format!("as recorded: {}", STATUSES.join(", "))},
                        "outcome": {"type": "string", "enum": INSTANCE_OUTCOMES, "description": "how it came out, its task's verifiers' scores judged as agent-env run judges them; interrupted: recorded running by a run that ended without finishing it"},
                        "warning": {"type": ["string", "null"], "description": "why an interrupted instance is not running"},
                        "scores": {"type": "object", "additionalProperties": {"description": "a number, or what the verifier recorded"}, "description": "keyed by the verifying step's id"},
                        "error": {"description": "the error the run recorded, if any"},
                        "created_at_utc": {"type": ["string", "null"], "description": MINUTE},
                        "started_at_utc": {"type": ["string", "null"], "description": "to the microsecond"},
                        "completed_at_utc": {"type": ["string", "null"]},
                        "ended_at_utc": {"type": ["string", "null"], "description": "once it ended; null for one a later run marked failed, whose end is not known"},
                        "current_step": {"type": "integer", "minimum": 0, "description": "steps done (a step a cancel stopped is not)"},
                        "total_steps": {"type": ["integer", "null"]},
                        "run_group_id": string,
                    }),
                ),
                json!({
                    "workflow_id": {"type": ["string", "null"], "description": "the explorer's run that recorded it, while this explorer knows it (GET /api/v1/workflows/{workflow_id}); null for one it did not start, and for one an explorer started before a restart, whose workflow is gone"},
                }),
            ),
        ),
        (
            "Progress",
            with_optional(
                closed(
                    "an instance's progress against its task version's steps",
                    json!({
                        "instance_id": string,
                        "status": string,
                        "outcome": {"type": "string", "enum": INSTANCE_OUTCOMES},
                        "current_step": {"type": "integer", "minimum": 0},
                        "total_steps": {"type": "integer", "minimum": 0},
                        "fraction": {"type": "number", "minimum": 0, "maximum": 1},
                        "finished": {"type": "boolean", "description": "nothing more will happen to it (an interrupted one included)"},
                        "steps": {"type": "array", "items": reference("StepProgress")},
                    }),
                ),
                warnings(),
            ),
        ),
        (
            "StepProgress",
            closed(
                "one step's state",
                json!({
                    "step_id": {"type": "string"},
                    "type": string,
                    "state": {"type": "string", "enum": STEP_STATES},
                    "error": {"description": "the failure recorded for the step, else null"},
                    "duration_seconds": {"type": ["number", "null"]},
                }),
            ),
        ),
        (
            "TaskInstance",
            with_optional(
                closed(
                    "one task instance with its summary, its progress and, for a run the explorer started, its workflow",
                    json!({
                        "instance": reference("InstanceDocument"),
                        "summary": reference("InstanceSummary"),
                        "progress": reference("Progress"),
                        "workflow": nullable(reference("Workflow")),
                    }),
                ),
                warnings(),
            ),
        ),
        (
            "StoredRecord",
            document(
                "a trigger or a conversation, as recorded",
                json!({}),
                &[],
            ),
        ),
    ]
}

/// What every run group answer says of the whole group.
fn group_summary() -> Value {
    let spread = json!({"type": "object", "additionalProperties": reference("ScoreSpread")});
    closed(
        "a run group: how many of its runs were recorded and how they came out",
        json!({
            "run_group_id": {"type": "string"},
            "task_id": {"type": ["string", "null"], "description": "the one task its runs are of; null for a group of several"},
            "task_ids": {"type": "array", "items": {"type": "string"}, "description": "every task its runs are of, sorted"},
            "total": {"type": ["integer", "null"], "description": "the runs planned when the explorer started them, else the instances recorded; null while a run not started here is live"},
            "recorded": {"type": "integer", "minimum": 0},
            "running": {"type": "integer", "minimum": 0},
            "run_live": {"type": "boolean", "description": "its run is under way on this machine"},
            "complete": {"type": "boolean"},
            "created_at_utc": {"type": ["string", "null"], "description": format!("its first recorded instance's created_at_utc: {MINUTE}; null while none is recorded")},
            "outcomes": {"type": "object", "additionalProperties": {"type": "integer"}, "description": "how many runs came out each way (an instance's outcome; error and cancelled also count the explorer's runs that stopped before recording one)"},
            "score_spread_by_task": {
                "type": "object",
                "description": "for each task the group's runs are of (keyed by its id), each of its scores (keyed as an instance's scores are, by the verifying step's id) over that task's runs that record a number for it, whatever their outcome; tasks whose steps share an id are never counted together",
                "additionalProperties": spread,
            },
            "score_spread": {
                "type": ["object", "null"],
                "description": "the one task's entry of score_spread_by_task ({} while none is recorded); null for a group of several tasks, as task_id is",
                "additionalProperties": reference("ScoreSpread"),
            },
        }),
    )
}

fn groups() -> Vec<(&'static str, Value)> {
    let mut listed = with_required(
        group_summary(),
        json!({"errors": {"type": "array", "items": {"type": "string"}, "description": "why the explorer's runs of it that recorded nothing stopped ([] for a group it did not start)"}}),
    );
    listed["description"] =
        json!("a run group as a task's list of them shows it (its runs are at its own route)");
    let mut group = group_summary();
    let more = json!({
        "errors": {"type": "array", "items": {"type": "string"}, "description": "why the explorer's runs that recorded nothing stopped"},
        "runs": page_of(reference("GroupRun")),
        "run_words": {"type": "object", "additionalProperties": {"type": "integer"}, "description": "how many of the group's runs have each word the outcome filter takes (an instance's outcome, else its run's status), over the whole group"},
        "workflows": {"type": "array", "items": reference("Workflow"), "description": "the runs the explorer started for the group (one request starts at most a hundred)"},
    });
    group = with_required(group, more);
    group = with_optional(group, warnings());
    group["description"] = json!("a run group: how its runs came out, over the whole group, and one page of them (limit, offset, outcome)");
    vec![
        ("RunGroupSummary", listed),
        ("RunGroup", group),
        (
            "GroupRun",
            closed(
                "one run of a group: the explorer's runs in the order it started them (instance null until it records one), then the runs it did not start, oldest first",
                json!({
                    "place": {"type": "integer", "minimum": 1},
                    "instance": nullable(reference("InstanceSummary")),
                    "workflow": nullable(reference("Workflow")),
                }),
            ),
        ),
        (
            "ScoreSpread",
            closed(
                "one score over the runs that record a number for it",
                json!({
                    "runs": {"type": "integer"},
                    "mean": {"type": "number"},
                    "min": {"type": "number"},
                    "max": {"type": "number"},
                }),
            ),
        ),
    ]
}

fn workflows() -> Vec<(&'static str, Value)> {
    let string = json!({"type": ["string", "null"]});
    let workflow = closed(
        "a run this explorer started",
        json!({
            "workflow_id": {"type": "string"},
            "run_group_id": {"type": "string"},
            "bundle": {"type": "string"},
            "tasks": {"type": "array", "items": {"type": "string"}, "description": "the tasks it runs: those asked for, or every task of a bundle run whole (none when its bundle did not parse)"},
            "evals": {"type": "array", "items": {"type": "string"}},
            "task_id": string,
            "index": {"type": "integer", "minimum": 0, "description": "its place in its group, from 0"},
            "seed": {"type": ["object", "null"]},
            "status": {"type": "string", "enum": WORKFLOW_STATUSES},
            "done": {"type": "boolean"},
            "cancel_requested": {"type": "boolean"},
            "error": {"type": ["string", "null"], "description": "why it stopped, for status error"},
            "created_at_utc": {"type": "string", "description": "RFC 3339, to the microsecond: 2026-12-07T01:42:05.123456Z"},
            "started_at_utc": {"type": ["string", "null"], "description": "when it left the queue (RFC 3339); null while it waits for a slot"},
            "finished_at_utc": string,
            "log": {"type": ["string", "null"], "description": "the run log's path on this machine (GET /api/v1/workflows/{workflow_id}/log serves its text); null while the run has written none, or once it is gone"},
        }),
    );
    let mut detail = workflow.clone();
    let more = json!({
        "instances": {"type": "array", "items": reference("InstanceSummary")},
        "lines": {"type": "array", "items": reference("LogLine"), "description": "the lines the run printed, numbered since or later"},
    });
    detail = with_required(detail, more);
    detail["description"] =
        json!("a run this explorer started, with its instances and the lines it printed");
    vec![
        ("Workflow", workflow),
        ("WorkflowDetail", detail),
        (
            "LogLine",
            closed(
                "one line a run printed",
                json!({
                    "seq": {"type": "integer", "minimum": 0, "description": "its number, from 0, across the run"},
                    "stream": {"type": "string", "enum": ["out", "note"], "description": "out for the run's output, note for its diagnostics"},
                    "text": {"type": "string"},
                }),
            ),
        ),
        (
            "WorkflowCancelled",
            closed(
                "the run asked to stop",
                json!({
                    "workflow_id": {"type": "string"},
                    "cancelled": {"type": "boolean", "description": "true only when this request cancelled it"},
                    "already_stopping": {"type": "boolean", "description": "an earlier request cancelled it, and it is still stopping"},
                    "status": {"type": "string", "enum": WORKFLOW_STATUSES},
                }),
            ),
        ),
        (
            "RunStarted",
            closed(
                "one run started",
                json!({
                    "workflow_id": {"type": "string"},
                    "instance_id": {"type": ["string", "null"], "description": "null while the run waits its turn (its workflow names it later)"},
                    "run_group_id": {"type": "string"},
                    "task_version": {"type": "integer"},
                    "status": {"type": "string", "enum": ["queued"]},
                }),
            ),
        ),
        (
            "RunGroupStarted",
            closed(
                "a group of runs started",
                json!({
                    "run_group_id": {"type": "string", "description": "rg-<12 hex digits>"},
                    "task_id": {"type": "string"},
                    "task_version": {"type": "integer"},
                    "total": {"type": "integer", "minimum": 1, "maximum": MAX_RUNS_PER_REQUEST},
                    "runs": {
                        "type": "array",
                        "items": closed(
                            "one run of the group: its workflow, or why it did not start",
                            json!({
                                "index": {"type": "integer", "minimum": 0},
                                "workflow_id": string,
                                "seed": {"type": ["object", "null"]},
                                "error": string,
                            }),
                        ),
                    },
                }),
            ),
        ),
        (
            "RunsCancelled",
            closed(
                "the runs named, by workflow id",
                json!({
                    "cancelled": {"type": "array", "items": {"type": "string"}, "description": "the runs this request cancelled"},
                    "already_stopping": {"type": "array", "items": {"type": "string"}, "description": "runs an earlier request cancelled, still stopping"},
                    "already_finished": {"type": "array", "items": {"type": "string"}},
                }),
            ),
        ),
    ]
}

fn others() -> Vec<(&'static str, Value)> {
    let string = json!({"type": ["string", "null"]});
    vec![
        (
            "ObjectMetadata",
            closed(
                "an object's size and content type",
                json!({
                    "size_bytes": {"type": ["integer", "null"], "description": "the object's size, when its store knows it"},
                    "content_type": {"type": "string", "description": "the stored content type, else one guessed from the file name"},
                    "shown_inline": {
                        "type": "boolean",
                        "description": "true when /api/v1/objects/content serves the object to be shown in the page (text, images, audio, video, JSON, PDF, and HTML, SVG and XML sandboxed); false when it is only a download (application/octet-stream, as an attachment)",
                    },
                }),
            ),
        ),
        (
            "Bundle",
            closed(
                "a bundle agent-env run can name",
                json!({
                    "name": {"type": "string", "description": "the name agent-env run takes"},
                    "qualified_name": {"type": "string"},
                    "package": string,
                    "package_version": string,
                    "id_root": {"type": "string"},
                    "folder": {"type": ["string", "null"], "description": "the bundle's folder (`~/…` under the home folder); null for a bundle built into agent-env"},
                    "built_in": {"type": "boolean", "description": "true for a bundle built into agent-env (`agent-env bundle init FOLDER --from-bundle NAME` writes a copy of it)"},
                    "description": string,
                    "tasks": {"type": "array", "items": closed("one task of the bundle", json!({"name": {"type": "string"}, "path": {"type": "string"}, "id": {"type": "string"}, "steps": {"type": "integer", "minimum": 0}}))},
                    "evals": {"type": "array", "items": closed("one eval of the bundle", json!({"name": {"type": "string"}, "path": {"type": "string"}, "id": {"type": "string"}, "type": {"type": "string"}, "tasks": {"type": "array", "items": {"type": "string"}}}))},
                    "problem": {"type": ["string", "null"], "description": "why the bundle does not parse (then tasks and evals are empty)"},
                }),
            ),
        ),
        (
            "PluginReport",
            closed(
                "the plugin report, as agent-env plugin list --json gives it",
                json!({
                    "report": {"type": "object", "additionalProperties": true, "description": "agent-env plugin list --json"},
                    "warnings": {"type": "array", "items": {"type": "string"}},
                    "processes": {"type": "object", "additionalProperties": {"type": "object"}, "description": "each plugin package's child process diagnosis, by its name"},
                    "text": {"type": "string", "description": "the report as agent-env plugin list prints it"},
                }),
            ),
        ),
        (
            "PluginShow",
            closed(
                "one package of the plugin report, as agent-env plugin show --json gives it",
                json!({
                    "plugin": {"type": "object", "additionalProperties": true},
                    "process": {"type": ["object", "null"], "description": "its child process diagnosis; null for a package that starts none"},
                    "warnings": {"type": "array", "items": {"type": "string"}},
                }),
            ),
        ),
        (
            "ExplorerPlugins",
            closed(
                "the explorer plugins as the server mounted them, and those added since it started",
                json!({
                    "plugins": {"type": "array", "items": reference("ExplorerPlugin")},
                    "added_since_start": {"type": "array", "items": closed("an explorer plugin a manifest declares now that the server did not load", json!({"name": {"type": "string"}, "package": {"type": "string"}})), "description": "explorer plugins the manifests declare now that the server did not load as it started: not served until agent-env up starts again"},
                    "note": {"type": ["string", "null"], "description": "while added_since_start lists any: started when agent-env up started; restart it to serve plugins added since"},
                }),
            ),
        ),
        (
            "ExplorerPlugin",
            closed(
                "one explorer plugin: what it serves, or why it serves nothing",
                json!({
                    "name": {"type": "string"},
                    "package": string,
                    "class": string,
                    "page": {"type": ["string", "null"], "description": "the page the navigation links to"},
                    "title": {"type": ["string", "null"], "description": "the link's text"},
                    "routes": {"type": "array", "items": closed("one route it serves", json!({"method": {"type": "string"}, "path": {"type": "string"}}))},
                    "not_served": {"type": "array", "items": {"type": "string"}, "description": "routes it declared that another plugin serves first, or that cannot be served"},
                    "error": {"type": ["string", "null"], "description": "why none of its routes are served"},
                }),
            ),
        ),
        (
            "Config",
            document(
                "agent-env config show --json (secrets masked), with its text, what config check finds, and the stores left out",
                json!({
                    "text": {"type": "string", "description": "as agent-env config show prints it"},
                    "check": {"type": "object", "description": "as agent-env config check --json gives it: problems, warnings, notes"},
                    "stores_left_out": {"type": "array", "items": {"type": "string"}, "description": "the configured stores the explorer leaves out now, each as a list's warnings say it"},
                }),
                &["text", "check", "stores_left_out"],
            ),
        ),
        (
            "Health",
            closed(
                "the server answers",
                json!({
                    "status": {"type": "string", "enum": ["ok"]},
                    "version": {"type": "string"},
                }),
            ),
        ),
    ]
}
