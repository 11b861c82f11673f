//! `agent-env config show | explain | check`: read-only views of `.agentenv/config.toml`.

use crate::cli::{Exit, Failure, Terminal};
use crate::config::configured_store::configured_secrets;
use crate::config::document::ConfigDocument;
use crate::config::locate::CONFIG_VAR;
use crate::config::plugins::installed_packages;
use crate::config::store_builder::{names_a_plugin_store, StoresBuilder};
use crate::config::{check, explain, show, sources, user_file};
use crate::output::Output;
use crate::session::Session;
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

/// Runs `config show | explain | debug | sources | check`.
pub fn run(args: ConfigArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    let doc = session.config();
    // -v: where agent-env looked for the config file (what `config debug` lists), on stderr.
    if verbose && !matches!(args.command, ConfigCommand::Debug { .. }) {
        let candidates =
            sources::debug_candidates(doc, session.env().var_os(CONFIG_VAR).map(Into::into));
        term.eprintln(sources::render_candidates(&candidates).trim_end());
    }
    let state_root = session.paths().state_root();
    let env = |name: &str| session.env().var(name);
    match args.command {
        ConfigCommand::Show { json } => {
            let report = show::show(
                doc,
                &installed_packages(&session.manifests()),
                &env,
                &state_root,
            );
            if json {
                term.line(&show::render_json(&report));
            } else {
                term.print(&show::render_text(&report));
            }
            // A config file that cannot be read is an error, said once (in the output above).
            Ok(unreadable_config_exit(doc))
        }
        ConfigCommand::Explain { path, json } => {
            let answer = explain::explain(
                doc,
                &path,
                &installed_packages(&session.manifests()),
                &env,
                &state_root,
            )
            .map_err(|e| Failure::new(e).usage_if(true))?;
            if json {
                term.line(&explain::render_json(&answer));
            } else {
                term.print(&explain::render_text(&answer));
            }
            // Its answer says the config could not be read (in `error`, or the value's line).
            Ok(unreadable_config_exit(doc))
        }
        ConfigCommand::Debug { json } => {
            let candidates =
                sources::debug_candidates(doc, session.env().var_os(CONFIG_VAR).map(Into::into));
            if json {
                term.line(&to_json(&candidates)?);
            } else {
                term.print(&sources::render_candidates(&candidates));
            }
            Ok(say_unreadable_config(doc, term))
        }
        ConfigCommand::Sources { json } => {
            let layers = sources::sources(doc, &env);
            if json {
                term.line(&to_json(&layers)?);
            } else {
                term.print(&sources::render_sources(&layers));
            }
            Ok(say_unreadable_config(doc, term))
        }
        ConfigCommand::Check { json } => {
            let manifests = session.manifests();
            // A plugin's store is opened in its plugin, which checks the class's keys; the plugin is
            // started only when the config names one of its stores.
            let factory = (doc.error.is_none() && names_a_plugin_store(doc))
                .then(|| {
                    (session.plugin_store_opener())(
                        doc,
                        configured_secrets(doc, None).ok().as_ref(),
                    )
                })
                .transpose()
                .map_err(|e| {
                    Failure::new(format!(
                        "can't start the plugins that provide the configured stores: {e}"
                    ))
                })?;
            // A hosted store is asked to reach its server, so a wrong endpoint, bucket, DSN or credential is
            // reported here, before any work.
            let builder = StoresBuilder::new(doc, factory.as_deref())
                .with_manifests(&manifests)
                .probing();
            let mut outcome = check::check(doc, &builder);
            // A user-level config file is never read: said here, where a user looks for why its
            // settings do not apply.
            outcome
                .notes
                .extend(user_file::unread_user_config_note(doc));
            if json {
                // What a person reads on stderr, a script reads in the document.
                outcome.warnings.extend(session.take_plugin_warnings());
                term.line(&check::render_json(&outcome));
            } else {
                term.print(&check::render_text(&outcome));
            }
            Ok(if outcome.problems.is_empty() { 0 } else { 1 })
        }
    }
}

/// Every view of the config exits 1 when the config the user chose could not be read, after printing
/// what it can: the error is the command's failure.
fn unreadable_config_exit(doc: &ConfigDocument) -> i32 {
    if doc.error.is_some() {
        1
    } else {
        0
    }
}

/// As [`unreadable_config_exit`], for the views whose output has no place for the error (`debug`'s
/// paths, `sources`' layers): the error is said on stderr, text and JSON alike.
fn say_unreadable_config(doc: &ConfigDocument, term: &Terminal) -> i32 {
    if let Some(problem) = &doc.error {
        term.error(&problem.reason);
    }
    unreadable_config_exit(doc)
}

fn to_json(value: &impl serde::Serialize) -> Result<String, Failure> {
    serde_json::to_string_pretty(value).map_err(|e| Failure::new(format!("cannot write JSON: {e}")))
}
