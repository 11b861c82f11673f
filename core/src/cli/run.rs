//! `agent-env run [BUNDLE] [--task NAME]... [--eval NAME]... [--keep] [--dry-run] ...`: run a bundle's
//! tasks and evals; with no BUNDLE, list the installed bundles.

use std::cell::OnceCell;
use std::sync::Arc;

use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::names::canonical_name;
use serde_json::{json, Map, Value};

use crate::bundle::installed::{InstalledBundle, Target};
use crate::bundle::tree::Tree;
use crate::bundle::{self, BundleError};
use crate::config::ConfigDocument;
use crate::discovery::{Discovery, SearchPath};
use crate::registry::{Loading, Registry, RegistryError, Resolved};
use crate::run::executor::NoPlugins;
use crate::run::local_stores::{self, LocalStores};
use crate::run::plan::{self, PlanContext, StepKind};
use crate::run::plugin_steps::PluginSteps;
use crate::run::{self as runner, RunOptions};
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

pub fn run(args: RunArgs, _verbose: bool) -> i32 {
    let Some(text) = args.bundle.clone() else {
        if args.has_options() {
            eprintln!("Error: these options need a BUNDLE: agent-env run BUNDLE [OPTIONS] (agent-env run with no BUNDLE lists the installed bundles)");
            return 2;
        }
        list(&bundle::installed(&installed_manifests(
            &Discovered::default(),
        )));
        return 0;
    };
    let discovered = Discovered::default();
    // agent-env's own bundles keep their bare names, so `run hello` needs no look at installed plugins.
    let core = bundle::core_bundles();
    let installed = if core.iter().any(|b| b.name == text) {
        core
    } else {
        bundle::installed(&installed_manifests(&discovered))
    };
    let target = match bundle::resolve(&text, &installed) {
        Ok(t) => t,
        Err(e) => return super::fail(e),
    };
    let (parsed, folder) = match &target {
        Target::Folder(path) => (bundle::parse(path), Some(path.clone())),
        Target::Installed(b) => (b.parse(), None),
    };
    let parsed = match parsed {
        Ok(b) => b,
        Err(e) => return super::fail(e),
    };
    let tree = match (&target, &folder) {
        (_, Some(path)) => Tree::Disk(path),
        (Target::Installed(b), None) => b.tree(),
        (Target::Folder(_), None) => return super::fail("internal: a folder bundle has no folder"),
    };
    let sandbox_provider = match pick_sandbox_provider(args.sandbox.as_deref()) {
        Ok(p) => p,
        Err(e) => return super::fail(e),
    };
    // A bad config (a store table that doesn't build, an unresolved reference) stops the run here,
    // before anything is written or run.
    let config = ConfigDocument::load();
    // Only a config file can name a plugin's store, so with none there are no manifests to check against.
    let manifests = match config.path {
        Some(_) => installed_manifests(&discovered),
        None => Vec::new(),
    };
    if let Err(e) = crate::config::check::preflight(&config, None, &manifests) {
        return super::fail(e);
    }
    let stores = local_stores::open();
    let ctx = RunPlanContext {
        stores: &stores,
        discovered: &discovered,
    };
    let plan = match plan::plan(&parsed, &args.tasks, &args.evals, &ctx) {
        Ok(p) => p,
        Err(e) => return super::fail(e),
    };
    // A dry run runs nothing, plugins included.
    let plugins = if args.dry_run {
        None
    } else {
        match start_plugin_steps(&parsed, &plan, &stores, &config, &discovered) {
            Ok(p) => p,
            Err(e) => return super::fail(e),
        }
    };
    let options = RunOptions {
        dry_run: args.dry_run,
        keep: args.keep,
        user_overrides: args.user_overrides(),
        sandbox_provider,
    };
    let code = match &plugins {
        Some(p) => runner::execute(&parsed, tree, &plan, &stores, p.as_ref(), &options),
        None => runner::execute(&parsed, tree, &plan, &stores, &NoPlugins, &options),
    };
    if let Some(p) = plugins {
        p.shutdown();
    }
    code
}

/// Starts the plugins the plan's plugin steps need and preflights each step; `None` when no step
/// comes from a plugin (nothing is started).
fn start_plugin_steps(
    bundle: &crate::bundle::Bundle,
    plan: &plan::Plan<'_>,
    stores: &LocalStores,
    config: &ConfigDocument,
    discovered: &Discovered,
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
    let steps = PluginSteps::new(stores, config).map_err(BundleError::one)?;
    let mut problems = Vec::new();
    for (_, _, package) in &plugin_steps {
        let Some(found) = discovered.get().find(&canonical_name(package)) else {
            continue;
        };
        match crate::config::plugins::plugin_settings(config, package, None) {
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
fn pick_sandbox_provider(chain: Option<&str>) -> Result<String, BundleError> {
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
        .find(|n| crate::sandbox::provider(n).is_some())
        .map(|n| n.to_string())
        .ok_or_else(|| {
            BundleError::one(format!(
                "--sandbox '{chain}': no sandbox provider of that name is available; the built-in one is 'local'"
            ))
        })
}

/// Discovery and the registry, each built at most once and only when something needs it.
#[derive(Default)]
struct Discovered {
    discovery: OnceCell<Discovery>,
    registry: OnceCell<Registry>,
}

impl Discovered {
    fn get(&self) -> &Discovery {
        self.discovery
            .get_or_init(|| crate::discovery::discover(&SearchPath::from_env()))
    }

    fn registry(&self) -> &Registry {
        self.registry.get_or_init(|| {
            let config = crate::registry::ConfigState::from_env();
            let prober = crate::registry::host_prober::HostProber::new();
            Registry::build(self.get().clone(), config, Loading::ConfigNamed(&prober))
        })
    }
}

/// Step types and store references, as planning asks for them.
struct RunPlanContext<'a> {
    stores: &'a LocalStores,
    discovered: &'a Discovered,
}

impl RunPlanContext<'_> {
    /// The manifest's `fail_task_on_error` for the plugin's step, when the entry naming that class
    /// sets one; otherwise a failure fails the task.
    fn fails_task_by_default(&self, package: &str, type_name: &str, class: &str) -> bool {
        let Some(plugin) = self.discovered.get().find(package) else {
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
        if let Some(b) = crate::run::builtin_steps::builtin(type_name) {
            return Ok(StepKind::Builtin(b));
        }
        match self.discovered.registry().resolve("task_steps", type_name) {
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
                if crate::run::builtin_steps::not_yet_built_in(type_name) =>
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

/// The manifests discovery found (plugins directory, then PATH), read without running anything.
fn installed_manifests(discovered: &Discovered) -> Vec<Manifest> {
    discovered
        .get()
        .plugins
        .iter()
        .map(|p| p.manifest.clone())
        .collect()
}

/// `agent-env run` with no BUNDLE.
fn list(installed: &[InstalledBundle]) {
    if installed.is_empty() {
        crate::say!("No bundles are installed. agent-env run PATH runs a folder.");
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
    crate::say!("{}", line(header));
    for ((b, row), parsed) in installed.iter().zip(&rows).zip(&parsed) {
        crate::say!("{}", line([&row[0], &row[1], &row[2], &row[3]]));
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
        crate::say!("{folder}");
    }
    crate::say!();
    crate::say!(
        "Run one with agent-env run NAME. To change one, copy its folder and run the copy."
    );
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
