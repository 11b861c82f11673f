//! Applying root options: the plugin of a flag that was given (or that its manifest marks
//! `always = true`) is started and asked `cli.root_option`; a `config_path` in its answer becomes
//! `AGENT_ENV_CONFIG` for the rest of the invocation (and for every plugin it starts).
//!
//! A root option whose flag is absent costs nothing unless it is `always`: no plugin is started.
//! `plugin list` and `plugin check` call every root option with its flag absent, so a callback that
//! fails then is still reported (`failed` / `load-failed`).

use std::sync::Arc;

use agent_env_protocol::methods::{RootOptionParams, RootOptionResult, CLI_ROOT_OPTION};
use clap::parser::ValueSource;
use clap::ArgMatches;
use serde_json::Map;

use super::tree::{PluginCli, RootOption};
use crate::session::Session;
use agent_env_host::{HostError, NoServices, PluginHost, SpawnSpec};

/// The value a boolean root option is sent when it is given.
pub const SWITCH_VALUE: &str = "true";

/// Why a given root option stopped the invocation.
#[derive(Debug, thiserror::Error)]
#[error("CLI root option '{flag}' from '{package}' failed: {reason}")]
pub struct RootOptionFailed {
    pub flag: String,
    pub package: String,
    pub reason: String,
}

/// What one call of a root option's plugin gave.
fn call(
    host: &PluginHost,
    cli: &PluginCli,
    option: &RootOption,
    value: Option<String>,
) -> Result<RootOptionResult, String> {
    let manifest = cli.manifest(option.plugin);
    let spec = SpawnSpec::from_manifest(manifest, Map::new());
    let process = host.connect(&spec).map_err(|e| e.to_string())?;
    let params = RootOptionParams {
        flag: option.flag.clone(),
        value,
    };
    let params = serde_json::to_value(params).map_err(|e| e.to_string())?;
    let answer = process
        .call(CLI_ROOT_OPTION, params)
        .map_err(|e: HostError| match e.rpc_error() {
            // The plugin's own message is what the user needs; the rest names the plugin already.
            Some(rpc) => rpc.message.clone(),
            None => e.to_string(),
        })?;
    serde_json::from_value(answer).map_err(|e| {
        format!(
            "it answered {CLI_ROOT_OPTION} with a result of the wrong shape ({e}); expected {{\"config_path\": ...}} or {{}}"
        )
    })
}

/// Calls the root options the command line gives (and the `always` ones), in flag order. Returns the
/// warnings of `always` options that failed with their flag absent; a given one that fails is an error.
pub fn apply(
    cli: &PluginCli,
    matches: &ArgMatches,
    session: &Session,
) -> Result<Vec<String>, RootOptionFailed> {
    let wanted: Vec<(&RootOption, Option<String>)> = cli
        .root_options
        .iter()
        .filter_map(|option| {
            let given = matches.value_source(&option.flag) == Some(ValueSource::CommandLine);
            let value = match (&option.value, given) {
                (Some(_), true) => matches.get_one::<String>(&option.flag).cloned(),
                (None, true) => Some(SWITCH_VALUE.to_string()),
                (_, false) => None,
            };
            (given || option.always).then_some((option, value))
        })
        .collect();
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let host = session.plugin_host(Arc::new(NoServices));
    let mut warnings = Vec::new();
    let mut config_path = None;
    for (option, value) in wanted {
        let package = cli.manifest(option.plugin).name.clone();
        let given = value.is_some();
        match call(&host, cli, option, value) {
            Ok(answer) => {
                if let Some(path) = answer.config_path {
                    config_path = Some((path, option.flag.clone(), package));
                }
            }
            Err(reason) if given => {
                return Err(RootOptionFailed {
                    flag: option.flag.clone(),
                    package,
                    reason,
                })
            }
            Err(reason) => warnings.push(format!(
                "CLI root option '{}' from '{package}' failed with its flag absent and was skipped: {reason}",
                option.flag
            )),
        }
    }
    host.shutdown_all();
    if let Some((path, flag, package)) = config_path {
        // The session tells the plugins it starts later (AGENT_ENV_CONFIG), and refuses the file if
        // anything read another one first.
        let chosen_by = format!("CLI root option '{flag}' from '{package}'");
        if session
            .choose_config(std::path::Path::new(&path), &chosen_by)
            .is_err()
        {
            return Err(RootOptionFailed {
                flag,
                package,
                reason: crate::config::document::AlreadyRead.to_string(),
            });
        }
    }
    Ok(warnings)
}
