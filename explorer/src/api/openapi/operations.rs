//! What each operation answers: its `200` (the schema of what its handler returns) and the failures
//! it can give, each with its status. Every route of [`crate::api::routes`] is one [`Operation`]; a
//! route that is none of them is left out of [`Operation::of`], which the document's tests catch.

use axum::http::Method;
use serde_json::{json, Value};

use super::schemas::{cursor_page_of, page_of, reference};
use crate::api::{In, Param};
use crate::data::entities::COLLECTIONS;

/// One kind of operation the API serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    EntityList,
    Entity,
    EntityVersions,
    StartRun,
    StartGroup,
    CancelRuns,
    TaskRuns,
    TaskInstances,
    TaskInstance,
    Progress,
    Triggers,
    TaskGroups,
    Group,
    GroupStream,
    AllInstances,
    AnyInstance,
    Conversations,
    AnyGroup,
    ObjectContent,
    ObjectMetadata,
    Bundles,
    RunBundle,
    Workflows,
    Workflow,
    WorkflowLog,
    CancelWorkflow,
    PluginReport,
    PluginShow,
    ExplorerPlugins,
    Config,
    Health,
}

/// Where a page of instances starts instead of `offset`: the `next_cursor` of the page before.
const CURSOR: Param = Param {
    name: "cursor",
    location: In::Query,
    required: false,
    schema: "string",
    description: "instead of offset: the next_cursor of the page before, to start right after its last item, wherever runs recorded since moved it (each instance is listed once, as an offset counted from the newest does not while a run writes)",
};

/// A failure an operation can answer, and why it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Failure {
    /// 400: the path or query string does not decode, or a store refuses a value asked for.
    BadRequest,
    /// 403: a cross-site request (every operation).
    CrossSite,
    /// 404: what the path or a parameter names is not there.
    NotFound,
    /// 405: another method at the path (every operation).
    MethodNotAllowed,
    /// 409: a short instance id that ends several instances' ids.
    Ambiguous,
    /// 409: a run asked for that things as they are now stop.
    CantRunNow,
    /// 409 of a cancel: a short instance id that ends several instances' ids, or runs named that
    /// have all ended (one status answers both).
    NothingToCancel,
    /// 413: a request body over 2 MB.
    TooLarge,
    /// 415: a request body not sent as JSON.
    NotJson,
    /// 421: a Host the explorer does not serve (every operation).
    Misdirected,
    /// 422: a parameter or body that does not validate.
    Invalid,
    /// 500: the server's side failed.
    Internal,
    /// 503: a configured store did not answer, or runs cannot start now.
    Unavailable,
}

use Failure::*;

/// The failures every operation can give, before its handler runs (the guard and the router).
const EVERYWHERE: [Failure; 3] = [CrossSite, MethodNotAllowed, Misdirected];

impl Failure {
    pub fn status(self) -> u16 {
        match self {
            BadRequest => 400,
            CrossSite => 403,
            NotFound => 404,
            MethodNotAllowed => 405,
            Ambiguous | CantRunNow | NothingToCancel => 409,
            TooLarge => 413,
            NotJson => 415,
            Misdirected => 421,
            Invalid => 422,
            Internal => 500,
            Unavailable => 503,
        }
    }

    fn description(self) -> &'static str {
        match self {
            BadRequest => "the path or the query string does not decode, or a store refuses a value asked for",
            CrossSite => "cross-site request refused: a request under /api sent from another site (Sec-Fetch-Site: cross-site), or a POST from another origin, whose origin is not one of [explorer] cors_origins",
            NotFound => "what the path names is not there (the detail says what, and how ids are written); while a configured store is left out, it says the answer may be there",
            MethodNotAllowed => "the path does not take the request's method: the detail and the Allow header name those it takes (HEAD wherever GET is served)",
            Ambiguous => "a short instance id (the end agent-env task list prints) that ends several instances' ids: the detail names them; give the whole id",
            CantRunNow => "the run can't start as things are now: the task's bundle no longer has it or can't be found, the task is a stored one (agent-env task run runs it), or the run stopped before it started; the detail says which and what to do",
            NothingToCancel => "a short instance id (the end agent-env task list prints) that ends several instances' ids (the detail names them; give the whole id), or runs named that have all ended, so there is nothing to cancel: the detail names each instance and how it ended (completed, failed, was cancelled, or recorded as running by a run that ended without finishing it)",
            TooLarge => "the request body is larger than the 2 MB the API reads",
            NotJson => "the request body is sent with a Content-Type other than application/json, or with none (a request with no body and no type is read as {})",
            Misdirected => "the request is for a host the explorer does not serve: its Host header (or an absolute-form target) names none of localhost, 127.0.0.1, [::1] and [explorer] allowed_hosts, or no host at all",
            Invalid => "the request does not validate: a list of {loc, msg, type} naming each field (always a list, never a sentence)",
            Internal => "something on the server's side failed: a store call, a worker that stopped",
            Unavailable => "a configured store did not answer while the request needed it (what was asked for may be there: ask again after the time the detail names), or the explorer can't start runs now (it is stopping)",
        }
    }

    /// The response object for this failure.
    pub fn response(self) -> Value {
        let schema = match self {
            Invalid => "ValidationError",
            _ => "Error",
        };
        json!({
            "description": self.description(),
            "content": {"application/json": {"schema": reference(schema)}},
        })
    }
}

impl Operation {
    /// The operation `method path` is (`path` as the routes write it), if the API serves it.
    pub fn of(method: &Method, path: &str) -> Option<Operation> {
        use Operation::*;
        let parts: Vec<&str> = path.strip_prefix("/api/v1/")?.split('/').collect();
        let collection = |name: &str| COLLECTIONS.iter().any(|c| c.route == name);
        let get = *method == Method::GET;
        let post = *method == Method::POST;
        Some(match parts.as_slice() {
            [c] if get && collection(c) => EntityList,
            [c, "{entity_id}"] if get && collection(c) => Entity,
            [c, "{entity_id}", "versions"] if get && collection(c) => EntityVersions,
            ["tasks", "{task_id}", "run"] if post => StartRun,
            ["tasks", "{task_id}", "runs"] if post => StartGroup,
            ["tasks", "{task_id}", "cancel-run"] if post => CancelRuns,
            ["tasks", "{task_id}", "runs"] if get => TaskRuns,
            ["tasks", "{task_id}", "instances"] if get => TaskInstances,
            ["tasks", "{task_id}", "instances", "{instance_id}"] if get => TaskInstance,
            ["tasks", "{task_id}", "instances", "{instance_id}", "progress"] if get => Progress,
            ["tasks", "{task_id}", "instances", "{instance_id}", "triggers"] if get => Triggers,
            ["tasks", "{task_id}", "run-groups"] if get => TaskGroups,
            ["tasks", "{task_id}", "run-groups", "{run_group_id}"] if get => Group,
            ["tasks", "{task_id}", "run-groups", "{run_group_id}", "stream"] if get => GroupStream,
            ["task-instances"] if get => AllInstances,
            ["task-instances", "{task_instance_id}"] if get => AnyInstance,
            ["task-instances", "{task_instance_id}", "conversations"] if get => Conversations,
            ["run-groups", "{run_group_id}"] if get => AnyGroup,
            ["objects", "content"] if get => ObjectContent,
            ["objects", "metadata"] if get => ObjectMetadata,
            ["bundles"] if get => Bundles,
            ["bundles", "{bundle}", "run"] if post => RunBundle,
            ["workflows"] if get => Workflows,
            ["workflows", "{workflow_id}"] if get => Workflow,
            ["workflows", "{workflow_id}", "log"] if get => WorkflowLog,
            ["workflows", "{workflow_id}", "cancel"] if post => CancelWorkflow,
            ["plugin-report"] if get => PluginReport,
            ["plugin-report", "{package}"] if get => PluginShow,
            ["explorer-plugins"] if get => ExplorerPlugins,
            ["config"] if get => Config,
            ["health"] if get => Health,
            _ => return None,
        })
    }

    /// The schema of a `200` answer's body.
    pub fn answer(self) -> Value {
        use Operation::*;
        match self {
            EntityList | EntityVersions => page_of(reference("Entity")),
            Entity => reference("Entity"),
            StartRun => reference("RunStarted"),
            StartGroup => reference("RunGroupStarted"),
            CancelRuns => reference("RunsCancelled"),
            TaskRuns | AllInstances => cursor_page_of(reference("InstanceSummary")),
            TaskInstances => cursor_page_of(reference("InstanceDocument")),
            TaskInstance => reference("InstanceDocument"),
            Progress => reference("Progress"),
            Triggers | Conversations => page_of(reference("StoredRecord")),
            TaskGroups => page_of(reference("RunGroupSummary")),
            Group | AnyGroup => reference("RunGroup"),
            GroupStream => json!({
                "type": "string",
                "description": "Server-Sent Events: snapshot (a RunGroup) at once and every 2 s, then complete (the last RunGroup); not_found ({detail}) for a group nobody knows; timeout after 600 snapshots sent while the group's run is not live here; unavailable ({run_group_id, status, detail}) while the configured store does not answer; shutdown when the explorer stops",
            }),
            AnyInstance => reference("TaskInstance"),
            ObjectContent => json!({
                "type": "string",
                "contentMediaType": "application/octet-stream",
                "description": "the object's bytes, under the content type, Content-Security-Policy and Content-Disposition its type's policy gives",
            }),
            ObjectMetadata => reference("ObjectMetadata"),
            Bundles => page_of(reference("Bundle")),
            RunBundle => reference("Workflow"),
            Workflows => page_of(reference("Workflow")),
            Workflow => reference("WorkflowDetail"),
            WorkflowLog => json!({
                "type": "string",
                "contentMediaType": "text/plain",
                "description": "the run log's text: every event of the run and each plugin's stderr, as agent-env run writes it (secrets the explorer holds masked)",
            }),
            CancelWorkflow => reference("WorkflowCancelled"),
            PluginReport => reference("PluginReport"),
            PluginShow => reference("PluginShow"),
            ExplorerPlugins => reference("ExplorerPlugins"),
            Config => reference("Config"),
            Health => reference("Health"),
        }
    }

    /// The query parameters its handler reads beside its route's: `cursor`, for the lists of
    /// instances, which answer the `next_cursor` it takes.
    pub fn more_params(self) -> Vec<Param> {
        use Operation::*;
        match self {
            TaskRuns | TaskInstances | AllInstances => vec![CURSOR],
            _ => Vec::new(),
        }
    }

    /// Every failure it can answer, in the order of their statuses.
    pub fn failures(self) -> Vec<Failure> {
        use Operation::*;
        // By what the handler reads: a path or query (400, 422 for a query value), the stores (500,
        // and 503 where a lookup only the configured store could answer), a body (413, 422).
        let own: &[Failure] = match self {
            EntityList | AllInstances | Bundles => &[BadRequest, Invalid, Internal],
            Entity | EntityVersions | TaskRuns | TaskInstances | TaskGroups | Group | AnyGroup
            | GroupStream | ObjectContent | ObjectMetadata => {
                &[BadRequest, NotFound, Invalid, Internal, Unavailable]
            }
            StartRun | StartGroup => &[
                BadRequest,
                NotFound,
                CantRunNow,
                TooLarge,
                NotJson,
                Invalid,
                Internal,
                Unavailable,
            ],
            RunBundle => &[
                BadRequest,
                NotFound,
                TooLarge,
                NotJson,
                Invalid,
                Internal,
                Unavailable,
            ],
            CancelRuns => &[
                BadRequest,
                NotFound,
                NothingToCancel,
                TooLarge,
                NotJson,
                Invalid,
                Internal,
                Unavailable,
            ],
            TaskInstance | Progress | AnyInstance => {
                &[BadRequest, NotFound, Ambiguous, Internal, Unavailable]
            }
            Triggers | Conversations => &[
                BadRequest,
                NotFound,
                Ambiguous,
                Invalid,
                Internal,
                Unavailable,
            ],
            Workflows => &[BadRequest, Invalid],
            Workflow => &[BadRequest, NotFound, Invalid, Internal],
            CancelWorkflow => &[BadRequest, NotFound, NotJson],
            WorkflowLog => &[BadRequest, NotFound, Internal],
            PluginReport | Config => &[Internal],
            PluginShow => &[BadRequest, NotFound, Internal],
            ExplorerPlugins => &[Internal],
            Health => &[],
        };
        let mut all: Vec<Failure> = own.iter().chain(EVERYWHERE.iter()).copied().collect();
        all.sort();
        all
    }
}
