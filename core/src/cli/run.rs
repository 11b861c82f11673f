//! `agent-env run [BUNDLE] [--task NAME]... [--eval NAME]... [--keep] [--dry-run] ...`: run a bundle's
//! tasks and evals; with no BUNDLE, list the installed bundles.

use std::path::Path;

use serde_json::{json, Map, Value};

use crate::bundle::installed::InstalledBundle;
use crate::bundle::{self, BundleError};
use crate::cli::{Exit, Failure, Terminal};
use crate::output::Output;
use crate::run::{run_bundle, RunRequest, RunStatus};
use crate::session::Session;

#[derive(clap::Args)]
pub struct RunArgs {
    /// A bundle folder (starting with `.`, `/` or `~`), or an installed bundle's `<name>` or
    /// `<package>/<name>`. Without it, lists the installed bundles.
    pub bundle: Option<String>,
    /// Run this task (name or id); repeatable.
    #[arg(long = "task", value_name = "NAME")]
    pub tasks: Vec<String>,
    /// Run this eval's tasks (name or id); repeatable.
    #[arg(long = "eval", value_name = "NAME")]
    pub evals: Vec<String>,
    /// The model the agent under test uses.
    #[arg(long)]
    pub model: Option<String>,
    /// The model a simulated user uses.
    #[arg(long = "user-model")]
    pub user_model: Option<String>,
    /// The model a judge uses.
    #[arg(long = "judge-model")]
    pub judge_model: Option<String>,
    /// The agent to run the tasks with.
    #[arg(long)]
    pub agent: Option<String>,
    /// The sandbox provider (a comma-separated fallback chain); the built-in one is `local`.
    #[arg(long)]
    pub sandbox: Option<String>,
    /// Keep the sandboxes up after the run, until Ctrl-C.
    #[arg(long)]
    pub keep: bool,
    /// Show what would be written and run, and write and run nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
}

impl RunArgs {
    fn has_options(&self) -> bool {
        !self.tasks.is_empty()
            || !self.evals.is_empty()
            || self.model.is_some()
            || self.user_model.is_some()
            || self.judge_model.is_some()
            || self.agent.is_some()
            || self.sandbox.is_some()
            || self.keep
            || self.dry_run
    }

    fn user_overrides(&self) -> Map<String, Value> {
        let mut o = Map::new();
        if let Some(m) = &self.model {
            o.insert("agent_model".into(), json!(m));
        }
        if let Some(m) = &self.user_model {
            o.insert("user_model".into(), json!(m));
        }
        if let Some(m) = &self.judge_model {
            o.insert("judge_model".into(), json!(m));
        }
        if let Some(a) = &self.agent {
            o.insert("agent".into(), json!(a));
        }
        if let Some(s) = &self.sandbox {
            o.insert("sandbox".into(), json!(s));
        }
        o
    }
}

/// Runs `agent-env run`: lists the installed bundles, or plans and runs one.
pub fn run(args: RunArgs, _verbose: bool, session: &Session, term: &Terminal) -> Exit {
    let Some(bundle) = args.bundle.clone() else {
        if args.has_options() {
            return Err(Failure::new("these options need a BUNDLE: agent-env run BUNDLE [OPTIONS] (agent-env run with no BUNDLE lists the installed bundles)").with_code(2));
        }
        list(
            &bundle::installed(&session.manifests()),
            session.paths().home_dir().as_deref(),
            term,
        );
        return Ok(0);
    };
    let request = RunRequest {
        user_overrides: args.user_overrides(),
        bundle,
        tasks: args.tasks,
        evals: args.evals,
        sandbox: args.sandbox,
        keep: args.keep,
        dry_run: args.dry_run,
        on_second_signal: Some(exit_on_second_signal),
        cancel: None,
        run_group_id: None,
        context_metadata: Map::new(),
    };
    match run_bundle(session, &request, term).map_err(Failure::new)? {
        RunStatus::DryRun | RunStatus::Finished { failed: false } => Ok(0),
        RunStatus::Finished { failed: true } => Ok(1),
        RunStatus::Cancelled { signal } => Ok(128 + signal),
    }
}

/// `agent-env run` with no BUNDLE.
fn list(installed: &[InstalledBundle], home: Option<&Path>, out: &dyn Output) {
    if installed.is_empty() {
        out.line("No bundles are installed. agent-env run PATH runs a folder.");
        return;
    }
    let parsed: Vec<Result<crate::bundle::Bundle, BundleError>> =
        installed.iter().map(|b| b.parse(home)).collect();
    let rows: Vec<[String; 4]> = installed
        .iter()
        .zip(&parsed)
        .map(|(b, p)| {
            let (contents, description) = match p {
                Ok(p) => (contents(p), p.description.clone().unwrap_or_default()),
                Err(e) => ("invalid".to_string(), e.summary()),
            };
            [
                b.run_name(),
                format!("{} {}", b.package, b.package_version),
                contents,
                description,
            ]
        })
        .collect();
    let header = ["NAME", "PACKAGE", "CONTENTS", "DESCRIPTION"];
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([header[i].len()])
            .max()
            .unwrap_or(0)
    };
    let widths = [width(0), width(1), width(2)];
    let line = |cells: [&str; 4]| {
        format!(
            "{:w0$}  {:w1$}  {:w2$}  {}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        )
        .trim_end()
        .to_string()
    };
    out.line(&line(header));
    for ((b, row), parsed) in installed.iter().zip(&rows).zip(&parsed) {
        out.line(&line([&row[0], &row[1], &row[2], &row[3]]));
        let mut folder = format!("  {}", b.folder_display(home));
        if let Ok(parsed) = parsed {
            let aliases: Vec<String> = parsed
                .aliases
                .values()
                .flat_map(|m| m.values().flatten().cloned())
                .collect();
            if !aliases.is_empty() {
                folder.push_str(&format!("  aliases: {}", aliases.join(", ")));
            }
        }
        out.line(&folder);
    }
    out.line("");
    out.line("Run one with agent-env run NAME. To change one, copy its folder and run the copy.");
}

/// `1 task`, `2 tasks, 1 eval`.
fn contents(b: &crate::bundle::Bundle) -> String {
    let count = |n: usize, one: &str, many: &str| match n {
        0 => None,
        1 => Some(format!("1 {one}")),
        n => Some(format!("{n} {many}")),
    };
    let parts: Vec<String> = [
        count(b.tasks.len(), "task", "tasks"),
        count(b.evals.len(), "eval", "evals"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if parts.is_empty() {
        "nothing to run".to_string()
    } else {
        parts.join(", ")
    }
}

/// A second Ctrl-C (or SIGTERM) during a run's teardown: agent-env stops at once, exiting as the
/// signal says (128 + its number). The one exit below `main`, since the teardown it cuts short is
/// still running on other threads.
fn exit_on_second_signal(signal: i32) {
    std::process::exit(128 + signal);
}
