//! `agent-env plugin …`: the subcommands' arguments and where each goes. `list | check`
//! ([`report`]) and `show` ([`show`]) read the plugin report; `add | remove` ([`change`]) change the
//! plugins directory through [`crate::install`]; `approve` ([`approve`]) pins a package's files;
//! `verify` and `new` live in [`crate::cli::verify`] and [`crate::cli::new`].
//!
//! Exit codes: 0 (check: every contribution in effect), 1 (check: a problem; show: no such package),
//! 2 (usage); `add | remove` say theirs in [`change`].

mod approve;
mod change;
mod index_urls;
mod installer_arg;
mod pin_changes;
mod report;
mod show;

use clap::{Args, Subcommand};

use crate::cli::{Exit, Terminal};
use crate::session::Session;

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
    #[arg(long, value_parser = installer_arg::InstallerArg)]
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
    /// Wait for another `plugin add` or `remove` changing this plugins directory to finish, instead
    /// of failing (parallel jobs sharing one).
    #[arg(long)]
    pub wait: bool,
}

#[derive(Args)]
pub struct ApproveArgs {
    /// The packages to approve, as `plugin list` names them.
    #[arg(required = true)]
    pub packages: Vec<String>,
    /// Wait for another `plugin add`, `remove` or `approve` changing this plugins directory to
    /// finish, instead of failing.
    #[arg(long)]
    pub wait: bool,
    /// Print one JSON document for a script: each package approved and the files it pins now.
    #[arg(long)]
    pub json: bool,
    /// Pin the files that changed without asking (with no terminal, nothing is pinned without it).
    #[arg(short = 'y', long)]
    pub yes: bool,
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
    /// Wait for another `plugin add` or `remove` changing this plugins directory to finish, instead
    /// of failing (parallel jobs sharing one).
    #[arg(long)]
    pub wait: bool,
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

/// Runs `plugin list | show | check | add | remove | approve | verify | new`.
pub fn run(args: PluginArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    match args.command {
        PluginCommand::List(a) => report::list(&a, verbose, session, term),
        PluginCommand::Show(a) => show::show(&a, verbose, session, term),
        PluginCommand::Check(a) => report::check(&a, verbose, session, term),
        PluginCommand::Add(a) => change::add(&a, session, term),
        PluginCommand::Remove(a) => change::remove(&a, session, term),
        PluginCommand::Approve(a) => approve::approve(&a, session, term),
        PluginCommand::Verify(a) => crate::cli::verify::run(&a, session, term),
        PluginCommand::New(a) => crate::cli::new::run(&a, session, term),
    }
}
