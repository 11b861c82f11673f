//! `agent-env run [BUNDLE] [--task NAME]... [--eval NAME]... [--keep] [--dry-run] ...`: run a bundle's
//! tasks and evals; with no BUNDLE, list the installed bundles.

use std::sync::Arc;

use agent_env_protocol::names::canonical_name;
use serde_json::{json, Map, Value};

use crate::bundle::installed::{InstalledBundle, Target};
use crate::bundle::plan::{self, PlanContext, StepKind};
use crate::bundle::tree::Tree;
use crate::bundle::{self, BundleError};
use crate::cli::{Exit, Failure, Terminal};
use crate::output::Output;
use crate::registry::{RegistryError, Resolved};
use crate::run::executor::NoPlugins;
use crate::run::local_stores::{self, LocalStores};
use crate::run::materialize::Places;
use crate::run::plugin_steps::PluginSteps;
use crate::run::{self as runner, RunOptions, RunStatus};
use crate::session::{RegistryLoad, Session};
use crate::stores::{Filter, Sort};

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
    let Some(text) = args.bundle.clone() else {
        if args.has_options() {
            return Err(Failure::new("these options need a BUNDLE: agent-env run BUNDLE [OPTIONS] (agent-env run with no BUNDLE lists the installed bundles)").with_code(2));
        }
        list(&bundle::installed(&session.manifests()), term);
        return Ok(0);
    };
    // agent-env's own bundles keep their bare names, so `run hello` needs no look at installed plugins.
    let core = bundle::core_bundles();
    let installed = if core.iter().any(|b| b.name == text) {
        core
    } else {
        bundle::installed(&session.manifests())
    };
    let target = bundle::resolve(&text, &installed).map_err(Failure::new)?;
    let (parsed, folder) = match &target {
        Target::Folder(path) => (bundle::parse(path), Some(path.clone())),
        Target::Installed(b) => (b.parse(), None),
    };
    let parsed = parsed.map_err(Failure::new)?;
    let tree = match (&target, &folder) {
        (_, Some(path)) => Tree::Disk(path),
        (Target::Installed(b), None) => b.tree(),
        (Target::Folder(_), None) => {
            return Err(Failure::new("internal: a folder bundle has no folder"))
        }
    };
    let sandbox_dir = session.paths().local_sandbox_dir();
    let sandbox_provider =
        pick_sandbox_provider(args.sandbox.as_deref(), &sandbox_dir).map_err(Failure::new)?;
    // A bad config (a store table that doesn't build, an unresolved reference) stops the run here,
    // before anything is written or run.
    let config = session.config();
    // Only a config file can name a plugin's store, so with none there are no manifests to check against.
    let manifests = match config.path {
        Some(_) => session.manifests(),
        None => Vec::new(),
    };
    crate::config::check::preflight(config, None, &manifests).map_err(Failure::new)?;
    let stores = local_stores::open(&session.paths().state_root());
    let ctx = RunPlanContext {
        stores: &stores,
        session,
    };
    let plan = plan::plan(&parsed, &args.tasks, &args.evals, &ctx).map_err(Failure::new)?;
    // A dry run runs nothing, plugins included.
    let plugins = if args.dry_run {
        None
    } else {
        start_plugin_steps(&parsed, &plan, &stores, session).map_err(Failure::new)?
    };
    let options = RunOptions {
        dry_run: args.dry_run,
        keep: args.keep,
        user_overrides: args.user_overrides(),
        sandbox_provider,
        places: Places {
            locks_dir: session.paths().locks_dir(),
            fixture_prefix: session.env().var(FIXTURE_PREFIX_VAR),
            sandbox_dir,
        },
    };
    let status = match &plugins {
        Some(p) => runner::execute(&parsed, tree, &plan, &stores, p.as_ref(), &options, term),
        None => runner::execute(&parsed, tree, &plan, &stores, &NoPlugins, &options, term),
    };
    if let Some(p) = plugins {
        p.shutdown();
    }
    match status.map_err(Failure::new)? {
        RunStatus::DryRun | RunStatus::Finished { failed: false } => Ok(0),
        RunStatus::Finished { failed: true } => Ok(1),
        RunStatus::Cancelled { signal } => Ok(128 + signal),
    }
}

/// Puts a prefix before the object keys of a run's artifacts (tests and shared fixtures).
const FIXTURE_PREFIX_VAR: &str = "AGENT_ENV_FIXTURE_PREFIX";

/// Starts the plugins the plan's plugin steps need and preflights each step; `None` when no step
/// comes from a plugin (nothing is started).
fn start_plugin_steps(
    bundle: &crate::bundle::Bundle,
    plan: &plan::Plan<'_>,
    stores: &LocalStores,
    session: &Session,
) -> Result<Option<Arc<PluginSteps>>, BundleError> {
    let plugin_steps: Vec<(&str, &plan::PlannedStep, &str)> = plan
        .tasks
        .iter()
        .flat_map(|t| {
            t.steps.iter().filter_map(move |s| match &s.kind {
                StepKind::Plugin { package, .. } => {
                    Some((t.task.path.as_str(), s, package.as_str()))
                }
                StepKind::Builtin(_) => None,
            })
        })
        .collect();
    if plugin_steps.is_empty() {
        return Ok(None);
    }
    let steps = PluginSteps::new(stores, session).map_err(BundleError::one)?;
    let mut problems = Vec::new();
    for (_, _, package) in &plugin_steps {
        let Some(found) = session.discovery().find(&canonical_name(package)) else {
            continue;
        };
        match steps.settings(session.config(), package) {
            Ok(settings) => steps.add(&found.manifest, settings),
            Err(e) => problems.push(e.to_string()),
        }
    }
    for (path, step, package) in &plugin_steps {
        if let Err(why) = steps.preflight(package, step.type_name(), &step.spec) {
            problems.push(format!(
                "{}/{path}: step '{}' ({}) from the plugin {package}: {why}",
                bundle.display_root,
                step.id(),
                step.type_name()
            ));
        }
    }
    if problems.is_empty() {
        Ok(Some(steps))
    } else {
        steps.shutdown();
        Err(BundleError::new(problems))
    }
}

/// The first provider of a `--sandbox` chain this build has.
fn pick_sandbox_provider(
    chain: Option<&str>,
    sandbox_dir: &std::path::Path,
) -> Result<String, BundleError> {
    let Some(chain) = chain else {
        return Ok(crate::sandbox::LOCAL.to_string());
    };
    let names: Vec<&str> = chain
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    names
        .iter()
        .find(|n| crate::sandbox::provider(n, sandbox_dir).is_some())
        .map(|n| n.to_string())
        .ok_or_else(|| {
            BundleError::one(format!(
                "--sandbox '{chain}': no sandbox provider of that name is available; the built-in one is 'local'"
            ))
        })
}

/// Step types and store references, as planning asks for them.
struct RunPlanContext<'a> {
    stores: &'a LocalStores,
    session: &'a Session,
}

impl RunPlanContext<'_> {
    /// The manifest's `fail_task_on_error` for the plugin's step, when the entry naming that class
    /// sets one; otherwise a failure fails the task.
    fn fails_task_by_default(&self, package: &str, type_name: &str, class: &str) -> bool {
        let Some(plugin) = self.session.discovery().find(package) else {
            return true;
        };
        let steps = plugin.manifest.provides.get("task_steps");
        let entry = steps
            .and_then(|s| s.get(type_name))
            .filter(|e| e.class == class)
            .or_else(|| steps.and_then(|s| s.values().find(|e| e.class == class)));
        entry.and_then(|e| e.fail_task_on_error).unwrap_or(true)
    }
}

impl PlanContext for RunPlanContext<'_> {
    fn step_kind(&self, type_name: &str) -> Result<StepKind, String> {
        if let Some(b) = crate::steps::builtin(type_name) {
            return Ok(StepKind::Builtin(b));
        }
        match self
            .session
            .registry(RegistryLoad::ConfigNamed)
            .resolve("task_steps", type_name)
        {
            Ok(Resolved::Plugin { package, class, .. }) => {
                let canonical = canonical_name(&package);
                Ok(StepKind::Plugin {
                    fails_task_by_default: self.fails_task_by_default(&canonical, type_name, &class),
                    package: canonical,
                })
            }
            Ok(Resolved::BuiltIn { .. }) => Err(format!(
                "the step type '{type_name}' is built into the Python agent-env, and this agent-env does not have it yet"
            )),
            Err(RegistryError::Unknown { detail: None, .. })
                if crate::steps::not_yet_built_in(type_name) =>
            {
                Err(format!(
                    "the step type '{type_name}' is built into the Python agent-env, and this agent-env does not have it yet"
                ))
            }
            Err(RegistryError::Unknown { detail: None, .. }) => Err(format!(
                "Unknown task step type: {type_name}; no built-in step or installed plugin provides it (agent-env plugin list shows what plugins provide)"
            )),
            Err(e) => Err(e.to_string()),
        }
    }

    fn store_artifact_exists(&self, id: &str) -> Result<bool, String> {
        if !id.starts_with(crate::bundle::ids::LOCAL_PREFIX) {
            return Err(format!(
                "'{id}' is not an artifact of this bundle, and a bundle run reads only @local ids from the store"
            ));
        }
        self.stores
            .documents
            .find_one(
                "artifacts",
                &Filter::eq("id", id),
                Some(&Sort::by("version", true)),
            )
            .map(|d| d.is_some())
            .map_err(|e| e.to_string())
    }
}

/// `agent-env run` with no BUNDLE.
fn list(installed: &[InstalledBundle], out: &dyn Output) {
    if installed.is_empty() {
        out.line("No bundles are installed. agent-env run PATH runs a folder.");
        return;
    }
    let parsed: Vec<Result<crate::bundle::Bundle, BundleError>> =
        installed.iter().map(InstalledBundle::parse).collect();
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
        let mut folder = format!("  {}", b.folder_display());
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
