//! `agent-env task …`: stored tasks and the instances runs recorded.
//!
//! - `task put FILE…` writes task files as stored tasks (bare ids) to the configured document store, and
//!   `task run ID` runs one against the configured stores, so every machine sharing them sees the results;
//! - `task list` and `task get-instance ID` show the instances past runs recorded, newest first: a bundle
//!   run's in the local store (`<state root>/document_store/local.db`), a stored task's in the configured
//!   document store;
//! - `task prune` deletes the instances older than an age or beyond the newest N of their task.

mod age;
mod args;
mod describe;
mod filter;
mod get_instance;
mod json_list;
mod list;
mod newest;
mod prune;
mod sources;
mod standing;
mod stored;
mod unended;
#[cfg(test)]
mod watched;

use serde_json::{Map, Value};

pub(crate) use args::version_number;
pub use args::{
    GetArgs, GetTaskArgs, InstancesArgs, ListArgs, PruneArgs, PutArgs, RunTaskArgs, TaskArgs,
    TaskCommand,
};

use super::{Exit, Terminal};
use crate::session::Session;
use crate::stores::Document;
use get_instance::get;
use list::{list, none_listed};
use sources::{instance_sources, LeftOut};
use stored::{get_task, put, run_stored};

pub fn run(args: TaskArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    match args.command {
        TaskCommand::Put(args) => put(args, session, term),
        TaskCommand::Run(args) => run_stored(args, verbose, session, term),
        TaskCommand::Get(args) => get_task(args, session, term),
        TaskCommand::Instances(args) => {
            let none = format!(
                "No instances of '{id}' recorded yet. Run it with agent-env task run {quoted} (a stored task), or run its bundle with agent-env run BUNDLE.\n",
                id = args.id,
                quoted = crate::quote::word(&args.id)
            );
            list(
                ListArgs {
                    bundle: None,
                    task: Some(args.id),
                    limit: args.limit,
                    json: args.json,
                },
                &instance_sources(session, term, LeftOut::Held),
                None,
                |_, _| none.clone(),
                term,
            )
        }
        TaskCommand::List(args) => list(
            args,
            &instance_sources(session, term, LeftOut::Held),
            session.paths().home_dir().as_deref(),
            none_listed,
            term,
        ),
        TaskCommand::GetInstance(args) => {
            get(args, &instance_sources(session, term, LeftOut::Held), term)
        }
        TaskCommand::Prune(args) => prune::prune(
            args,
            &instance_sources(session, term, LeftOut::Warned),
            session.paths().home_dir().as_deref(),
            term,
        ),
    }
}

/// The string `doc` holds at `key`; empty when there is none.
fn text<'a>(doc: &'a Document, key: &str) -> &'a str {
    doc.get(key).and_then(Value::as_str).unwrap_or("")
}

/// An id as a person copies it into another command (an instance's into `task get-instance`, a
/// task's into `task instances`): whole, as the run's summary prints it, quoted when a shell would
/// split it (a bundle folder with a space in its path).
fn pasteable_id(id: &str) -> String {
    crate::quote::id(id)
}

/// An instance's scores as one line, `step: score, …`; `-` when there are none.
fn scores_text(scores: &Map<String, Value>) -> String {
    if scores.is_empty() {
        return "-".into();
    }
    scores
        .iter()
        .map(|(id, s)| format!("{id}: {}", score_text(s)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// As `agent-env run` shows a score.
fn score_text(score: &Value) -> String {
    match score.as_f64() {
        Some(f) => crate::run::outcome::format_g(f),
        None => score.to_string(),
    }
}

/// `value` as indented JSON.
fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
