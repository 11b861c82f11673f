//! `agent-env artifact put FOLDER --id ID`: a folder's files as a stored artifact in the configured
//! stores, for stored tasks to load; `artifact get ID`: what a version holds, a stored artifact's or
//! (by its @local id) one a bundle run recorded.

use clap::{Args, Subcommand};
use serde_json::Value;

use super::terminal::ERASE_LINE;
use super::{Exit, Failure, Terminal};
use crate::run::cancel::{watch_signals, Cancel, Signalled};
use crate::run::stored_artifact;
use crate::run::stored_artifact::verify::{verify_files, FileVerdict};
use crate::run::stored_artifact::{reading, FileUnderWay, PutStep};
use crate::session::Session;
use crate::table::width;
use crate::words::{byte_size, plural};

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
    /// Show an artifact (a stored one, or one a bundle run recorded): its latest version (or the one
    /// asked for) and its files.
    Get(GetArgs),
}

#[derive(Args)]
pub struct GetArgs {
    /// The artifact's id: a stored artifact's (team/greeting), or the @local id a bundle run gave an
    /// artifact of its bundle's artifacts/ folder.
    pub id: String,
    /// This version instead of the latest.
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = crate::cli::task::version_number
    )]
    pub version: Option<i64>,
    /// Print the artifact document as JSON.
    #[arg(long)]
    pub json: bool,
    /// Read each of the version's files from the object store and check its size and sha256
    /// against the record; exit 1 when one differs or is missing.
    #[arg(long)]
    pub verify: bool,
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
    /// Print JSON for a script: the artifact's id, the version it was stored as, its type and files.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ArtifactArgs, session: &Session, term: &Terminal) -> Exit {
    match args.command {
        ArtifactCommand::Put(args) => put(args, session, term),
        ArtifactCommand::Get(args) => get(args, session, term),
    }
}

fn get(args: GetArgs, session: &Session, term: &Terminal) -> Exit {
    // A bundle's artifact (an @local id) is read from the local stores its run wrote, a stored one
    // from the configured stores; --verify reads the files from the object store of the same pair.
    let mut doc = reading::get_artifact(session, &args.id, args.version)
        .map_err(|e| Failure::new(e.to_string()))?;
    let verdicts = match args.verify {
        true => {
            let objects = reading::object_store_of(session, &args.id)
                .map_err(|e| Failure::new(e.to_string()))?;
            Some(verify_files(&objects, &doc, &Cancel::new()))
        }
        false => None,
    };
    let problems: Vec<&str> = verdicts
        .iter()
        .flatten()
        .filter_map(|v| v.problem.as_deref())
        .collect();
    if args.json {
        if let Some(verdicts) = &verdicts {
            with_verdicts(&mut doc, verdicts);
        }
        let text = serde_json::to_string_pretty(&Value::Object(doc))
            .map_err(|e| Failure::new(format!("cannot print the artifact: {e}")))?;
        term.print(&format!("{text}\n"));
        return Ok(if problems.is_empty() { 0 } else { 1 });
    }
    let field = |key: &str| doc.get(key).and_then(Value::as_str).unwrap_or("");
    let mut out = format!(
        "artifact:  {} v{} ({})\ncreated:   {}\nfiles:\n",
        field("id"),
        doc.get("version").and_then(Value::as_i64).unwrap_or(0),
        field("type"),
        field("created_at_utc")
    );
    out.push_str(&file_rows(&doc));
    term.print(&out);
    let Some(verdicts) = &verdicts else {
        return Ok(0);
    };
    let id = field("id");
    let version = doc.get("version").and_then(Value::as_i64).unwrap_or(0);
    if problems.is_empty() {
        let count = verdicts.len();
        let (files, were) = match count {
            1 => ("file", "it was"),
            _ => ("files", "they were"),
        };
        term.print(&format!(
            "verified: {count} {files} read from the object store, as {were} put (sizes and sha256 as recorded)\n"
        ));
        return Ok(0);
    }
    for problem in &problems {
        term.eprintln(&format!("problem: {problem}"));
    }
    let not_as_put = match problems.len() {
        1 => "is not as it was",
        _ => "are not as they were",
    };
    Err(Failure::new(format!(
        "{} of the {} {} of the artifact '{id}' v{version} {not_as_put} put (each said above)",
        problems.len(),
        verdicts.len(),
        plural(verdicts.len(), "file", "files"),
    )))
}

/// The artifact document as `--verify --json` prints it: each file with `verified`, and `problems`.
fn with_verdicts(doc: &mut serde_json::Map<String, Value>, verdicts: &[FileVerdict]) {
    if let Some(Value::Array(files)) = doc.get_mut("files") {
        for (file, verdict) in files.iter_mut().zip(verdicts) {
            if let Value::Object(file) = file {
                file.insert("verified".into(), Value::Bool(verdict.problem.is_none()));
            }
        }
    }
    let problems: Vec<Value> = verdicts
        .iter()
        .filter_map(|v| v.problem.clone().map(Value::String))
        .collect();
    doc.insert("problems".into(), Value::Array(problems));
}

/// The artifact's files, one a line, in columns: path, size, object URL.
fn file_rows(doc: &serde_json::Map<String, Value>) -> String {
    let rows: Vec<(String, String, &str)> = doc
        .get("files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|file| {
            let text = |key: &str| file.get(key).and_then(Value::as_str).unwrap_or("?");
            let size = file.get("size").and_then(Value::as_u64).unwrap_or(0);
            // As the terminal will show it (an invisible character escaped), so padded by that.
            (
                crate::printable::plain(text("path")).into_owned(),
                format!("{size} bytes"),
                text("object_url"),
            )
        })
        .collect();
    // Padded by the columns a terminal gives each path (a CJK name takes two a character).
    let path_width = rows.iter().map(|r| width(&r.0)).max().unwrap_or(0);
    let size_width = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    rows.iter()
        .map(|(path, size, url)| {
            let pad = " ".repeat(path_width - width(path));
            format!("  {path}{pad}  {size:>size_width$}  {url}\n")
        })
        .collect()
}

/// `Writing <path> (3 of 12, 1.4 GiB)`: the file a put is hashing, reading back or writing.
fn progress_line(file: &FileUnderWay<'_>) -> String {
    let doing = match file.step {
        PutStep::Hashing => "Hashing",
        PutStep::ReadingBack => "Reading back the stored object for",
        PutStep::Writing => "Writing",
    };
    format!(
        "{doing} {} ({} of {}, {})",
        file.path,
        file.done + 1,
        file.total,
        byte_size(file.size)
    )
}

/// What the first signal's notice says the put waits for, by what it is doing with a file: a hash
/// or a read back stops within a chunk; a write is let finish.
fn stopping_notice(step: PutStep, path: &str) -> String {
    match step {
        PutStep::Hashing => format!("Stopping the hashing of {path}; nothing was written"),
        PutStep::ReadingBack => {
            format!("Stopping the reading back of the stored object for {path}")
        }
        PutStep::Writing => "Stopping once the file being written is written".to_string(),
    }
}

/// What the put is doing as the put says it before each step of a file: the first signal's notice,
/// and what a stop at once now would leave.
struct UnderWay {
    stopping: String,
    left: String,
}

static UNDER_WAY: std::sync::Mutex<UnderWay> = std::sync::Mutex::new(UnderWay {
    stopping: String::new(),
    left: String::new(),
});

/// A signal during `artifact put`: the first lets the file being written finish (an upload cut
/// short is left half-made in some stores), or stops a hash or a read back within a chunk, and says
/// which; the next stops at once.
fn on_put_signal(signalled: Signalled) {
    let (stopping, left) = UNDER_WAY
        .lock()
        .map(|u| (u.stopping.clone(), u.left.clone()))
        .unwrap_or_default();
    let stopping = match stopping.is_empty() {
        true => "Stopping".to_string(),
        false => stopping,
    };
    super::stopping::two_step(signalled, &stopping, || match left.is_empty() {
        true => "nothing was written".to_string(),
        false => left,
    });
}

/// A sentence for each link below `folder` that leads outside it: a file read through it is stored
/// as the artifact's own, a folder it leads to is left out.
fn links_outside_notes(folder: &std::path::Path, shown: &str, session: &Session) -> Vec<String> {
    use crate::bundle::links::{links_outside_folder, LeadsTo};
    links_outside_folder(folder)
        .into_iter()
        .map(|link| {
            let target = session.paths().tilde(&link.target);
            match link.leads_to {
                LeadsTo::File => format!(
                    "{} of {shown} is a symbolic link to {target}, outside the folder: artifact put stores that file as the artifact's own; make sure it is one you mean to share, or put a copy of it in the folder",
                    link.path
                ),
                LeadsTo::Folder => format!(
                    "{} of {shown} is a symbolic link to the folder {target}, outside the folder: artifact put follows no link to a folder, so what it holds is left out of the artifact; put a copy of the folder in it if the artifact needs it",
                    link.path
                ),
            }
        })
        .collect()
}

fn put(args: PutArgs, session: &Session, term: &Terminal) -> Exit {
    let shown = args.folder.display().to_string();
    let give = "give the folder that holds the artifact's files";
    match std::fs::metadata(&args.folder) {
        Ok(found) if found.is_dir() => {}
        Ok(_) => return Err(Failure::new(format!("{shown} is not a folder: {give}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Failure::new(format!("{shown} does not exist: {give}")))
        }
        Err(e) => return Err(Failure::new(format!("can't read {shown}: {e}"))),
    }
    let id = match args.id {
        Some(id) => id,
        None => std::fs::canonicalize(&args.folder)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default(),
    };
    // Said and stored in NFC, the form every id is kept in: `team/café` typed with a combining
    // accent is the same artifact.
    let id = crate::bundle::model::as_nfc(&id).into_owned();
    // Said before the files are stored, as a run says a bundle's: a file read through a link may be
    // one of this machine's that was not meant to be shared.
    let link_notes = links_outside_notes(&args.folder, &shown, session);
    for note in &link_notes {
        term.eprintln(&format!("note: {note}"));
    }
    let cancel = Cancel::new();
    watch_signals(cancel.clone(), Some(on_put_signal))
        .map_err(|e| Failure::new(format!("{shown}: can't watch for Ctrl-C: {e}")))?;
    // On a terminal that redraws lines (not TERM=dumb), the file being hashed and written is shown on
    // one line, drawn again for each (a large artifact takes minutes to reach a hosted store); a
    // script's stderr gets none of it.
    let live = term.style().redraws_lines();
    let before_file = |file: &FileUnderWay<'_>| {
        if let Ok(mut told) = UNDER_WAY.lock() {
            told.stopping = stopping_notice(file.step, file.path);
            told.left = file.left_if_stopped.to_string();
        }
        if live {
            term.eprint_after(ERASE_LINE, &progress_line(file));
        }
    };
    // Every file is written by then: a document store slow to take the version is waited for, and
    // said, rather than leaving the files unused.
    let waiting = |why: &str| {
        if live {
            term.eprint_after(ERASE_LINE, "");
        }
        term.eprintln(&format!(
            "{shown}: waiting for the document store to record the new version of '{id}' ({why}); Ctrl-C stops waiting, leaving the files written unused"
        ));
    };
    let put =
        stored_artifact::put_artifact(session, &id, &args.folder, &cancel, &before_file, &waiting);
    if live {
        term.eprint_after(ERASE_LINE, "");
    }
    let put = put.map_err(|e| Failure::new(format!("{shown}: {e}")).with_code(e.exit_code()))?;
    // Objects kept on this machine, recorded in a document store other machines share: said once,
    // and in the JSON document for a script.
    let shared_stores: Vec<String> =
        crate::config::shared_stores::local_objects_behind_shared_documents(session.config())
            .into_iter()
            .collect();
    for warning in &shared_stores {
        term.warn(warning);
    }
    let warnings: Vec<String> = link_notes.into_iter().chain(shared_stores).collect();
    if args.json {
        let mut doc = serde_json::json!({
            "format_version": 1,
            "id": id,
            "version": put.version,
            "type": put.artifact_type,
            "files": put.files,
            "unchanged": put.unchanged,
            "why": put.why,
        });
        if !warnings.is_empty() {
            doc["warnings"] = serde_json::json!(warnings);
        }
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        term.print(&format!("{text}\n"));
        return Ok(0);
    }
    if put.unchanged {
        term.print(&format!(
            "{id}: v{}, unchanged (its latest version has the same files, so nothing was stored)\n",
            put.version
        ));
        return Ok(0);
    }
    let why = put.why.map(|why| format!("; {why}")).unwrap_or_default();
    term.print(&format!(
        "{id}: v{} ({}, {} {}{why})\n",
        put.version,
        put.artifact_type,
        put.files,
        plural(put.files, "file", "files")
    ));
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_counts_from_one_and_gives_the_size() {
        let file = FileUnderWay {
            step: PutStep::Writing,
            path: "model/weights.bin",
            done: 2,
            total: 12,
            size: 1_503_238_554,
            left_if_stopped: "",
        };
        assert_eq!(
            progress_line(&file),
            "Writing model/weights.bin (3 of 12, 1.4 GiB)"
        );
    }

    #[test]
    fn file_columns_line_up_by_terminal_width() {
        let serde_json::Value::Object(doc) = serde_json::json!({"files": [
            {"path": "数据.txt", "size": 5, "object_url": "file:///a"},
            {"path": "readme.md", "size": 12345, "object_url": "file:///b"},
        ]}) else {
            unreachable!()
        };
        assert_eq!(
            file_rows(&doc),
            "  数据.txt       5 bytes  file:///a\n  readme.md  12345 bytes  file:///b\n"
        );
        // A name with an invisible character is padded as it is shown, escaped.
        let serde_json::Value::Object(doc) = serde_json::json!({"files": [
            {"path": "zero\u{200b}w.txt", "size": 1, "object_url": "file:///a"},
            {"path": "plain.txt", "size": 1, "object_url": "file:///b"},
        ]}) else {
            unreachable!()
        };
        let rows = file_rows(&doc);
        let starts: Vec<usize> = rows.lines().map(|l| l.find("1 bytes").unwrap()).collect();
        assert_eq!(starts[0], starts[1], "{rows}");
    }
}
