//! `agent-env config show | explain | check`: read-only views of `.agentenv/config.toml`.

use crate::config::locate::CONFIG_VAR;
use crate::config::plugins::InstalledPackage;
use crate::config::store_builder::StoresBuilder;
use crate::config::{check, explain, sections::process_env, show, sources, ConfigDocument};
use crate::discovery::Discovery;
use agent_env_protocol::manifest::Manifest;
use clap::{Args, Subcommand};

#[derive(Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub command: ConfigCommand,
}

#[derive(Subcommand)]
pub enum ConfigCommand {
    /// Show every section, where its value comes from and what it shadows.
    Show {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Explain one section or TOML path (`document`, `stores.document.config.path`, `plugins.<package>`).
    Explain {
        /// A section name or a dotted TOML path.
        path: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List every path discovery considers, with an arrow on the one it uses.
    Debug {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List every layer a setting can come from, lowest precedence first.
    Sources {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check every configured store and registration table, reporting every problem at once.
    Check {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// The installed packages that own `[plugins.<package>]` tables, from their manifests (nothing is run). A
/// manifest that provides no contribution is installed but not a plugin.
fn installed_packages(manifests: &[Manifest]) -> Vec<InstalledPackage> {
    manifests
        .iter()
        .map(|m| InstalledPackage {
            is_plugin: m.provides.values().any(|group| !group.is_empty()),
            name: m.name.clone(),
            version: m.version.clone(),
        })
        .collect()
}

/// The manifests of the installed plugins (read only; nothing is started), from `found` when this
/// invocation has discovered them already.
fn installed_manifests(found: Option<Discovery>) -> Vec<Manifest> {
    found
        .unwrap_or_else(|| crate::discovery::discover(&crate::discovery::SearchPath::from_env()))
        .plugins
        .into_iter()
        .map(|p| p.manifest)
        .collect()
}

pub fn run(args: ConfigArgs, _verbose: bool, found: Option<Discovery>) -> i32 {
    let doc = ConfigDocument::shared();
    let state_root = crate::paths::state_root();
    match args.command {
        ConfigCommand::Show { json } => {
            let report = show::show(
                doc,
                &installed_packages(&installed_manifests(found)),
                &process_env,
                &state_root,
            );
            if json {
                println!("{}", show::render_json(&report));
            } else {
                print!("{}", show::render_text(&report));
            }
            0
        }
        ConfigCommand::Explain { path, json } => {
            let answer = explain::explain(
                doc,
                &path,
                &installed_packages(&installed_manifests(found)),
                &process_env,
                &state_root,
            );
            if json {
                println!("{}", explain::render_json(&answer));
            } else {
                print!("{}", explain::render_text(&answer));
            }
            0
        }
        ConfigCommand::Debug { json } => {
            let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
            let candidates = crate::config::locate::candidates(std::env::var_os(CONFIG_VAR), &cwd);
            if json {
                print_json(&candidates);
            } else {
                print!("{}", sources::render_candidates(&candidates));
            }
            0
        }
        ConfigCommand::Sources { json } => {
            let layers = sources::sources(doc, &process_env);
            if json {
                print_json(&layers);
            } else {
                print!("{}", sources::render_sources(&layers));
            }
            0
        }
        ConfigCommand::Check { json } => {
            let manifests = installed_manifests(found);
            let builder = StoresBuilder::new(doc, None).with_manifests(&manifests);
            let outcome = check::check(doc, &builder);
            if json {
                println!("{}", check::render_json(&outcome));
            } else {
                print!("{}", check::render_text(&outcome));
            }
            if outcome.problems.is_empty() {
                0
            } else {
                1
            }
        }
    }
}

fn print_json(value: &impl serde::Serialize) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        Err(e) => eprintln!("Error: cannot write JSON: {e}"),
    }
}
