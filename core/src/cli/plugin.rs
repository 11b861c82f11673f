//! `agent-env plugin list | show | check`: what every plugin package contributes and whether each piece
//! took effect. `add` and `remove` live in [`crate::install`], `verify` in [`crate::cli::verify`].
//!
//! Exit codes: 0 (check: every contribution in effect), 1 (check: a problem; show: no such package),
//! 2 (usage).

use std::path::Path;

use agent_env_protocol::names::canonical_name;
use clap::{Args, Subcommand};

use crate::cli::{Exit, Failure, Terminal};
use crate::discovery::Source;
use crate::registry::{compat, Registry};
use crate::report::documents::{
    self, CheckDocument, ManifestInfo, ShadowedInfo, ShowDocument, CONFIG_EFFECT,
};
use crate::report::{build_report, human, BuiltReport, RowSource};
use crate::session::{RegistryLoad, Session};

#[derive(Args)]
pub struct PluginArgs {
    #[command(subcommand)]
    pub command: PluginCommand,
}

#[derive(Subcommand)]
pub enum PluginCommand {
    /// Every plugin package, what it provides, and its status.
    List(ReportArgs),
    /// Each contribution of one package, why it is in that state, and how its process went.
    Show(ShowArgs),
    /// Exit 1 if any contribution did not take effect.
    Check(ReportArgs),
    /// Install plugins (a folder, a Python package, a Rust crate, a Go module), check them, roll back on failure.
    Add(AddArgs),
    /// Remove plugin packages that nothing still uses.
    Remove(RemoveArgs),
    /// Approve the files an installed plugin starts from as they are now (after you changed them).
    Approve(ApproveArgs),
    /// Start a plugin and hold it to the protocol; exit 1 if it breaks a rule.
    Verify(crate::cli::verify::VerifyArgs),
    /// Write a new plugin project (Rust, Python or Go) that works as written, with its test.
    New(crate::cli::new::NewArgs),
}

#[derive(Args)]
pub struct AddArgs {
    /// A folder holding agent-env-plugin.toml, a crate or Go module folder, a Python name, wheel or `NAME @ URL`.
    #[arg(required = true)]
    pub specs: Vec<String>,
    /// Use this installer instead of the one the spec suggests.
    #[arg(long, value_enum)]
    pub installer: Option<crate::install::source::Installer>,
    /// Show what would run; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask before changing anything.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Keep a change that fails the check instead of rolling it back.
    #[arg(long)]
    pub keep: bool,
    /// Install Python packages from this package index (your own registry) instead of PyPI.
    #[arg(long, value_name = "URL")]
    pub index_url: Option<String>,
    /// Also look for Python packages in this index (your own registry), besides PyPI or
    /// --index-url; repeatable.
    #[arg(long, value_name = "URL")]
    pub extra_index_url: Vec<String>,
    /// Install a Python package from an index or a wheel again even when the same version is installed
    /// (after changing its code without raising its version); a folder is installed afresh every time.
    #[arg(long)]
    pub reinstall: bool,
    /// Print one JSON document for a script (with --yes or --dry-run: it cannot ask).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct ApproveArgs {
    /// The packages to approve, as `plugin list` names them.
    #[arg(required = true)]
    pub packages: Vec<String>,
}

#[derive(Args)]
pub struct RemoveArgs {
    /// The packages to remove, as `plugin list` names them.
    #[arg(required = true)]
    pub packages: Vec<String>,
    /// Remove even while something still uses the package.
    #[arg(long)]
    pub force: bool,
    /// Show what would be removed; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask before changing anything.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Print one JSON document for a script (with --yes or --dry-run: it cannot ask).
    #[arg(long)]
    pub json: bool,
    /// Also read a remote document store (PostgreSQL, a plugin's) for stored tasks, envs and artifacts
    /// that use the package's types; the local stores are always read.
    #[arg(long)]
    pub check_usage: bool,
}

#[derive(Args)]
pub struct ReportArgs {
    /// Print the JSON report (format_version 1) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Read manifests only: start no plugin.
    #[arg(long)]
    pub no_load: bool,
}

#[derive(Args)]
pub struct ShowArgs {
    /// The package, by any spelling of its name (compared in canonical form).
    pub package: String,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// Runs `plugin list | show | check | add | remove`.
pub fn run(args: PluginArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    match args.command {
        PluginCommand::List(a) => list(&a, verbose, session, term),
        PluginCommand::Show(a) => show(&a, verbose, session, term),
        PluginCommand::Check(a) => check(&a, verbose, session, term),
        PluginCommand::Add(a) => {
            let (json, dry_run, yes) = (a.json, a.dry_run, a.yes);
            let indexes = a.index_url.iter().map(|u| ("--index-url", u));
            for (flag, url) in
                indexes.chain(a.extra_index_url.iter().map(|u| ("--extra-index-url", u)))
            {
                // The credentials in the URL (a private index's token) are masked wherever it is
                // shown, this command's own refusal included.
                remember_index_credentials(url);
                check_index_url(flag, url)?;
            }
            let options = crate::install::add::AddOptions {
                specs: a.specs.clone(),
                installer: a.installer,
                dry_run: a.dry_run,
                yes: a.yes,
                keep: a.keep,
                pip: crate::install::plan::PipOptions {
                    index_url: a.index_url.clone(),
                    extra_index_urls: a.extra_index_url.clone(),
                    reinstall: a.reinstall,
                },
            };
            changing(
                "add",
                &a.specs,
                json,
                dry_run || yes,
                session,
                term,
                |out| crate::install::add::add(&options, &install_context(session, out)),
            )
        }
        PluginCommand::Verify(a) => crate::cli::verify::run(&a, session, term),
        PluginCommand::Approve(a) => approve(&a, session, term),
        PluginCommand::New(a) => crate::cli::new::run(&a, session, term),
        PluginCommand::Remove(a) => {
            let (json, dry_run, yes) = (a.json, a.dry_run, a.yes);
            let options = crate::install::remove::RemoveOptions {
                packages: a.packages.clone(),
                force: a.force,
                dry_run: a.dry_run,
                yes: a.yes,
                check_usage: a.check_usage,
            };
            changing(
                "remove",
                &a.packages,
                json,
                dry_run || yes,
                session,
                term,
                |out| crate::install::remove::remove(&options, &install_context(session, out)),
            )
        }
    }
}

/// Runs `plugin add` or `plugin remove`: its lines to the terminal, or with `json` one document that
/// says what happened (`outcome`), the problems, the lines it would have printed and the packages
/// installed afterwards.
fn changing(
    command: &str,
    requested: &[String],
    json: bool,
    cannot_ask: bool,
    session: &Session,
    term: &Terminal,
    change: impl FnOnce(&dyn crate::output::Output) -> Result<i32, crate::install::InstallError>,
) -> Exit {
    // Without --yes or a terminal to ask on, the command line lacks what it needs.
    let failure = |e: crate::install::InstallError| {
        let no_terminal = matches!(e, crate::install::InstallError::NoTerminal);
        Failure::new(e).usage_if(no_terminal)
    };
    if !json {
        return change(term).map_err(failure);
    }
    if !cannot_ask {
        return Err(Failure::new(format!(
            "plugin {command} --json cannot ask before changing anything: add --yes (or --dry-run)"
        ))
        .with_code(2));
    }
    let collected = crate::output::Collected::default();
    let result = change(&collected);
    let lines = collected.lines(crate::output::Stream::Out);
    let notes = collected.lines(crate::output::Stream::Note);
    // What went wrong, and what blocks a removal ("the above" the error sends a reader to).
    let problems: Vec<&str> = notes
        .iter()
        .filter_map(|n| {
            n.strip_prefix("problem: ")
                .or_else(|| n.strip_prefix("blocked: "))
        })
        .collect();
    let blocked = matches!(result, Err(crate::install::InstallError::Blocked));
    let (code, error) = match &result {
        Ok(code) => (*code, None),
        Err(e) => (1, Some(e.to_string())),
    };
    let said = |needle: &str| lines.iter().any(|l| l.contains(needle));
    let outcome = match code {
        _ if blocked => "refused",
        _ if error.is_some() => "failed",
        0 if said("Nothing changed") => "unchanged",
        0 if said("Added.") => "added",
        0 if said("Removed.") => "removed",
        0 => "dry_run",
        130 => "interrupted",
        _ if said("Kept as installed") => "kept",
        _ if said("Restor") => "rolled_back",
        _ => "refused",
    };
    // A script reads `error` to learn why a command did not succeed, so a failure that ended in
    // problems (a failed installer, a rolled-back check) names them there too.
    let error = error.or_else(|| match code {
        0 => None,
        130 => Some("interrupted; the plugins directory was restored as it was".to_owned()),
        _ if problems.is_empty() => Some(format!("plugin {command} did not finish (exit {code})")),
        _ => Some(problems.join("; ")),
    });
    // What is installed now, read again (the change happened after this session discovered).
    let installed: Vec<serde_json::Value> = crate::discovery::discover(&session.search_path())
        .plugins
        .iter()
        .filter(|p| p.manifest.path.starts_with(session.paths().plugins_dir()))
        .map(|p| serde_json::json!({"name": p.manifest.name, "version": p.manifest.version}))
        .collect();
    let doc = serde_json::json!({
        "format_version": 1,
        "command": command,
        "requested": requested,
        "outcome": outcome,
        "exit_code": code,
        "problems": problems,
        "error": error,
        "lines": lines,
        "notes": notes,
        "installed": installed,
    });
    term.print(&documents::to_json(&doc));
    // As every command's failure, said on stderr too (what a person watching a script's log reads).
    if let Some(error) = doc["error"].as_str() {
        term.eprintln(&format!("Error: {error}"));
    }
    Ok(code)
}

/// Remembers as secret what an index URL carries before its host: the password of `user:password@`,
/// or the whole of `token@` (a token as the user name, as many private indexes take it).
fn remember_index_credentials(url: &str) {
    crate::redaction::remember_setting(url, false, false);
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        match userinfo.split_once(':') {
            Some((_, password)) => crate::redaction::remember(password),
            None => crate::redaction::remember(userinfo),
        }
    }
}

/// An index URL pip can read (`http://`, `https://` or `file://`): anything else is refused before
/// anything changes (pip only warns, then fails on what it could not find).
fn check_index_url(flag: &str, url: &str) -> Result<(), Failure> {
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("http" | "https" | "file") => Ok(()),
        _ => Err(Failure::new(format!(
            "{flag} '{url}' is not an index pip can read: give its whole URL, starting with https://, http:// or file:// (such as https://pypi.example.internal/simple)"
        ))
        .with_code(2)),
    }
}

/// What `plugin add` and `plugin remove` take from the session.
fn install_context<'a>(
    session: &Session,
    out: &'a dyn crate::output::Output,
) -> crate::install::Context<'a> {
    let env = session.env();
    let paths = session.paths();
    crate::install::Context {
        plugins_dir: paths.plugins_dir(),
        locks_dir: paths.locks_dir(),
        state_root: paths.state_root(),
        home: paths.home_dir(),
        search: session.search_path(),
        remote_documents: remote_documents(session),
        config_path: crate::config::locate::locate(
            env.var_os(crate::config::locate::CONFIG_VAR)
                .map(Into::into),
            env.cwd(),
        )
        .path,
        out,
    }
}

/// Builds the registries and the report. The registries' warnings (what the original logs while
/// building them) go to stderr with `--verbose` only, as the report already says it all.
fn collect<'s>(
    args: &ReportArgs,
    verbose: bool,
    session: &'s Session,
    term: &Terminal,
) -> (&'s Registry, BuiltReport) {
    let load = if args.no_load {
        RegistryLoad::None
    } else {
        RegistryLoad::All
    };
    let registry = session.registry(load);
    if verbose {
        for w in &registry.warnings {
            term.warn(w);
        }
    }
    let built = build_report(registry, &session.paths().plugins_dir());
    (registry, built)
}

fn list(args: &ReportArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    let (registry, built) = collect(args, verbose, session, term);
    let mut warnings = session.take_plugin_warnings();
    warnings.extend(crate::report::noise::warnings(registry));
    warnings.extend(crate::report::unused::warnings(registry, None));
    for w in &warnings {
        term.warn(w);
    }
    if args.json {
        // The warnings ride in an extra top-level `warnings` key, present only when there are some, so a
        // format 1 reader sees the same document.
        match serde_json::to_value(&built.report) {
            Ok(serde_json::Value::Object(mut doc)) if !warnings.is_empty() => {
                doc.insert("warnings".into(), warnings.into());
                term.print(&documents::to_json(&doc));
            }
            _ => term.print(&documents::to_json(&built.report)),
        }
    } else {
        term.print(&human::list(&built.report, &built.stores_by_row(registry)));
    }
    Ok(0)
}

fn check(args: &ReportArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    let (registry, built) = collect(args, verbose, session, term);
    for w in crate::report::noise::warnings(registry) {
        term.warn(w);
    }
    let result = documents::check(&built.report);
    // Unsafe plugin paths (as plugin list says them), bundles that cannot run and contributions no
    // run uses: for a person on stderr, for a script in the document too.
    let mut warnings = session.take_plugin_warnings();
    warnings.extend(unrunnable_bundles(session));
    warnings.extend(crate::report::unused::warnings(registry, None));
    for w in &warnings {
        term.warn(w);
    }
    if args.json {
        let doc = CheckDocument {
            ok: result.ok(),
            problems: result.problems.clone(),
            report: built.report,
            warnings,
        };
        term.print(&documents::to_json(&doc));
        return Ok(if result.ok() { 0 } else { 1 });
    }
    term.print(&human::check(&built.report, &result));
    if result.ok() {
        Ok(0)
    } else {
        Err(Failure::new(result.reasons.join("; ")))
    }
}

/// A sentence for each bundle a plugin installs that `agent-env run` would refuse for its step
/// types: the plugin checks out, but what it ships cannot run here.
fn unrunnable_bundles(session: &Session) -> Vec<String> {
    let home = session.paths().home_dir();
    crate::bundle::installed(&session.manifests())
        .iter()
        .filter(|b| !b.is_core())
        .filter_map(|b| {
            let parsed = b.parse(home.as_deref()).ok()?;
            let missing = crate::run::bundle_run::missing_step_types(session, &parsed);
            (!missing.is_empty()).then(|| {
                format!(
                    "the bundle '{}' of {} cannot run here: {}",
                    b.run_name(),
                    b.package,
                    crate::run::bundle_run::missing_step_types_sentence(&missing)
                )
            })
        })
        .collect()
}

fn show(args: &ShowArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    let (registry, built) = collect(&args.report, verbose, session, term);
    let wanted = canonical_name(&args.package);
    let Some(index) = built
        .report
        .plugins
        .iter()
        .position(|d| canonical_name(&d.name) == wanted)
    else {
        let names: Vec<&str> = built
            .report
            .plugins
            .iter()
            .map(|d| d.name.as_str())
            .collect();
        let installed = if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        };
        return Err(Failure::new(format!(
            "no installed plugin package named '{}' (installed: {installed})",
            args.package
        )));
    };
    // The show document has no key for them: a person reads them on stderr, as `list` prints them.
    for w in crate::report::unused::warnings(registry, Some(wanted.as_str())) {
        term.warn(&w);
    }
    let source = built.sources[index];
    let dist = built.report.plugins[index].clone();
    let manifest = manifest_info(registry, source);
    let process = match source {
        RowSource::Plugin(i) => registry
            .probes
            .get(&i)
            .map(|p| p.diagnosis.clone())
            .or_else(|| store_only_diagnosis(registry, i, session)),
        _ => None,
    };
    // Said of a plugin's process; agent-env's own built-ins (a row of no plugin) have none.
    let config_effect = (registry.loaded && matches!(source, RowSource::Plugin(_)))
        .then(|| CONFIG_EFFECT.to_string());
    if args.report.json {
        let mut report = built.report;
        report.plugins = vec![dist];
        let doc = ShowDocument {
            report,
            config_effect,
            manifest,
            process,
        };
        term.print(&documents::to_json(&doc));
        return Ok(0);
    }
    let stores = built
        .stores_by_row(registry)
        .into_iter()
        .nth(index)
        .unwrap_or_default();
    let details = human::ShowDetails {
        requires: requires_line(registry, source),
        env: match source {
            RowSource::Plugin(i) => crate::discovery::env_request::env_request(
                &registry.discovery.plugins[i].manifest.env,
            ),
            _ => None,
        },
        location: location(registry, source),
        config_effect: config_effect.as_deref(),
        manifest: &manifest,
        process: process.as_ref(),
        stores: &stores,
    };
    term.print(&human::show(&built.report, &dist, &details));
    Ok(0)
}

/// A plugin that provides only stores is started by nothing that loads the registry (a store opens
/// when `[stores.<kind>]` names it): `show` starts it here, once, so that a plugin that cannot start is
/// diagnosed like any other. `None` without loading (`--no-load`) or for a plugin with contributions.
fn store_only_diagnosis(
    registry: &Registry,
    plugin: usize,
    session: &Session,
) -> Option<crate::registry::ProcessDiagnosis> {
    let manifest = &registry.discovery.plugins.get(plugin)?.manifest;
    if !registry.loaded || manifest.stores.is_empty() {
        return None;
    }
    let mut launch = crate::registry::launch_of(manifest);
    if let Ok(settings) = crate::registry::config_input::settings(&registry.config, &launch.package)
    {
        launch.settings = settings;
    }
    use crate::registry::Prober;
    let prober = crate::registry::host_prober::HostProber::new(session.host_config());
    prober
        .probe_all(&[launch])
        .pop()
        .map(|probe| probe.diagnosis)
}

/// `agentenv-framework>=0.9 (installed 0.10.0)`, or `no agent-env requirement declared (installed …)`,
/// then each protocol requirement; `None` for agent-env itself.
fn requires_line(registry: &Registry, source: RowSource) -> Option<String> {
    let RowSource::Plugin(i) = source else {
        return match source {
            RowSource::Core => None,
            _ => Some("(the manifest could not be read)".into()),
        };
    };
    let core = agent_env_protocol::names::CORE_PACKAGE;
    let (on_core, on_others): (Vec<_>, Vec<_>) =
        compat::sorted_core_requirements(&registry.discovery.plugins[i].manifest)
            .into_iter()
            .partition(|r| canonical_name(&r.package) == core);
    // As the original: the core requirements, then one `(installed …)`; ours adds the protocol
    // package's requirements, each with its installed version, after `; `.
    let core_part = if on_core.is_empty() {
        "no agent-env requirement declared".to_string()
    } else {
        on_core
            .iter()
            .map(|r| format!("{}{}", r.package, r.text))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut line = format!("{core_part} (installed {})", crate::VERSION);
    for r in on_others {
        let installed = compat::installed_version(&canonical_name(&r.package))
            .unwrap_or_else(|| "unknown".into());
        line.push_str(&format!(
            "; {}{} (installed {installed})",
            r.package, r.text
        ));
    }
    Some(line)
}

fn location(registry: &Registry, source: RowSource) -> String {
    match source {
        RowSource::Core => std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.display().to_string()))
            .unwrap_or_else(|| "(unknown)".into()),
        RowSource::Plugin(i) => registry.discovery.plugins[i]
            .manifest
            .folder()
            .display()
            .to_string(),
        RowSource::Broken(i) => registry.discovery.broken[i]
            .path
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    }
}

fn source_name(source: Source) -> &'static str {
    match source {
        Source::PluginsDir => "plugins dir",
        Source::PathDir => "PATH",
        Source::ShareDir => "share",
    }
}

fn manifest_info(registry: &Registry, source: RowSource) -> ManifestInfo {
    match source {
        RowSource::Core => ManifestInfo {
            path: None,
            source: None,
            exec: Vec::new(),
            executable: None,
            protocol: None,
            shadowed: Vec::new(),
        },
        RowSource::Broken(i) => ManifestInfo {
            path: Some(registry.discovery.broken[i].path.display().to_string()),
            source: None,
            exec: Vec::new(),
            executable: None,
            protocol: None,
            shadowed: Vec::new(),
        },
        RowSource::Plugin(i) => {
            let plugin = &registry.discovery.plugins[i];
            let m = &plugin.manifest;
            ManifestInfo {
                path: Some(m.path.display().to_string()),
                source: Some(source_name(plugin.source).to_string()),
                exec: crate::config::mask::mask_args(&m.exec),
                executable: resolve_executable(m.resolved_exec().first().map(String::as_str)),
                protocol: Some(m.protocol.to_env()),
                shadowed: plugin
                    .shadowed
                    .iter()
                    .map(|s| ShadowedInfo {
                        path: s.path.display().to_string(),
                        version: s.version.clone(),
                    })
                    .collect(),
            }
        }
    }
}

/// The file a program name resolves to: a path as given, a bare name through `PATH`.
fn resolve_executable(program: Option<&str>) -> Option<String> {
    let program = program?;
    let path = if program.contains('/') {
        let p = Path::new(program);
        p.is_file().then(|| p.to_path_buf())?
    } else {
        which::which(program).ok()?
    };
    Some(path.canonicalize().unwrap_or(path).display().to_string())
}

/// `plugin approve PACKAGE...`: pins each package's files as they are now.
fn approve(args: &ApproveArgs, session: &Session, term: &Terminal) -> Exit {
    let plugins_dir = session.paths().plugins_dir();
    let discovery = session.discovery();
    let mut manifests = Vec::new();
    for package in &args.packages {
        let canonical = agent_env_protocol::names::canonical_name(package);
        let Some(found) = discovery.find(&canonical) else {
            return Err(Failure::new(format!(
                "no installed plugin package named '{package}'; `agent-env plugin list` shows them"
            )));
        };
        if !found.manifest.path.starts_with(&plugins_dir) {
            return Err(Failure::new(format!(
                "{package} is not in the plugins directory {} (its manifest is {}), so `plugin add` did not install it and nothing pins it",
                plugins_dir.display(),
                found.manifest.path.display()
            )));
        }
        manifests.push(&found.manifest);
    }
    let was_unreadable = crate::discovery::pins::unreadable(&plugins_dir).is_some();
    crate::discovery::pins::pin_packages(&plugins_dir, &manifests).map_err(Failure::new)?;
    for m in &manifests {
        term.print(&format!(
            "Approved {} {}: its files are pinned as they are now.\n",
            m.name, m.version
        ));
    }
    if was_unreadable {
        // The pins of every other package were in the file that could not be read.
        let approved: Vec<&str> = manifests.iter().map(|m| m.name.as_str()).collect();
        let unpinned: Vec<&str> = discovery
            .plugins
            .iter()
            .map(|p| &p.manifest)
            .filter(|m| m.path.starts_with(&plugins_dir) && !approved.contains(&m.name.as_str()))
            .map(|m| m.name.as_str())
            .collect();
        if !unpinned.is_empty() {
            term.warn(format!(
                "the pin file could not be read, so it was written anew with only what you approved; {} {} not pinned now: approve each you trust (agent-env plugin approve {})",
                unpinned.join(", "),
                if unpinned.len() == 1 { "is" } else { "are" },
                unpinned.join(" ")
            ));
        }
    }
    Ok(0)
}

/// The configured document store when it is not on this machine (PostgreSQL, a plugin's): what
/// `plugin remove --check-usage` reads for stored uses of a package.
fn remote_documents(session: &Session) -> Option<crate::install::RemoteDocuments> {
    let selected = crate::config::store_selection::selection(session.config(), "document").ok()?;
    let class = selected
        .impl_name
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .trim();
    if class == crate::stores::local::sqlite_docs::CLASS {
        return None;
    }
    Some(crate::install::RemoteDocuments {
        impl_name: selected.impl_name.clone(),
        stores: session.stores().clone(),
    })
}
