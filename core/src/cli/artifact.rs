//! `agent-env artifact put FOLDER --id ID`: a folder's files as a stored artifact in the configured
//! stores, for stored tasks to load.

use clap::{Args, Subcommand};

use super::{Exit, Failure, Terminal};
use crate::run::stored_artifact;
use crate::session::Session;

#[derive(Args)]
pub struct ArtifactArgs {
    #[command(subcommand)]
    pub command: ArtifactCommand,
}

#[derive(Subcommand)]
pub enum ArtifactCommand {
    /// Store a folder's files in the configured stores as the next version of an artifact, for stored
    /// tasks (agent-env task put) to load.
    Put(PutArgs),
}

#[derive(Args)]
pub struct PutArgs {
    /// The folder: its files, and an optional artifact.toml giving the type (file,
    /// file_artifact_universe or skill) and settings.
    #[arg(value_name = "FOLDER")]
    pub folder: std::path::PathBuf,
    /// The artifact's id (a bare id, such as team/greeting); a load_artifact step names it in
    /// artifact_id. Default: the folder's name.
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
}

pub fn run(args: ArtifactArgs, session: &Session, term: &Terminal) -> Exit {
    match args.command {
        ArtifactCommand::Put(args) => put(args, session, term),
    }
}

fn put(args: PutArgs, session: &Session, term: &Terminal) -> Exit {
    let shown = args.folder.display().to_string();
    if !args.folder.is_dir() {
        return Err(Failure::new(format!(
            "{shown} is not a folder: give the folder that holds the artifact's files"
        )));
    }
    let id = match args.id {
        Some(id) => id,
        None => std::fs::canonicalize(&args.folder)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default(),
    };
    let put = stored_artifact::put_artifact(session, &id, &args.folder)
        .map_err(|e| Failure::new(format!("{shown}: {e}")))?;
    let files = match put.files {
        1 => "1 file".to_string(),
        n => format!("{n} files"),
    };
    term.print(&format!(
        "{id}: v{} ({}, {files})\n",
        put.version, put.artifact_type
    ));
    Ok(0)
}
