//! The plugin part of the command tree, from manifests only (no plugin is started): the commands of
//! `[provides.cli_plugins]` and the flags of `[provides.cli_root_options]` that survive the clash rules.
//!
//! The rules are the registry's own ([`crate::registry`]): a core command or flag is `skipped` /
//! `builtin-name`, an incompatible package is `failed`, two root options on one flag are both
//! `conflict`. For two plugins on one command name the first in sorted claim order wins; here, where
//! nothing is started, the others are kept in order as fallbacks for when the first cannot start
//! (the report, which starts them, calls the first that loads the winner: the same choice).

use std::collections::BTreeMap;

use agent_env_protocol::manifest::Manifest;

use std::sync::Arc;

use crate::discovery::Discovery;
use crate::registry::outcome::Status;
use crate::registry::{ConfigState, Loading, Registry};

const COMMANDS: &str = "cli_plugins";
const ROOT_OPTIONS: &str = "cli_root_options";

/// `agent-env <name> …`, run by the first claimant that starts.
#[derive(Debug, Clone)]
pub struct PluginCommand {
    pub name: String,
    pub description: Option<String>,
    /// Indices into [`PluginCli::discovery`], in sorted claim order.
    pub claimants: Vec<usize>,
}

/// A root flag such as `--tenant`, answered by one plugin.
#[derive(Debug, Clone)]
pub struct RootOption {
    /// `--tenant` (or `-t` for a one-letter name).
    pub flag: String,
    /// The manifest name (`tenant`).
    pub name: String,
    pub plugin: usize,
    pub description: Option<String>,
    /// `Some(metavar)` when the flag takes a value.
    pub value: Option<String>,
    /// Called even when the flag is absent.
    pub always: bool,
}

/// The commands and root options plugins add, and the warnings building them gave.
#[derive(Debug, Clone, Default)]
pub struct PluginCli {
    /// What discovery found, every group kept: a core command run from here reuses it instead of
    /// scanning the manifests again.
    pub discovery: Arc<Discovery>,
    pub commands: Vec<PluginCommand>,
    pub root_options: Vec<RootOption>,
    /// Lines for stderr, each to be prefixed `Warning: `.
    pub warnings: Vec<String>,
}

impl PluginCli {
    /// Builds from what discovery found.
    pub fn from_discovery(discovery: Arc<Discovery>) -> PluginCli {
        let registry = Registry::build(
            only_cli_groups(Discovery::clone(&discovery)),
            ConfigState::default(),
            Loading::None,
            None,
        );
        let mut cli = PluginCli {
            warnings: registry.warnings.clone(),
            ..PluginCli::default()
        };
        cli.commands = commands(&registry, &mut cli.warnings);
        cli.root_options = root_options(&registry);
        cli.discovery = discovery;
        cli
    }

    pub fn command(&self, name: &str) -> Option<&PluginCommand> {
        self.commands.iter().find(|c| c.name == name)
    }

    pub fn manifest(&self, plugin: usize) -> &Manifest {
        &self.discovery.plugins[plugin].manifest
    }

    /// The root option whose flag is `flag` (`--tenant`, or `-t`).
    pub fn root_option(&self, flag: &str) -> Option<&RootOption> {
        self.root_options.iter().find(|o| o.flag == flag)
    }
}

/// The same discovery with every other group dropped, so that building it reads no bundle folder.
fn only_cli_groups(mut discovery: Discovery) -> Discovery {
    for plugin in &mut discovery.plugins {
        plugin
            .manifest
            .provides
            .retain(|group, _| group == COMMANDS || group == ROOT_OPTIONS);
    }
    discovery
}

/// Claims that are still candidates (built without loading, they are `unloaded`).
fn usable(status: Status) -> bool {
    matches!(status, Status::Unloaded | Status::Active)
}

fn sort_key(reg: &Registry, i: usize) -> (String, String, String) {
    let c = &reg.claims[i];
    let package = reg.discovery.plugins[c.plugin].manifest.name.clone();
    (c.name.clone(), package, c.class.clone())
}

fn commands(reg: &Registry, warnings: &mut Vec<String>) -> Vec<PluginCommand> {
    let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, claim) in reg.claims.iter().enumerate() {
        if claim.group == COMMANDS && usable(claim.outcome.status) {
            by_name.entry(claim.name.clone()).or_default().push(i);
        }
    }
    by_name
        .into_iter()
        .map(|(name, mut claims)| {
            claims.sort_by_key(|&i| sort_key(reg, i));
            let winner = &reg.claims[claims[0]];
            let winner_dist = &reg.discovery.plugins[winner.plugin].manifest.name;
            for &i in &claims[1..] {
                let dist = &reg.discovery.plugins[reg.claims[i].plugin].manifest.name;
                warnings.push(format!(
                    "CLI plugin '{name}' from '{dist}' clashes with existing command '{name}' from plugin '{name}' from '{winner_dist}' and was skipped"
                ));
            }
            let description = reg.discovery.plugins[winner.plugin]
                .manifest
                .provides
                .get(COMMANDS)
                .and_then(|g| g.get(&name))
                .and_then(|e| e.description.clone());
            PluginCommand {
                name,
                description,
                claimants: claims.iter().map(|&i| reg.claims[i].plugin).collect(),
            }
        })
        .collect()
}

fn root_options(reg: &Registry) -> Vec<RootOption> {
    let mut options: Vec<RootOption> = reg
        .claims
        .iter()
        .filter(|c| c.group == ROOT_OPTIONS && usable(c.outcome.status))
        .filter_map(|c| {
            let entry = reg.discovery.plugins[c.plugin]
                .manifest
                .provides
                .get(ROOT_OPTIONS)?
                .get(&c.name)?;
            Some(RootOption {
                flag: crate::registry::root_flag(&c.name),
                name: c.name.clone(),
                plugin: c.plugin,
                description: entry.description.clone(),
                value: entry.value.clone(),
                always: entry.always,
            })
        })
        .collect();
    options.sort_by(|a, b| a.flag.cmp(&b.flag));
    options
}
