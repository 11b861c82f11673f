//! The registry build: classify every claim in precedence order, start what needs starting, validate the
//! answers, then let config release or refuse names.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use agent_env_protocol::names::{report_group, GROUPS, TYPE_GROUPS};

use super::config_input::ConfigState;
use super::load::{LoadFailure, Probe, Prober};
use super::outcome::{codes, ClaimOutcome, ClaimRecord, Diagnostic, Status};
use super::resolve::{conflicted, launch_of, Entry, Registry};
use super::{bundle_claims, config_input, config_merge, validate};
use crate::builtin_names;
use crate::compat;
use crate::discovery::Discovery;

/// Which plugins a build starts.
#[derive(Clone, Copy)]
pub enum Loading<'a> {
    /// None: claims that need a process are `unloaded` (`--no-load`).
    None,
    /// Every plugin with a claim left to load, and every plugin config names (the report).
    All(&'a dyn Prober),
    /// Only the plugins config names, to learn their classes' types; other plugins' names are taken on
    /// trust from their manifests and checked when first used (a run).
    ConfigNamed(&'a dyn Prober),
}

/// The reason an unloaded claim carries.
pub const NOT_LOADED_REASON: &str = "not imported (installed metadata only)";

/// Groups that read a table of the config file (so an unreadable file fails their build).
const CONFIG_GROUPS: [&str; 6] = [
    "envs",
    "artifacts",
    "task_steps",
    "sandbox_providers",
    "state_providers",
    "explorer_plugins",
];

pub(super) fn build(
    discovery: Discovery,
    config: ConfigState,
    loading: Loading<'_>,
    home: Option<PathBuf>,
) -> Registry {
    let mut reg = Registry {
        home,
        claims: collect_claims(&discovery),
        discovery,
        config,
        loaded: matches!(loading, Loading::All(_)),
        group_errors: BTreeMap::new(),
        probes: HashMap::new(),
        warnings: Vec::new(),
        entries: HashMap::new(),
        failures: HashMap::new(),
    };
    for group in GROUPS {
        for name in builtin_names::names(group) {
            if group != "cli_root_options" {
                reg.entries
                    .insert((group, name.to_string()), Entry::BuiltIn { config: None });
            }
        }
    }
    let incompatible: Vec<Option<String>> = reg
        .discovery
        .plugins
        .iter()
        .map(|p| compat::incompatibility(&p.manifest))
        .collect();

    // Built-in clash, incompatible core and conflict need no process; what is left are the candidates.
    let mut candidates: Vec<usize> = Vec::new();
    for group in GROUPS {
        match group {
            "bundles" => bundle_claims::classify(&mut reg, &incompatible),
            _ => candidates.extend(classify_before_load(&mut reg, group, &incompatible)),
        }
    }
    group_errors_from_config(&mut reg);

    match loading {
        Loading::None => {
            for &i in &candidates {
                reg.claims[i].outcome =
                    ClaimOutcome::with(Status::Unloaded, codes::NOT_LOADED, NOT_LOADED_REASON);
            }
        }
        Loading::All(prober) | Loading::ConfigNamed(prober) => {
            let all = matches!(loading, Loading::All(_));
            start_plugins(&mut reg, prober, if all { &candidates } else { &[] });
            for &i in &candidates {
                if all || reg.probes.contains_key(&reg.claims[i].plugin) {
                    load_and_validate(&mut reg, i);
                } else {
                    register_claim(&mut reg, i);
                }
            }
            settle_cli_commands(&mut reg, &candidates);
            config_merge::merge(&mut reg);
            check_artifact_extra_names(&mut reg);
            super::type_aliases::apply(&mut reg);
            if all {
                bundle_claims::check_types(&mut reg);
            }
        }
    }
    block_groups_with_errors(&mut reg);
    reg
}

fn collect_claims(discovery: &Discovery) -> Vec<ClaimRecord> {
    let mut claims = Vec::new();
    for (plugin, p) in discovery.plugins.iter().enumerate() {
        for (group, name, entry) in p.manifest.contributions() {
            let Some(group) = GROUPS.iter().find(|g| **g == group).copied() else {
                continue;
            };
            claims.push(ClaimRecord {
                plugin,
                group,
                name: name.to_string(),
                class: entry.class.clone(),
                outcome: ClaimOutcome::active(),
            });
        }
    }
    claims
}

/// The flag a root option's manifest name stands for: `tenant` is `--tenant`, `t` is `-t`, `--x` is itself.
pub fn root_flag(name: &str) -> String {
    if name.starts_with('-') {
        name.to_string()
    } else if name.chars().count() == 1 {
        format!("-{name}")
    } else {
        format!("--{name}")
    }
}

/// Indices of a group's claims, grouped by the key they compete for, in sorted claim order
/// (name, package as spelled, value).
fn claims_by_key(reg: &Registry, group: &str) -> BTreeMap<String, Vec<usize>> {
    let mut indices: Vec<usize> = (0..reg.claims.len())
        .filter(|&i| reg.claims[i].group == group)
        .collect();
    indices.sort_by(|&a, &b| {
        let (ca, cb) = (&reg.claims[a], &reg.claims[b]);
        let pa = &reg.discovery.plugins[ca.plugin].manifest.name;
        let pb = &reg.discovery.plugins[cb.plugin].manifest.name;
        (&ca.name, pa, &ca.class).cmp(&(&cb.name, pb, &cb.class))
    });
    let mut by_key: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for i in indices {
        let name = &reg.claims[i].name;
        let key = if group == "cli_root_options" {
            root_flag(name)
        } else {
            name.clone()
        };
        by_key.entry(key).or_default().push(i);
    }
    by_key
}

/// Why a plugin may not take a name the Python agent-env has built in and this one does not have
/// (`prompt_agent`): the claim is skipped all the same, and the plugin has to be renamed.
fn reserved_for_python(group: &str) -> String {
    let what = match group {
        "task_steps" => "step",
        "envs" => "env type",
        "sandbox_providers" => "sandbox provider",
        "state_providers" => "state provider",
        "env_providers" => "environment provider",
        "artifacts" => "artifact type",
        _ => "name",
    };
    format!(
        "reserved for a built-in {what} of the Python agent-env, which this agent-env does not have; the plugin must use another name"
    )
}

/// Built-in clash, incompatible core and conflict for one group; returns the claims left to load.
fn classify_before_load(
    reg: &mut Registry,
    group: &'static str,
    incompatible: &[Option<String>],
) -> Vec<usize> {
    let rg = report_group(group);
    let mut candidates = Vec::new();
    for (key, claims) in claims_by_key(reg, group) {
        let labels: Vec<String> = claims.iter().map(|&i| reg.label(&reg.claims[i])).collect();
        if builtin_names::is_builtin(group, &key) {
            let only_in_python = builtin_names::only_in_python(group, &key);
            let reason = match group {
                "cli_plugins" => format!("clashes with existing command '{key}'"),
                "cli_root_options" => format!("clashes with core root option '{key}'"),
                _ if only_in_python => reserved_for_python(group),
                _ => "clashes with a built-in".to_string(),
            };
            for &i in &claims {
                reg.claims[i].outcome =
                    ClaimOutcome::with(Status::Skipped, codes::BUILTIN_NAME, &reason);
            }
            // A CLI name is said per package; any other, once for the claims on it, with the
            // failure a lookup of the name reports.
            let cli_clash = match group {
                "cli_plugins" => Some(("CLI plugin", "existing command")),
                "cli_root_options" => Some(("CLI root option", "core root option")),
                _ => None,
            };
            if let Some((what, existing)) = cli_clash {
                for &i in &claims {
                    let dist = &reg.discovery.plugins[reg.claims[i].plugin].manifest.name;
                    reg.warnings.push(format!(
                        "{what} '{key}' from '{dist}' clashes with {existing} '{key}' and was skipped"
                    ));
                }
                continue;
            }
            let labels = labels.join("; ");
            let (warning, failure) = match only_in_python {
                true => (
                    format!("Plugin {labels} in {rg} was skipped: the name is {reason}"),
                    format!("registered by {labels}, but the name is {reason}"),
                ),
                false => (
                    format!("Plugin {labels} in {rg} clashes with a built-in and was skipped"),
                    format!("registered by {labels} but clashes with a built-in"),
                ),
            };
            reg.warnings.push(warning);
            reg.failures.insert((group, key.clone()), failure);
            continue;
        }
        let mut usable = Vec::new();
        let mut first_unmet: Option<(usize, String)> = None;
        for (&i, label) in claims.iter().zip(&labels) {
            match &incompatible[reg.claims[i].plugin] {
                Some(needs) => {
                    reg.claims[i].outcome =
                        ClaimOutcome::with(Status::Failed, codes::INCOMPATIBLE_CORE, needs.clone());
                    reg.warnings
                        .push(format!("Plugin {label} in {rg} was skipped: it {needs}"));
                    first_unmet.get_or_insert((i, needs.clone()));
                }
                None => usable.push(i),
            }
        }
        if usable.is_empty() {
            if let Some((i, needs)) = first_unmet {
                let label = reg.label(&reg.claims[i]);
                reg.failures.insert(
                    (group, key.clone()),
                    format!("registered by {label} but {needs}"),
                );
            }
            continue;
        }
        // CLI commands: the first that loads wins (settled after loading).
        if usable.len() > 1 && group != "cli_plugins" {
            mark_conflict(reg, group, &key, &usable);
            continue;
        }
        candidates.extend(usable);
    }
    candidates
}

fn mark_conflict(reg: &mut Registry, group: &'static str, key: &str, usable: &[usize]) {
    let rg = report_group(group);
    let labels: Vec<String> = usable.iter().map(|&i| reg.label(&reg.claims[i])).collect();
    let packages: BTreeSet<(String, String)> = usable
        .iter()
        .map(|&i| reg.package_of(&reg.claims[i]))
        .collect();
    let same_package = packages.len() == 1;
    for &i in usable {
        let others: Vec<usize> = usable.iter().copied().filter(|&j| j != i).collect();
        let other_labels: Vec<String> = others.iter().map(|&j| reg.label(&reg.claims[j])).collect();
        let reason = if group == "cli_root_options" {
            let rivals: Vec<String> = others
                .iter()
                .map(|&j| {
                    let c = &reg.claims[j];
                    let dist = &reg.discovery.plugins[c.plugin].manifest.name;
                    format!("'{}' from '{dist}'", c.name)
                })
                .collect();
            format!(
                "root option '{key}' is also registered by {}",
                rivals.join(" and ")
            )
        } else if same_package {
            format!(
                "this package declares the name more than once: {}; report it to its author",
                other_labels.join(", ")
            )
        } else {
            format!(
                "also registered by {}; {}",
                other_labels.join(", "),
                how_to_remove_all_but_one(reg, usable)
            )
        };
        let conflicts_with = others
            .iter()
            .map(|&j| reg.claimant(&reg.claims[j]))
            .collect();
        let mut outcome = ClaimOutcome::with(Status::Conflict, codes::NAME_CONFLICT, reason);
        outcome.conflicts_with = conflicts_with;
        reg.claims[i].outcome = outcome;
    }
    let message = if same_package {
        let c = &reg.claims[usable[0]];
        let m = &reg.discovery.plugins[c.plugin].manifest;
        format!(
            "{} {} registers '{key}' in {rg} {} times: {}. Report it to the package's author.",
            m.name,
            m.version,
            usable.len(),
            labels.join("; ")
        )
    } else {
        let advice = how_to_remove_all_but_one(reg, usable);
        let mut advice = advice.chars();
        let first = advice.next().map(|c| c.to_uppercase().to_string());
        format!(
            "{} {} register '{key}' in {rg}: {}. {}{}.",
            usable.len(),
            if any_on_path(reg, usable) {
                "plugins"
            } else {
                "installed plugins"
            },
            labels.join("; "),
            first.unwrap_or_default(),
            advice.as_str()
        )
    };
    reg.warnings.push(message.clone());
    reg.failures.insert((group, key.to_string()), message);
}

/// How to leave one of the packages behind the conflicting `claims`: `plugin remove` for those in the
/// plugins directory; a package found through `PATH` was not installed by agent-env, which cannot
/// remove it, so its manifest is named.
fn how_to_remove_all_but_one(reg: &Registry, claims: &[usize]) -> String {
    let plugins: BTreeSet<usize> = claims.iter().map(|&i| reg.claims[i].plugin).collect();
    let on_path: Vec<String> = plugins
        .iter()
        .map(|&p| &reg.discovery.plugins[p])
        .filter(|p| p.source != crate::discovery::Source::PluginsDir)
        .map(|p| format!("{} ({})", p.manifest.name, p.manifest.path.display()))
        .collect();
    if on_path.is_empty() {
        return "remove all but one with `agent-env plugin remove <package>`".to_string();
    }
    let (was, them) = match on_path.len() {
        1 => ("was", "it"),
        _ => ("were", "them"),
    };
    let found = format!(
        "{} {was} found through PATH and agent-env did not install {them}: remove {them} with the \
         tool that installed {them}, or take {them} off PATH",
        on_path.join(", ")
    );
    if on_path.len() == plugins.len() {
        return format!("remove all but one: {found}");
    }
    format!(
        "remove all but one: `agent-env plugin remove <package>` removes a package it installed, but \
         {found}"
    )
}

/// Whether any of the plugins behind `claims` was found through `PATH` (agent-env did not install
/// it).
fn any_on_path(reg: &Registry, claims: &[usize]) -> bool {
    claims.iter().any(|&i| {
        reg.discovery.plugins[reg.claims[i].plugin].source != crate::discovery::Source::PluginsDir
    })
}

/// Starts (in parallel) every plugin that has a claim left to load or that config names. A plugin whose
/// `[plugins.<package>]` table can't be read (not a table, two spellings, a reference that does not
/// resolve) is not started: that is its failure, `load-failed` naming the table, and no other plugin's.
fn start_plugins(reg: &mut Registry, prober: &dyn Prober, candidates: &[usize]) {
    let mut plugins: BTreeSet<usize> = candidates.iter().map(|&i| reg.claims[i].plugin).collect();
    plugins.extend(config_merge::plugins_named_by_config(reg));
    let mut started = Vec::with_capacity(plugins.len());
    let mut launches = Vec::with_capacity(plugins.len());
    for p in plugins {
        let mut launch = launch_of(&reg.discovery.plugins[p].manifest);
        match config_input::settings(&reg.config, &launch.package) {
            Ok(settings) => {
                launch.settings = settings;
                started.push(p);
                launches.push(launch);
            }
            Err(e) => {
                let failure = LoadFailure {
                    code: codes::LOAD_FAILED.to_string(),
                    message: format!("ConfigError: {e}"),
                };
                let argv = crate::config::mask::mask_args(&launch.argv);
                reg.probes.insert(p, Probe::not_started(argv, failure));
            }
        }
    }
    let probes = prober.probe_all(&launches);
    for (p, probe) in started.into_iter().zip(probes) {
        reg.probes.insert(p, probe);
    }
}

/// Gives claim `i`'s name to its plugin (root options are not names; they are left out). Lazy loading
/// calls it before the plugin's process says otherwise, loading once the handshake checks out.
fn register_claim(reg: &mut Registry, i: usize) {
    let claim = &reg.claims[i];
    if claim.group != "cli_root_options" {
        reg.entries.insert(
            (claim.group, claim.name.clone()),
            Entry::Plugin {
                plugin: claim.plugin,
                class: claim.class.clone(),
                config: None,
                from_config: None,
            },
        );
    }
}

fn load_and_validate(reg: &mut Registry, i: usize) {
    let claim = reg.claims[i].clone();
    let label = reg.label(&claim);
    let rg = report_group(claim.group);
    let Some(probe) = reg.probes.get(&claim.plugin) else {
        reg.claims[i].outcome = ClaimOutcome::with(
            Status::Unloaded,
            codes::STATUS_UNKNOWN,
            "its status could not be determined",
        );
        return;
    };
    let manifest_name = &reg.discovery.plugins[claim.plugin].manifest.name;
    let checked = match &probe.handshake {
        Err(failure) => Err(ClaimFailure::Process(
            failure.code.clone(),
            failure.message.clone(),
        )),
        Ok(answer) => validate::check_package(manifest_name, answer)
            .and_then(|()| {
                validate::find_contribution(claim.group, &claim.name, &claim.class, answer)
            })
            .map_err(ClaimFailure::Invalid)
            .and_then(|info| {
                validate::check_class(claim.group, &claim.name, &claim.class, info).map_err(|m| {
                    let problem = validate::class_problem(claim.group, &m);
                    match validate::not_click(claim.group) {
                        Some(kind) => ClaimFailure::NotClick(kind, problem),
                        None => ClaimFailure::Invalid(problem),
                    }
                })
            }),
    };
    if claim.group == "cli_root_options" {
        // The plugin did not start, or its callback failed when called with the flag absent.
        let failed = match &checked {
            Err(ClaimFailure::Process(_, message)) => Some(message.clone()),
            Ok(()) => probe.root_option_failures.get(&claim.name).cloned(),
            Err(_) => None,
        };
        if let Some(message) = failed {
            let flag = root_flag(&claim.name);
            reg.claims[i].outcome = ClaimOutcome::with(
                Status::Failed,
                codes::LOAD_FAILED,
                format!("its callback failed with the flag absent: {message}"),
            );
            reg.warnings.push(format!(
                "CLI root option '{flag}' from '{manifest_name}' failed with its flag absent and was skipped: {message}"
            ));
            reg.failures.entry((claim.group, flag)).or_insert(format!(
                "registered by {label} but its callback failed with the flag absent: {message}"
            ));
            return;
        }
    }
    match checked {
        Ok(()) => register_claim(reg, i),
        Err(failure) => {
            // A CLI class of the wrong shape is `is not a click.Command`, with no "failed to load".
            let (code, message) = failure.code_and_message();
            let reason = match failure {
                ClaimFailure::NotClick(..) => message.to_string(),
                _ => format!("failed to load: {message}"),
            };
            reg.claims[i].outcome = ClaimOutcome::with(Status::Failed, code, &reason);
            let warning = match (claim.group, &failure) {
                ("cli_plugins", ClaimFailure::NotClick(kind, _)) => format!(
                    "CLI plugin '{}' from '{manifest_name}' {kind} and was skipped",
                    claim.name
                ),
                ("cli_root_options", ClaimFailure::NotClick(kind, _)) => format!(
                    "CLI root option '{}' from '{manifest_name}' {kind} and was skipped",
                    claim.name
                ),
                ("cli_plugins", _) => format!(
                    "CLI plugin '{}' from '{manifest_name}' failed to load and was skipped: {message}",
                    claim.name
                ),
                _ => format!("Plugin {label} in {rg} failed to load and was skipped: {message}"),
            };
            reg.warnings.push(warning);
            // A CLI command another claimant may still take is settled after every claim is loaded.
            reg.failures
                .entry((claim.group, claim.name.clone()))
                .or_insert(format!("registered by {label} but {reason}"));
        }
    }
}

/// Why a claimed contribution did not load.
enum ClaimFailure {
    /// The plugin did not start or answer: its failure code and message.
    Process(String, String),
    /// It answered, but the entry is not what the manifest claims (`INVALID_PLUGIN`).
    Invalid(String),
    /// A CLI class of the wrong shape: what it is not (`is not a click.Command`) and the whole
    /// message (with what is missing). Also `INVALID_PLUGIN`, but reported without "failed to load".
    NotClick(&'static str, String),
}

impl ClaimFailure {
    fn code_and_message(&self) -> (&str, &str) {
        match self {
            ClaimFailure::Process(code, message) => (code, message),
            ClaimFailure::Invalid(message) | ClaimFailure::NotClick(_, message) => {
                (codes::INVALID_PLUGIN, message)
            }
        }
    }
}

/// CLI commands: the first claimant (in sorted order) that loaded keeps the name; later ones are skipped.
fn settle_cli_commands(reg: &mut Registry, candidates: &[usize]) {
    let mut winners: HashMap<String, usize> = HashMap::new();
    let mut ordered: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&i| reg.claims[i].group == "cli_plugins")
        .collect();
    ordered.sort_by(|&a, &b| {
        let (ca, cb) = (&reg.claims[a], &reg.claims[b]);
        let pa = &reg.discovery.plugins[ca.plugin].manifest.name;
        let pb = &reg.discovery.plugins[cb.plugin].manifest.name;
        (&ca.name, pa, &ca.class).cmp(&(&cb.name, pb, &cb.class))
    });
    for i in ordered {
        if reg.claims[i].outcome.status != Status::Active {
            continue;
        }
        let name = reg.claims[i].name.clone();
        match winners.get(&name) {
            None => {
                winners.insert(name.clone(), i);
                reg.failures.remove(&("cli_plugins", name));
            }
            Some(&w) => {
                let winner = reg.claims[w].clone();
                let dist = reg.discovery.plugins[winner.plugin].manifest.name.clone();
                let mut outcome = ClaimOutcome::with(
                    Status::Skipped,
                    codes::NAME_CONFLICT,
                    format!(
                        "clashes with existing command '{name}' from plugin '{name}' from '{dist}'"
                    ),
                );
                outcome.conflicts_with = vec![reg.claimant(&winner)];
                reg.claims[i].outcome = outcome;
                let mine = reg.discovery.plugins[reg.claims[i].plugin]
                    .manifest
                    .name
                    .clone();
                reg.warnings.push(format!(
                    "CLI plugin '{name}' from '{mine}' clashes with existing command '{name}' from plugin '{name}' from '{dist}' and was skipped"
                ));
            }
        }
    }
}

/// A missing `AGENT_ENV_CONFIG` file fails every type group that has claims, loaded or not; an unreadable
/// file fails, when loading, every such group that reads a table of it.
fn group_errors_from_config(reg: &mut Registry) {
    let Some(error) = reg.config.error.clone() else {
        return;
    };
    let applies: &[&'static str] = match error.code.as_str() {
        codes::CONFIG_NOT_FOUND => &TYPE_GROUPS,
        codes::CONFIG_UNREADABLE => &CONFIG_GROUPS,
        _ => &[],
    };
    for &group in applies {
        if !reg.claims.iter().any(|c| c.group == group) {
            continue;
        }
        reg.group_errors.insert(
            group,
            Diagnostic {
                code: error.code.clone(),
                reason: format!("ConfigError: {}", error.reason),
            },
        );
    }
    if error.code == codes::CONFIG_UNREADABLE && !reg.loaded {
        // Reading the file is part of a group's build, which --no-load never does.
        reg.group_errors
            .retain(|_, d| d.code != codes::CONFIG_UNREADABLE);
    }
}

/// A group whose build fails blocks every claim in it that had not already failed, been skipped or conflicted.
fn block_groups_with_errors(reg: &mut Registry) {
    for claim in &mut reg.claims {
        let Some(error) = reg.group_errors.get(claim.group) else {
            continue;
        };
        if matches!(
            claim.outcome.status,
            Status::Failed | Status::Skipped | Status::Conflict
        ) {
            continue;
        }
        claim.outcome = ClaimOutcome::with(Status::Blocked, &error.code, &error.reason);
    }
}

/// Artifacts may register extra names (a legacy spelling); the class's own type must resolve to it.
fn check_artifact_extra_names(reg: &mut Registry) {
    for i in 0..reg.claims.len() {
        let claim = reg.claims[i].clone();
        if claim.group != "artifacts" || claim.outcome.status != Status::Active {
            continue;
        }
        let Some(Ok(answer)) = reg.probes.get(&claim.plugin).map(|p| &p.handshake) else {
            continue;
        };
        let Some(info) = answer
            .contributions
            .iter()
            .find(|c| c.group == "artifacts" && c.name == claim.name)
        else {
            continue;
        };
        let own = info.type_name.clone();
        if own == claim.name {
            continue;
        }
        let problem = if builtin_names::is_builtin("artifacts", &own) {
            Some(format!(
                "its class inherits the built-in type '{own}'; give it its own 'type' field default"
            ))
        } else if let Some(conflict) = reg
            .failures
            .get(&("artifacts", own.clone()))
            .filter(|_| conflicted(reg, "artifacts", &own))
        {
            Some(format!(
                "its class writes type '{own}', which is left out: {conflict}"
            ))
        } else {
            match reg.entries.get(&("artifacts", own.clone())) {
                None => Some(format!("its class writes type '{own}', but nothing registers it")),
                Some(Entry::Plugin { plugin, class, .. })
                    if *plugin == claim.plugin && *class == claim.class =>
                {
                    None
                }
                Some(Entry::Plugin { plugin, class, .. }) => {
                    let package = &reg.discovery.plugins[*plugin].manifest.name;
                    Some(format!(
                        "its class writes type '{own}', but it resolves to {package}:{class}; register that name to the class too"
                    ))
                }
                Some(Entry::BuiltIn { .. }) => Some(format!(
                    "its class inherits the built-in type '{own}'; give it its own 'type' field default"
                )),
            }
        };
        if let Some(problem) = problem {
            let label = reg.label(&claim);
            reg.entries.remove(&("artifacts", claim.name.clone()));
            reg.failures.insert(
                ("artifacts", claim.name.clone()),
                format!("registered by {label} but {problem}"),
            );
            reg.claims[i].outcome =
                ClaimOutcome::with(Status::Failed, codes::INVALID_PLUGIN, problem);
        }
    }
}
