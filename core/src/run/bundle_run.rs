//! A bundle run from a request: the bundle found (a folder, or an installed or core bundle by name) and
//! parsed, the config preflighted, the plan made against the session's registry, the plugins of its
//! plugin steps started and preflighted, then [`execute`]d. The CLI and (later) the explorer call
//! [`run_bundle`]; what a user sees goes to the caller's [`Output`].

use std::sync::Arc;

use agent_env_protocol::names::canonical_name;
use serde_json::{Map, Value};

use super::events::{NoObserver, RunObserver};
use super::executor::NoPlugins;
use super::local_stores;
use super::materialize::{Places, Versions};
use super::planned_bundle::{execute_knowing, Planned};
use super::plugin_steps::{warn_noise, PluginSteps};
use super::run_stores::RunStores;
use super::sandbox_predictions::unmakeable_root;
use super::task_notes::MachineFacts;
use super::{RunError, RunOptions, RunStatus, Stopping};
use crate::bundle::installed::Target;
use crate::bundle::tree::Tree;
use crate::bundle::{self, Bundle, BundleError};
use crate::output::Output;
use crate::registry::{RegistryError, Resolved};
use crate::run::plan::{self, PlanContext, StepKind, StepTypeError, StoreArtifactError};
use crate::session::{RegistryLoad, Session};
use crate::stores::{Filter, Sort};

/// What to run and how. [`RunRequest::new`] gives the bundle and how the run stops, the rest as
/// `agent-env run BUNDLE` has it.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// A bundle folder (starting with `.`, `/` or `~`), or an installed bundle's `<name>` or
    /// `<package>/<name>`.
    pub bundle: String,
    /// `bundle` is an installed bundle's name even when a folder of that name is at hand (the
    /// explorer's API runs no folder it was not asked for by its path).
    pub installed_only: bool,
    /// Tasks to run (name or id); none selects as the bundle says.
    pub tasks: Vec<String>,
    /// Evals whose tasks to run (name or id).
    pub evals: Vec<String>,
    /// `user_overrides` for every context (models, agent, sandbox).
    pub user_overrides: Map<String, Value>,
    /// The `--sandbox` fallback chain (comma-separated); the built-in provider is `local`.
    pub sandbox: Option<String>,
    /// Keep the sandboxes up after the run, until Ctrl-C.
    pub keep: bool,
    /// Write and run nothing; say what would be.
    pub dry_run: bool,
    /// Whether a dry run starts the plugins its steps need and asks each to check its steps, as
    /// `agent-env run --dry-run` does; without, it plans and works out the versions a run would
    /// record, and starts nothing (what the explorer asks before it queues a run).
    pub dry_run_checks_plugins: bool,
    /// How the run stops: by signals (the CLI), or by the caller's own cancel handle (the explorer
    /// cancels a run it started through it, and no signal is watched).
    pub stopping: Stopping,
    /// The run group id the run's instances record; with none, a fresh `run-<suffix>`.
    pub run_group_id: Option<String>,
    /// Entries every task's `context.metadata` starts with (a `seed` whose values fill the steps'
    /// `<key>` tokens; the explorer's workflow id).
    pub context_metadata: Map<String, Value>,
    /// How the caller's user names `tasks` and `evals` (the CLI's flags unless said).
    pub selection_words: super::plan::SelectionWords,
}

impl RunRequest {
    /// A run of `bundle` that stops as `stopping` says, its tasks selected as the bundle says, with
    /// no overrides, and neither a dry run nor one that keeps its sandboxes.
    pub fn new(bundle: impl Into<String>, stopping: Stopping) -> RunRequest {
        RunRequest {
            bundle: bundle.into(),
            installed_only: false,
            tasks: Vec::new(),
            evals: Vec::new(),
            user_overrides: Map::new(),
            sandbox: None,
            keep: false,
            dry_run: false,
            dry_run_checks_plugins: true,
            stopping,
            run_group_id: None,
            context_metadata: Map::new(),
            selection_words: super::plan::SelectionWords::FLAGS,
        }
    }
}

/// Finds, checks, plans and runs the requested bundle; nobody watches its events.
pub fn run_bundle(
    session: &Session,
    request: &RunRequest,
    out: &dyn Output,
) -> Result<RunStatus, RunError> {
    run_bundle_observed(session, request, out, Arc::new(NoObserver))
}

/// Finds, checks, plans and runs the requested bundle, sending what happens to `observer` as
/// [`RunEvent`](super::events::RunEvent)s (the plugins' progress and output included) while the
/// lines for a person go to `out`.
pub fn run_bundle_observed(
    session: &Session,
    request: &RunRequest,
    out: &dyn Output,
    observer: Arc<dyn RunObserver>,
) -> Result<RunStatus, RunError> {
    run_bundle_pinned(session, request, out, observer, &Versions::new())
}

/// [`run_bundle_observed`], held to the task versions in `pinned` (by task id): when the bundle
/// would now record another version of one of them, the run writes and runs nothing and ends with
/// [`MaterializeError::VersionChanged`](super::materialize::MaterializeError::VersionChanged). The
/// explorer pins the version it answered a request with before the run waited its turn.
pub fn run_bundle_pinned(
    session: &Session,
    request: &RunRequest,
    out: &dyn Output,
    observer: Arc<dyn RunObserver>,
    pinned: &Versions,
) -> Result<RunStatus, RunError> {
    // Signals are watched from the start: Ctrl-C while the bundle is read, its plugins start or its
    // entities are written cancels the run like Ctrl-C during its tasks.
    let cancel = super::cancel_of(&request.stopping)?;
    let _store_stderr = super::plugin_steps::hear_store_stderr(observer.clone(), session);
    // A folder comes before any installed bundle and agent-env's own bundles keep their bare names, so
    // neither `run ./folder` nor `run hello` needs a look at the installed plugins.
    let home = session.paths().home_dir();
    let home = home.as_deref();
    let installed;
    let folder = match request.installed_only {
        true => None,
        false => bundle::as_folder(&request.bundle, home),
    };
    let target = match folder {
        Some(folder) => {
            let folder = folder?;
            if let Some(sentence) = folder_over_installed(&request.bundle, session) {
                out.note(&format!("note: {sentence}"));
                observer.event(&super::events::RunEvent::Noted { message: sentence });
            }
            Target::Folder(folder)
        }
        None => {
            let core = bundle::core_bundles();
            installed = if core.iter().any(|b| b.name == request.bundle) {
                core
            } else {
                bundle::installed(&session.manifests())
            };
            bundle::resolve_installed(&request.bundle, &installed)?
        }
    };
    let (parsed, folder) = match &target {
        Target::Folder(path) => (bundle::parse(path, home), Some(path.clone())),
        Target::Installed(b) => (b.parse(home), None),
    };
    let parsed = match parsed {
        Ok(parsed) => parsed,
        Err(e) => return Err(with_plan_problems(e, session).into()),
    };
    say_parse_notes(&parsed, out, observer.as_ref());
    if !parsed.builds.is_empty() {
        let paths: Vec<&str> = parsed.builds.iter().map(|b| b.path.as_str()).collect();
        out.note(&format!(
            "note: {} {} not built: this agent-env builds no env or agent images (the Python agent-env builds them with Docker), so the tasks run without them",
            paths.join(", "),
            if paths.len() == 1 { "is" } else { "are" }
        ));
    }
    let tree = match (&target, &folder) {
        (_, Some(path)) => Tree::Disk(path),
        (Target::Installed(b), None) => b.tree(),
        (Target::Folder(_), None) => {
            return Err(BundleError::one("internal: a folder bundle has no folder").into())
        }
    };
    let fixture_prefix = super::materialize::fixture_prefix_of(
        session.env().var(super::materialize::FIXTURE_PREFIX_VAR),
    )
    .map_err(BundleError::one)?;
    say_links_outside(&parsed, tree, session, out, observer.as_ref());
    let sandbox_dir = session.paths().local_sandbox_dir();
    // A bad config (a store table that doesn't build, an unresolved reference) stops the run here,
    // before anything is written or run.
    let config = session.config();
    let sandbox_provider =
        choose_sandbox_provider(request.sandbox.as_deref(), session, &sandbox_dir)?;
    // Only a config file can name a plugin's store, so with none there are no manifests to check against.
    let manifests = match config.path {
        Some(_) => session.manifests(),
        None => Vec::new(),
    };
    crate::config::check::preflight(
        config,
        None,
        &manifests,
        Some(crate::config::check::BUNDLE_RUN_STORES),
    )?;
    let stores = local_stores::open(&session.paths().state_root());
    let ctx = RunPlanContext {
        stores: &stores,
        session,
        bare: false,
    };
    let plan = plan::plan_worded(
        &parsed,
        &request.tasks,
        &request.evals,
        request.selection_words,
        &ctx,
    )?;
    // Every plugin a step needs is started, handshaken and asked to validate its steps before
    // anything is written; a dry run stops them again at once and runs nothing, and one that does
    // not check them starts none.
    let plugins = match request.dry_run && !request.dry_run_checks_plugins {
        true => None,
        false => start_plugin_steps(&parsed, &plan, &stores, session, observer.clone(), &cancel)?,
    };
    let plugins = match plugins {
        Some(p) if request.dry_run || cancel.is_cancelled() => {
            warn_noise(&p.shutdown(), observer.as_ref());
            None
        }
        other => other,
    };
    if let Some(signal) = cancel.signal() {
        out.line(super::CANCELLED_BEFORE_TASKS);
        return Ok(RunStatus::Cancelled { signal });
    }
    let liveness = super::heartbeat::Liveness::for_run(session.env(), observer.as_ref());
    let options = RunOptions {
        dry_run: request.dry_run,
        keep: request.keep,
        user_overrides: request.user_overrides.clone(),
        sandbox_provider,
        cancel,
        run_group_id: request.run_group_id.clone(),
        context_metadata: request.context_metadata.clone(),
        observer,
        pinned: pinned.clone(),
        liveness,
        places: Places {
            locks_dir: session.paths().locks_dir(),
            fixture_prefix,
            sandbox_dir,
            instances_in: super::liveness::InstancesIn::Local,
            document_store: None,
        },
    };
    // A dry run makes no sandbox, so it looks whether one could be made where the run would make it.
    let unmakeable_root = match request.dry_run && options.sandbox_provider == crate::sandbox::LOCAL
    {
        true => unmakeable_root(&options.places.sandbox_dir, sandbox_dir_from_var(session)),
        false => None,
    };
    let facts = MachineFacts {
        unmakeable_root: unmakeable_root.as_ref(),
    };
    let planned = Planned {
        bundle: &parsed,
        tree,
        plan: &plan,
    };
    let status = match &plugins {
        Some(p) => execute_knowing(planned, &stores, p.as_ref(), &options, facts, out),
        None => execute_knowing(planned, &stores, &NoPlugins, &options, facts, out),
    };
    if let Some(p) = plugins {
        warn_noise(&p.shutdown(), options.observer.as_ref());
    }
    status
}

/// Names each link among the bundle's artifact files that leads outside its folder, and where: what
/// a link to a file leads to is read into the object store and the sandbox, what a link to a folder
/// holds is left out of the artifact (a note, and a warning of the run's carrying the link's path in
/// the bundle).
fn say_links_outside(
    bundle: &Bundle,
    tree: Tree<'_>,
    session: &Session,
    out: &dyn Output,
    observer: &dyn RunObserver,
) {
    use crate::bundle::links::{links_outside, LeadsTo};
    for link in links_outside(bundle, tree) {
        let target = session.paths().tilde(&link.target);
        let sentence = match link.leads_to {
            LeadsTo::File => format!(
                "{} of the bundle is a symbolic link to {target}, outside the bundle folder: a run reads that file into the object store and the sandbox as the artifact's own; make sure it is one you mean to share, or put a copy of it in the bundle",
                link.path
            ),
            LeadsTo::Folder => format!(
                "{} of the bundle is a symbolic link to the folder {target}, outside the bundle folder: a run follows no link to a folder, so what it holds is left out of the artifact; put a copy of the folder in the bundle if the artifact needs it",
                link.path
            ),
        };
        out.note(&format!("note: {sentence}"));
        // The note is what the person reads: a warning with a path is not said again on the
        // terminal, only written to the run's log and --json's warnings, with that path.
        observer.event(&super::events::RunEvent::Warning {
            task_path: Some(link.path),
            message: sentence,
        });
    }
}

/// Notes what of the bundle a run does not read (a file in a kind folder that is not of its kind, a
/// task file's key or `id`), and gives each to `observer` as a warning with the file's path, for
/// `--json`'s warnings and the run's log (the note is what the terminal shows).
fn say_parse_notes(bundle: &Bundle, out: &dyn Output, observer: &dyn RunObserver) {
    let ignored = bundle.ignored.iter().filter_map(|rel| {
        let why = crate::bundle::parser::why_ignored(rel)?;
        Some((rel.clone(), format!("{rel} is not read: {why}")))
    });
    // Each sentence starts with the path of the task file (or the folder, `task/`) it is about.
    let unread = bundle.unread.iter().map(|sentence| {
        let path = bundle
            .tasks
            .iter()
            .map(|t| t.path.as_str())
            .chain(bundle.ignored.iter().map(String::as_str))
            .filter(|p| {
                sentence
                    .strip_prefix(p)
                    .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with("/ "))
            })
            .max_by_key(|p| p.len())
            .unwrap_or_default();
        (path.to_string(), sentence.clone())
    });
    for (path, sentence) in ignored.chain(unread) {
        out.note(&format!("note: {sentence}"));
        // Said already: a warning with a path is not said again on the terminal.
        observer.event(&match path.is_empty() {
            true => super::events::RunEvent::Noted { message: sentence },
            false => super::events::RunEvent::Warning {
                task_path: Some(path),
                message: sentence,
            },
        });
    }
}

/// Whether `AGENT_ENV_LOCAL_SANDBOX_DIR` chose the `local` provider's folder (else it is the default).
fn sandbox_dir_from_var(session: &Session) -> bool {
    session
        .env()
        .var_os("AGENT_ENV_LOCAL_SANDBOX_DIR")
        .is_some_and(|v| !v.is_empty())
}

/// A bundle whose parse found problems, with the problems planning finds in the task files that
/// did parse (a step type nothing here runs, an artifact it has not), so a run says every file's
/// problems at once rather than one round of them per fix.
fn with_plan_problems(error: BundleError, session: &Session) -> BundleError {
    let more = match error.partly_parsed() {
        Some(partly) if !partly.tasks.is_empty() => {
            let names: Vec<String> = partly.tasks.iter().map(|t| t.name.clone()).collect();
            let stores = local_stores::open(&session.paths().state_root());
            let ctx = RunPlanContext {
                stores: &stores,
                session,
                bare: false,
            };
            match plan::plan_worded(partly, &names, &[], plan::SelectionWords::FLAGS, &ctx) {
                Ok(_) => Vec::new(),
                Err(e) => e.problems,
            }
        }
        _ => Vec::new(),
    };
    error.with(more)
}

/// When `text`, a bare name (`hello`, not `./hello`), names a folder here and an installed bundle
/// too: that the folder runs, and how to run the installed one. A folder comes first, so the
/// installed bundles are read only for such a name.
fn folder_over_installed(text: &str, session: &Session) -> Option<String> {
    if text.starts_with('.') || text.starts_with('/') || text.starts_with('~') {
        return None;
    }
    let core = bundle::core_bundles();
    let installed = match core.iter().any(|b| b.name == text) {
        true => core,
        false => bundle::installed(&session.manifests()),
    };
    let Ok(Target::Installed(b)) = bundle::resolve_installed(text, &installed) else {
        return None;
    };
    let folder = crate::quote::word(&format!("./{text}"));
    let qualified = format!("{}/{}", b.package, b.name);
    if qualified == text {
        return None;
    }
    Some(format!(
        "{folder} runs: '{text}' names this folder and the installed bundle {qualified}; agent-env run {} runs that bundle, and agent-env run {folder} says you mean the folder",
        crate::quote::word(&qualified)
    ))
}

/// Starts the plugins the plan's plugin steps need and preflights each step; `None` when no step
/// comes from a plugin (nothing is started). `cancel` stops a start still waiting for its plugin.
/// A configured store one of those plugins provides is opened then too (see
/// [`open_stores_of_step_plugins`]), so a config it refuses stops the run once, before any task.
pub(super) fn start_plugin_steps(
    bundle: &crate::bundle::Bundle,
    plan: &plan::Plan<'_>,
    stores: &RunStores,
    session: &Session,
    observer: Arc<dyn RunObserver>,
    cancel: &super::cancel::Cancel,
) -> Result<Option<Arc<PluginSteps>>, RunError> {
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
    let steps = PluginSteps::new(stores, session, observer, cancel);
    let mut problems = Vec::new();
    let mut unsettled = Vec::new();
    for (_, _, package) in &plugin_steps {
        let Some(found) = session.discovery().find(&canonical_name(package)) else {
            continue;
        };
        match steps.settings(session, package) {
            Ok(settings) => steps.add(&found.manifest, settings),
            Err(e) if !unsettled.contains(package) => {
                problems.push(e.to_string());
                unsettled.push(*package);
            }
            Err(_) => {}
        }
    }
    // A plugin whose settings could not be read does not start: its problem is said once, above.
    for (path, step, package) in plugin_steps
        .iter()
        .filter(|(_, _, p)| !unsettled.contains(p))
    {
        if let Err(why) = steps.preflight(package, step.type_name(), &step.spec) {
            problems.push(format!(
                "{}: step '{}' ({}) from the plugin {package}: {why}",
                bundle.place(path),
                step.id(),
                step.type_name()
            ));
        }
    }
    if !problems.is_empty() {
        steps.shutdown();
        return Err(BundleError::new(problems).into());
    }
    if steps.stopping() {
        return Ok(Some(steps));
    }
    let started: Vec<&str> = plugin_steps.iter().map(|(_, _, p)| *p).collect();
    if let Err(e) = open_stores_of_step_plugins(session, &started) {
        steps.shutdown();
        return Err(e.into());
    }
    Ok(Some(steps))
}

/// Opens each configured store a step reaches through the host (the secret and image stores; its
/// objects and documents are the run's own, open already) that one of the plugins `started` for
/// the run's steps provides. That plugin is running, so opening it starts nothing more, and a
/// config table it refuses (a key its store does not take) is the config's problem, said once
/// before any task starts, rather than each task's step failing on it in turn. A store another
/// plugin provides is opened when a step first asks for it, as before: the run's check starts no
/// plugin for it.
fn open_stores_of_step_plugins(
    session: &Session,
    started: &[&str],
) -> Result<(), crate::config::check::PreflightError> {
    use crate::stores::from_spec::{classify, Target as StoreTarget};
    use crate::stores::StoreKind;
    let config = session.config();
    let mut problems = Vec::new();
    for kind in [StoreKind::Secret, StoreKind::Image] {
        let Ok(selection) = crate::config::store_selection::selection(config, kind.as_str()) else {
            // The run's check of the config has said what is wrong with the section.
            continue;
        };
        let Ok(StoreTarget::Plugin { package, class }) = classify(kind, &selection.impl_name)
        else {
            continue;
        };
        let package = canonical_name(&package);
        if !started.iter().any(|p| canonical_name(p) == package) {
            continue;
        }
        if let Err(e) = session.stores().get(kind) {
            problems.push(crate::config::error::ConfigError::Store(format!(
                "[stores.{kind}] names the {kind} store {package}:{class} of the plugin {package}, which runs this run's steps; it can't be opened, so no task was started: {e}",
                kind = kind.as_str(),
            )));
        }
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(crate::config::check::PreflightError {
            place: config.path_display(),
            problems,
        }),
    }
}

/// The sandbox provider of a run: the first available one of `--sandbox`'s chain, else of the
/// config's `[sandbox] default`, else the built-in `local`. A chain none of whose providers is
/// available stops the run, naming where it was written (and a plugin's provider it names, which
/// runs here do not use).
pub(super) fn choose_sandbox_provider(
    flag: Option<&str>,
    session: &Session,
    sandbox_dir: &std::path::Path,
) -> Result<String, BundleError> {
    if let Some(chain) = flag {
        return pick_sandbox_provider(Some(chain), "--sandbox", session, sandbox_dir);
    }
    let config = session.config();
    let source = match &config.path {
        Some(path) => format!("[sandbox] default in {}", path.display()),
        None => "[sandbox] default".to_string(),
    };
    pick_sandbox_provider(
        configured_sandbox_chain(config).as_deref(),
        &source,
        session,
        sandbox_dir,
    )
}

/// The config's `[sandbox] default` chain (comma-separated provider names), when it sets one.
fn configured_sandbox_chain(config: &crate::config::ConfigDocument) -> Option<String> {
    config
        .table
        .get("sandbox")?
        .get("default")?
        .as_str()
        .map(str::to_string)
}

/// The first available provider of `chain`, or the built-in one without a chain; `source` names
/// where the chain was written (`--sandbox`, the config's `[sandbox] default`).
fn pick_sandbox_provider(
    chain: Option<&str>,
    source: &str,
    session: &Session,
    sandbox_dir: &std::path::Path,
) -> Result<String, BundleError> {
    let Some(chain) = chain else {
        return Ok(crate::sandbox::LOCAL.to_string());
    };
    crate::sandbox::first_available(chain)
        .filter(|name| crate::sandbox::provider(name, sandbox_dir).is_some())
        .map(str::to_string)
        .ok_or_else(|| {
            BundleError::one(crate::config::sandbox_chain::no_provider_here(
                source,
                chain,
                &session.manifests(),
            ))
        })
}

/// Step types and store references, as planning asks for them.
pub(super) struct RunPlanContext<'a> {
    pub(super) stores: &'a RunStores,
    pub(super) session: &'a Session,
    /// Whether the task runs in the configured stores (a stored task with a bare id), which may not
    /// reference @local ids; a bundle run reads only @local ids.
    pub(super) bare: bool,
}

/// What runs a step type: agent-env itself, or an installed plugin's class.
enum StepSource {
    Builtin(&'static dyn crate::run::builtin_steps::BuiltinStep),
    Plugin { package: String, class: String },
}

/// What runs the step type `type_name`, or why nothing here can (a step type only the Python
/// agent-env has, or one no plugin provides).
fn step_source(session: &Session, type_name: &str) -> Result<StepSource, StepTypeError> {
    if let Some(b) = crate::run::builtin_steps::builtin(type_name) {
        return Ok(StepSource::Builtin(b));
    }
    let only_in_python = || StepTypeError::OnlyInPython {
        type_name: type_name.to_string(),
    };
    match session
        .registry(RegistryLoad::ConfigNamed)
        .resolve("task_steps", type_name)
    {
        Ok(Resolved::Plugin { package, class, .. }) => Ok(StepSource::Plugin {
            package: canonical_name(&package),
            class,
        }),
        Ok(Resolved::BuiltIn { .. }) => Err(only_in_python()),
        Err(RegistryError::Unknown { detail: None, .. })
            if crate::run::builtin_steps::not_yet_built_in(type_name) =>
        {
            Err(only_in_python())
        }
        Err(RegistryError::Unknown {
            detail: None,
            known,
            ..
        }) => {
            // A near miss among the step types that run here: built-in, and plugins'.
            let runnable = crate::builtin_names::RUNNABLE_TASK_STEPS
                .iter()
                .copied()
                .chain(known.iter().map(String::as_str));
            Err(StepTypeError::Unknown {
                type_name: type_name.to_string(),
                near: crate::similar::best_match(type_name, runnable, 0.75).map(str::to_string),
            })
        }
        Err(e) => Err(StepTypeError::Unusable(e)),
    }
}

/// A step type a bundle's tasks use that nothing here runs, and why.
#[derive(Debug)]
pub struct MissingStepType {
    pub type_name: String,
    pub why: StepTypeError,
}

/// The step types `bundle`'s tasks use that nothing here runs, each once, in the order first used:
/// a bundle that lists and parses fine but that `agent-env run` would refuse.
pub fn missing_step_types(session: &Session, bundle: &Bundle) -> Vec<MissingStepType> {
    let mut missing: Vec<MissingStepType> = Vec::new();
    for step in bundle.tasks.iter().flat_map(|t| &t.steps) {
        let Some(type_name) = step.get("type").and_then(Value::as_str) else {
            continue;
        };
        if missing.iter().any(|m| m.type_name == type_name) {
            continue;
        }
        if let Err(why) = step_source(session, type_name) {
            missing.push(MissingStepType {
                type_name: type_name.to_string(),
                why,
            });
        }
    }
    missing
}

/// One sentence for a bundle whose tasks use `missing` step types: why `run` refuses it. A type a
/// plugin claims but that cannot be used (the plugin failed to load, or clashes) says why.
pub fn missing_step_types_sentence(missing: &[MissingStepType]) -> String {
    let quoted: Vec<String> = missing
        .iter()
        .map(|m| format!("'{}'", m.type_name))
        .collect();
    let unusable: Vec<String> = missing
        .iter()
        .filter(|m| matches!(m.why, StepTypeError::Unusable(_)))
        .map(|m| m.why.to_string())
        .collect();
    let python_only = missing
        .iter()
        .all(|m| crate::run::builtin_steps::not_yet_built_in(&m.type_name));
    let why = if !unusable.is_empty() {
        format!(" ({})", unusable.join("; "))
    } else if python_only {
        " (built into the Python agent-env)".to_string()
    } else {
        " (no built-in step or installed plugin provides them)".to_string()
    };
    format!(
        "its tasks use step {} {} that this agent-env has no step for{why}, so agent-env run refuses the bundle",
        crate::words::plural(missing.len(), "type", "types"),
        quoted.join(", "),
    )
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
    fn artifact_type_problem(&self, artifact_type: &str) -> Option<String> {
        // A built-in type needs no registry (building one reads every manifest).
        if crate::builtin_names::ARTIFACTS.contains(&artifact_type) {
            return None;
        }
        self.session
            .registry(RegistryLoad::ConfigNamed)
            .resolve("artifacts", artifact_type)
            .err()
            .map(|e| e.not_known("artifact"))
    }

    fn step_kind(&self, type_name: &str) -> Result<StepKind, StepTypeError> {
        match step_source(self.session, type_name)? {
            StepSource::Builtin(b) => Ok(StepKind::Builtin(b)),
            StepSource::Plugin { package, class } => Ok(StepKind::Plugin {
                fails_task_by_default: self.fails_task_by_default(&package, type_name, &class),
                package,
            }),
        }
    }

    fn artifacts_looked_in(&self, name: &str) -> String {
        if self.bare {
            format!("in the configured store (a stored task loads only stored artifacts): put one with agent-env artifact put FOLDER --id {name}")
        } else {
            plan::BUNDLE_ARTIFACTS_LOOKED_IN.to_string()
        }
    }

    fn store_artifact_exists(&self, id: &str) -> Result<bool, StoreArtifactError> {
        let local = id.starts_with(crate::bundle::ids::LOCAL_PREFIX);
        if self.bare && local {
            return Err(StoreArtifactError::LocalIdInStoredTask { id: id.to_string() });
        }
        if !self.bare && !local {
            return Err(StoreArtifactError::BareIdInBundleRun { id: id.to_string() });
        }
        self.stores
            .documents
            .find_one(
                "artifacts",
                &Filter::eq("id", id),
                Some(&Sort::by("version", true)),
            )
            .map(|d| d.is_some())
            .map_err(|source| StoreArtifactError::Store {
                id: id.to_string(),
                source,
            })
    }
}
