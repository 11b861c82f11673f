//! `agent-env plugin show PACKAGE`: one package's contributions, its manifest, what it requires,
//! where it lives and how its process went; exits 1 when no installed package has that name.

use std::path::Path;

use agent_env_protocol::names::canonical_name;

use crate::cli::{Exit, Failure, Terminal};
use crate::discovery::Source;
use crate::registry::{compat, Registry};
use crate::report::documents::{self, ManifestInfo, ShadowedInfo, ShowDocument};
use crate::report::{human, RowSource};
use crate::session::Session;

use super::ShowArgs;

/// `plugin show PACKAGE`, the package named by any spelling of its name.
pub(super) fn show(args: &ShowArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    let (registry, built) = super::report::collect(&args.report, verbose, session, term);
    let wanted = canonical_name(&args.package);
    let Some(index) = built
        .report
        .plugins
        .iter()
        .position(|d| canonical_name(&d.name) == wanted)
    else {
        // Every package `plugin list` lists, each a name `show` takes: agent-env's own built-ins
        // (`agentenv-framework`, a row of no plugin) among them, as `show` diagnoses them too.
        let mut names: Vec<&str> = Vec::new();
        for row in &built.report.plugins {
            if !names.contains(&row.name.as_str()) {
                names.push(&row.name);
            }
        }
        return Err(Failure::new(
            crate::discovery::not_installed::NotInstalled::new(&args.package, names).to_string(),
        ));
    };
    // The show document has no key for them: a person reads them on stderr, as `list` prints them.
    let warnings = crate::report::unused::warnings(registry, Some(wanted.as_str()))
        .into_iter()
        .chain(crate::report::provides_nothing::warnings(
            registry,
            Some(wanted.as_str()),
        ))
        .chain(crate::report::outdated_pins::warnings(
            registry,
            &session.paths().plugins_dir(),
            Some(wanted.as_str()),
        ));
    for w in warnings {
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
    // Said of a plugin whose root options can choose the config; agent-env's own built-ins (a row of
    // no plugin) have none.
    let config_effect = match source {
        RowSource::Plugin(i) => documents::config_effect(
            registry.discovery.plugins[i]
                .manifest
                .provides
                .get("cli_root_options")
                .into_iter()
                .flat_map(|options| options.keys().map(String::as_str)),
        ),
        _ => None,
    };
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
