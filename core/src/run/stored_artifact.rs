//! `agent-env artifact put FOLDER --id ID`: a folder's files as the next version of a stored artifact,
//! in the configured stores, so a stored task (`task put`) can load it on any machine configured the
//! same way.
//!
//! The folder is read as a bundle's `artifacts/<name>/` folder is: an optional `artifact.toml` gives
//! the `type` and settings, and without one a single file is a `file` artifact and several a
//! `file_artifact_universe`. Each file goes to the configured object store under a prefix of its own
//! (write-once, so a put never touches an earlier version's objects), then the document naming them
//! becomes the id's next version in the configured document store, as a bundle run records an
//! artifact. A folder whose files (paths, sizes and sha256), type and settings are those of the id's
//! latest version, whose objects the configured object store still holds, stores nothing: it is that
//! version still; any other is stored with why it is not (`hello.txt changed`, `settings changed:
//! mode`, its objects gone from the store).

use std::path::Path;

use serde_json::{json, Map, Value};

use super::artifact_copy::{
    copy_checked, holds_as_recorded, in_brackets, not_as_put, not_given, put_again, recorded_files,
    CopyError,
};
use super::run_stores::RunStores;
use super::stored_task::{configured_stores, latest_stored, ARTIFACTS};
use super::RunError;
use crate::bundle::ids::{check_bare_id, object_key_segment};
use crate::bundle::parser::{
    implied_artifact_type, read_artifact_manifest, several_files_for_one, ArtifactManifest,
};
use crate::bundle::tree::Tree;
use crate::bundle::BundleError;
use crate::run::cancel::Cancel;
use crate::session::Session;
use crate::stores::{Document, Filter, StoreError, VersionedEntityStore};

mod hashing;
pub(crate) mod placement;
pub mod reading;
mod recording;
pub mod verify;

/// The artifact types a stored task's `load_artifact` step can load.
const LOADABLE: [&str; 3] = ["file", "file_artifact_universe", "skill"];

/// What a put wrote.
#[derive(Debug)]
pub struct PutArtifact {
    pub version: i64,
    pub artifact_type: String,
    pub files: usize,
    /// Whether `version` was there already with the same files, so nothing was written.
    pub unchanged: bool,
    /// Why a new version was stored though the id had one (`hello.txt changed`, `settings changed:
    /// mode`); `None` for its first version, or when nothing was stored.
    pub why: Option<String>,
}

/// A file's sha256 and size, by its path in the folder.
type Hashes = std::collections::HashMap<String, (String, u64)>;

/// What a put does with a file: each file is hashed, a file the store may hold already has that
/// object read back, and the rest are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PutStep {
    /// Its sha256 is being read from the folder (nothing is written meanwhile).
    Hashing,
    /// An object the store holds, which the version may name instead of writing the file, is being
    /// read back and hashed.
    ReadingBack,
    /// It is being written to the object store.
    Writing,
}

/// The file a put is about to hash, read back or write, told to its caller before each.
#[derive(Debug)]
pub struct FileUnderWay<'a> {
    /// What the put is about to do with it.
    pub step: PutStep,
    /// Its path in the folder.
    pub path: &'a str,
    /// How many files went through this step before it.
    pub done: usize,
    /// How many files the put holds in all.
    pub total: usize,
    /// Its size in bytes, as the folder lists it.
    pub size: u64,
    /// What a stop at once during it would leave, said as the put would say it.
    pub left_if_stopped: &'a str,
}

/// Writes the files of `folder` as the next version of the stored artifact `id`. The document store
/// is reached before any file is written (a store that is down would leave the files unreferenced);
/// `cancel` stops the put between two files, with the files already written named, and within a
/// file being hashed or read back. `before_file` is told of each file before it is hashed, read
/// back and written (for progress, and for a caller that must stop at once to say what that
/// leaves). The version is recorded once every file is written, asking the
/// document store again while it does not answer, for as long as a task's end would wait for it
/// (`AGENT_ENV_RECORD_WAIT_SECONDS`); `waiting` is given the line to show when that wait begins.
pub fn put_artifact(
    session: &Session,
    id: &str,
    folder: &Path,
    cancel: &Cancel,
    before_file: &dyn Fn(&FileUnderWay<'_>),
    waiting: &(dyn Fn(&str) + Sync),
) -> Result<PutArtifact, RunError> {
    check_bare_id(id).map_err(|problem| {
        BundleError::one(format!("{problem} (--id gives one, such as team/greeting)"))
    })?;
    let shown = folder.display();
    let files = files_of(folder)?;
    let (artifact_type, config) = declared(folder, &files)?;
    if let Some(problem) = several_files_for_one(&artifact_type, &files) {
        return Err(BundleError::one(format!("{shown}: {problem}")).into());
    }
    if !LOADABLE.contains(&artifact_type.as_str()) {
        return Err(BundleError::one(format!(
            "{shown} is an artifact of type '{artifact_type}', which a stored task could not load; this agent-env stores {} artifacts (artifact.toml's type says which)",
            LOADABLE.join(", ")
        ))
        .into());
    }
    if files.is_empty() {
        return Err(BundleError::one(format!(
            "{shown} has no files: put the artifact's files in it"
        ))
        .into());
    }
    let stores = configured_stores(session)?;
    let versions = stores
        .documents
        .count(ARTIFACTS, &Filter::eq("id", id))
        .map_err(|e| {
            BundleError::one(format!(
                "the configured document store, which records the artifact: {e}; nothing was written"
            ))
        })?;
    let mut hashes = Hashes::new();
    let latest = match versions {
        0 => None,
        _ => latest_stored(&stores, ARTIFACTS, id, "artifact")?,
    };
    let compared = match &latest {
        None => None,
        Some(latest) => Some(compare_with_latest(
            &stores,
            latest,
            (&artifact_type, &config),
            (folder, &files),
            &mut hashes,
            cancel,
            before_file,
        )?),
    };
    let (why, objects_changed) = match compared {
        Some(Compared::Same(version)) => {
            return Ok(PutArtifact {
                version,
                artifact_type,
                files: files.len(),
                unchanged: true,
                why: None,
            })
        }
        Some(Compared::Differs {
            why,
            objects_changed,
        }) => (Some(why), objects_changed),
        None => (None, false),
    };
    // Every file is hashed before any is written: where the files go depends on them all.
    for (done, rel) in files.iter().enumerate() {
        if hashes.contains_key(rel) {
            continue;
        }
        let hashed = hash_told(folder, rel, (done, files.len()), cancel, before_file)?;
        hashes.insert(rel.clone(), hashed);
    }
    let placement = placement::Placement::new(
        &stores.objects,
        cancel,
        &format!("artifacts/{artifact_type}/{}", object_key_segment(id)),
        files
            .iter()
            .filter_map(|rel| Some((rel.as_str(), hashes.get(rel)?.0.as_str()))),
        latest.as_ref(),
        objects_changed,
    );
    let prefix = placement.prefix().to_string();
    let mut listed = Vec::new();
    let mut held = Held::default();
    for rel in &files {
        if let Some(signal) = cancel.signal() {
            return Err(RunError::Interrupted {
                signal,
                what: unrecorded(held, files.len(), &prefix, "stopped by a signal"),
            });
        }
        let path = folder.join(rel);
        let Some((sha256, size)) = hashes.get(rel).cloned() else {
            return Err(BundleError::one(format!("can't read {}", path.display())).into());
        };
        let size_in_folder = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let reading_back = || {
            before_file(&FileUnderWay {
                step: PutStep::ReadingBack,
                path: rel,
                done: listed.len(),
                total: files.len(),
                size: size_in_folder,
                left_if_stopped: &unrecorded(
                    held,
                    files.len(),
                    &prefix,
                    &format!("stopped while reading back the stored object for {rel}"),
                ),
            })
        };
        let stored = placement.stored_told(rel, &sha256, size, &reading_back);
        // A signal while an object was read back: it is not known to be the file's.
        if let Some(signal) = cancel.signal() {
            return Err(RunError::Interrupted {
                signal,
                what: unrecorded(held, files.len(), &prefix, "stopped by a signal"),
            });
        }
        if let Some(stored) = stored {
            match stored {
                placement::Stored::Latest(_) => held.reused += 1,
                placement::Stored::UnderPrefix(_) => held.written += 1,
            }
            let url = stored.url();
            listed.push(json!({"path": rel, "object_url": url, "sha256": sha256, "size": size}));
            continue;
        }
        let left_if_stopped = unrecorded(
            held,
            files.len(),
            &prefix,
            &format!("stopped while writing {rel}, which may be left half-written,"),
        );
        before_file(&FileUnderWay {
            step: PutStep::Writing,
            path: rel,
            done: listed.len(),
            total: files.len(),
            size: size_in_folder,
            left_if_stopped: &left_if_stopped,
        });
        let url = placement
            .write(rel, &sha256, size, &mut |key| {
                stores
                    .objects
                    .put_file(key, &path, crate::stores::DEFAULT_CONTENT_TYPE)
            })
            .map_err(|e| {
                // A signal came while the file was on its way, and the store failed it since (a
                // stalled upload's timeout): the put ends as the signal said it would.
                if let Some(signal) = cancel.signal() {
                    return RunError::Interrupted {
                        signal,
                        what: unrecorded(held, files.len(), &prefix, "stopped by a signal"),
                    };
                }
                let mut left = unrecorded(held, files.len(), &prefix, "it stopped");
                // A store that refused for its settings (credentials that may not write) refuses
                // again until they change, as its error says.
                if matches!(e, StoreError::Config(_)) {
                    left.push_str(" once the store's settings let it write");
                }
                BundleError::one(format!("writing {rel} to the object store: {e}; {left}")).into()
            })?;
        held.written += 1;
        listed.push(json!({"path": rel, "object_url": url, "sha256": sha256, "size": size}));
    }
    // A signal during the last file: it is written, and still nothing is recorded.
    if let Some(signal) = cancel.signal() {
        return Err(RunError::Interrupted {
            signal,
            what: unrecorded(held, files.len(), &prefix, "stopped by a signal"),
        });
    }
    // An object of the latest version found changed in the store was not named again: the new
    // version puts it right, and says so.
    let why = match (why, placement.latest_changed()) {
        (Some(why), true) => Some(format!(
            "{why}; {}",
            objects_not_as_put(latest.as_ref().map_or(0, version_of))
        )),
        (why, _) => why,
    };
    let name = id.rsplit('/').next().unwrap_or(id);
    let mut doc = Document::new();
    doc.insert("id".into(), json!(id));
    doc.insert("type".into(), json!(artifact_type));
    doc.insert("name".into(), json!(name));
    doc.insert("files".into(), Value::Array(listed));
    doc.insert("object_prefix".into(), json!(prefix));
    if !config.is_empty() {
        doc.insert("config".into(), Value::Object(config));
    }
    doc.insert("created_at_utc".into(), json!(crate::clock::iso_now()));
    let version = record(session, &stores, &doc, &prefix, cancel, waiting).map_err(|e| {
        let left = written_unrecorded(held, &prefix);
        match cancel.signal() {
            Some(signal) => RunError::Interrupted {
                signal,
                what: format!(
                    "stopped by a signal while waiting for the document store ({e}); {left}"
                ),
            },
            None => BundleError::one(format!("{e}; {left}")).into(),
        }
    })?;
    Ok(PutArtifact {
        version,
        artifact_type,
        files: files.len(),
        unchanged: false,
        why,
    })
}

/// Records `doc`, a put's new version whose files are under `prefix` (see [`recording`]): the
/// version, or what failed, as a sentence.
fn record(
    session: &Session,
    stores: &RunStores,
    doc: &Document,
    prefix: &str,
    cancel: &Cancel,
    waiting: &(dyn Fn(&str) + Sync),
) -> Result<i64, String> {
    let id = doc.get("id").and_then(Value::as_str).unwrap_or_default();
    let entities = VersionedEntityStore::new(stores.documents.clone(), ARTIFACTS, &[])
        .map_err(|e| format!("the configured document store: {e}"))?;
    let wait = crate::run::heartbeat::Liveness::from_env(session.env()).record_wait;
    let tell = |why: &str| {
        waiting(&format!(
            "waiting for the document store to record the artifact '{id}' ({why}); trying for up to {} s in all (Ctrl-C stops waiting)",
            crate::run::outcome::format_g(wait.as_secs_f64())
        ));
    };
    let patience = recording::Patience {
        wait,
        cancel,
        waiting: &tell,
    };
    recording::record_version(&entities, doc, prefix, &patience).map_err(|e| {
        let advice = match e {
            StoreError::ConcurrentModification(_) => {
                "; other writers were putting the same id at once: run the command again"
            }
            _ => "",
        };
        format!("writing the artifact '{id}': {e}{advice}")
    })
}

/// One file of a stored artifact's version, as its document records it.
struct FileRecorded {
    path: String,
    object_url: String,
    sha256: String,
    size: u64,
}

/// The files `doc` (an artifact's version) records, each with its path, object, sha256 and size;
/// none when one lacks any of them (a version recorded before sha256 was kept).
fn files_recorded(doc: &Document) -> Option<Vec<FileRecorded>> {
    doc.get("files")?
        .as_array()?
        .iter()
        .map(|f| {
            Some(FileRecorded {
                path: f.get("path")?.as_str()?.to_string(),
                object_url: f.get("object_url")?.as_str()?.to_string(),
                sha256: f.get("sha256")?.as_str()?.to_string(),
                size: f.get("size")?.as_u64()?,
            })
        })
        .collect()
}

/// How the folder stands against the id's latest stored version.
#[derive(Debug, PartialEq)]
enum Compared {
    /// The folder is that version still: nothing to store.
    Same(i64),
    /// The folder is not that version, for this reason (`hello.txt changed`); `objects_changed`
    /// when the reason is that version's objects, which the store no longer holds as they were put.
    Differs { why: String, objects_changed: bool },
}

impl Compared {
    fn differs(why: String) -> Compared {
        Compared::Differs {
            why,
            objects_changed: false,
        }
    }
}

/// Whether `latest`, the latest stored version of an artifact, is what `folder` holds: the same type and
/// settings (`declared`), the same files with the same sizes and sha256, each object still in the
/// configured object store with those bytes (read back to be sure: a store configured since, an
/// object gone or one changed in the store makes a new version, which is how a damaged artifact is
/// put right); when it is not, why. When the files differ, the objects are not read back here: the
/// put reads back each one it would name again ([`placement::Placement::stored`]), and writes the
/// file anew when its object is not as put. `held` is the folder and the files the put found in it.
/// The files hashed on the way are left in `hashes` for the put to use. `cancel` stops the hashing
/// (the put then ends, nothing written) and the reading back (the put then stops before its first
/// file); `before_file` is told of each file hashed and each object read back.
fn compare_with_latest(
    stores: &RunStores,
    latest: &Document,
    declared: (&str, &Map<String, Value>),
    held: (&Path, &[String]),
    hashes: &mut Hashes,
    cancel: &Cancel,
    before_file: &dyn Fn(&FileUnderWay<'_>),
) -> Result<Compared, RunError> {
    let (folder, files) = held;
    let version = version_of(latest);
    let (artifact_type, config) = declared;
    let mut reasons = Vec::new();
    let latest_type = latest.get("type").and_then(Value::as_str).unwrap_or("");
    if latest_type != artifact_type {
        reasons.push(format!("type changed: {latest_type} → {artifact_type}"));
    }
    let empty = Map::new();
    let latest_config = latest
        .get("config")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    if let Some(keys) = settings_changed(latest_config, config) {
        reasons.push(format!("settings changed: {keys}"));
    }
    let Some(recorded) = files_recorded(latest) else {
        reasons.push(format!("its v{version} does not record its files' sha256"));
        return Ok(Compared::differs(reasons.join("; ")));
    };
    let mut changed = Vec::new();
    for (done, file) in recorded.iter().enumerate() {
        if !files.contains(&file.path) {
            continue;
        }
        let path = folder.join(&file.path);
        if std::fs::metadata(&path).map(|m| m.len()).ok() != Some(file.size) {
            changed.push(file.path.as_str());
            continue;
        }
        let (sha256, size) = hash_told(
            folder,
            &file.path,
            (done, recorded.len()),
            cancel,
            before_file,
        )?;
        hashes.insert(file.path.clone(), (sha256.clone(), size));
        if sha256 != file.sha256 || size != file.size {
            changed.push(file.path.as_str());
        }
    }
    let added: Vec<&str> = files
        .iter()
        .filter(|f| !recorded.iter().any(|r| &r.path == *f))
        .map(String::as_str)
        .collect();
    let removed: Vec<&str> = recorded
        .iter()
        .filter(|r| !files.contains(&r.path))
        .map(|r| r.path.as_str())
        .collect();
    if let Some(files) = files_changed(&added, &removed, &changed) {
        reasons.push(files);
    }
    if !reasons.is_empty() {
        return Ok(Compared::differs(reasons.join("; ")));
    }
    for (done, file) in recorded.iter().enumerate() {
        before_file(&FileUnderWay {
            step: PutStep::ReadingBack,
            path: &file.path,
            done,
            total: recorded.len(),
            size: file.size,
            left_if_stopped: NOTHING_WRITTEN,
        });
        let recorded = (file.size, file.sha256.as_str());
        if !holds_as_recorded(&stores.objects, &file.object_url, recorded, cancel) {
            // One still there with other bytes is not trusted again; one gone is written anew.
            // (A read stopped by a signal asks the store nothing more: the put stops.)
            let gone = cancel.is_cancelled()
                || matches!(
                    stores.objects.get_object_metadata_at(&file.object_url),
                    Ok(None) | Err(StoreError::NotFound(_) | StoreError::ForeignUrl(_))
                );
            return Ok(Compared::Differs {
                why: objects_not_as_put(version),
                objects_changed: !gone,
            });
        }
    }
    Ok(Compared::Same(version))
}

/// What a put stopped before it wrote any file leaves.
const NOTHING_WRITTEN: &str = "stopped before writing any file; nothing was written";

/// The sha256 and size of the file at `rel` in `folder`, the `at`th (of so many) file hashed,
/// `before_file` told first; a put stopped by `cancel` meanwhile ends, having written nothing.
fn hash_told(
    folder: &Path,
    rel: &str,
    at: (usize, usize),
    cancel: &Cancel,
    before_file: &dyn Fn(&FileUnderWay<'_>),
) -> Result<(String, u64), RunError> {
    let stopped = |signal| RunError::Interrupted {
        signal,
        what: "stopped by a signal before writing any file; nothing was written".into(),
    };
    if let Some(signal) = cancel.signal() {
        return Err(stopped(signal));
    }
    let path = folder.join(rel);
    let (done, total) = at;
    before_file(&FileUnderWay {
        step: PutStep::Hashing,
        path: rel,
        done,
        total,
        size: std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0),
        left_if_stopped: NOTHING_WRITTEN,
    });
    match hashing::hash_file(&path, cancel) {
        Ok(hashing::Hashed::Whole { sha256, size }) => Ok((sha256, size)),
        Ok(hashing::Hashed::Stopped) => Err(stopped(cancel.signal().unwrap_or(libc::SIGINT))),
        Err(e) => Err(BundleError::one(format!("can't read {}: {e}", path.display())).into()),
    }
}

/// The version number `doc` records (0 when it records none).
fn version_of(doc: &Document) -> i64 {
    doc.get("version").and_then(Value::as_i64).unwrap_or(0)
}

/// Why a new version is stored when the objects of `version` are not as it recorded them.
fn objects_not_as_put(version: i64) -> String {
    format!("its v{version} objects are not in the configured object store as they were put")
}

/// The settings whose values differ between `before` and `now`, named (`mode, limit`); `None` when
/// none does.
fn settings_changed(before: &Map<String, Value>, now: &Map<String, Value>) -> Option<String> {
    let mut keys: Vec<&str> = before
        .keys()
        .chain(now.keys())
        .filter(|k| before.get(*k) != now.get(*k))
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    (!keys.is_empty()).then(|| names(&keys))
}

/// What changed among the files, said as a person would (`hello.txt changed`, `x added, y
/// removed`); `None` when nothing did.
fn files_changed(added: &[&str], removed: &[&str], changed: &[&str]) -> Option<String> {
    let parts: Vec<String> = [(added, "added"), (removed, "removed"), (changed, "changed")]
        .into_iter()
        .filter(|(paths, _)| !paths.is_empty())
        .map(|(paths, what)| format!("{} {what}", names(paths)))
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Up to three names (`a`, `a and b`, `a, b and c`), then how many more (`a, b, c and 4 more`).
fn names(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [first @ .., last] if names.len() <= 3 => format!("{} and {last}", first.join(", ")),
        _ => format!("{} and {} more", names[..3].join(", "), names.len() - 3),
    }
}

/// The files of a put that the object store holds for its version so far.
#[derive(Debug, Default, Clone, Copy)]
struct Held {
    /// Under the put's prefix: written by it, or found there whole from an earlier put of the same
    /// files.
    written: usize,
    /// The latest version's objects, unchanged, which the version names again.
    reused: usize,
}

/// What a put that did not record its version left: `held.written` of `total` files in the object
/// store under `prefix`, which nothing names yet (a put of the same folder again finds them there and
/// writes only the rest), besides the `held.reused` files the latest version stores already.
fn unrecorded(held: Held, total: usize, prefix: &str, how: &str) -> String {
    let reused = match held.reused {
        0 => String::new(),
        1 => " (1 more is the latest version's, stored already)".to_string(),
        n => format!(" ({n} more are the latest version's, stored already)"),
    };
    let written = held.written;
    if written == 0 {
        let files = crate::words::plural(total, "file", "files");
        let none = match held.reused {
            0 => format!("none of its {total} {files} written whole"),
            n => format!(
                "none of the files it writes written whole ({n} of its {total} {files} {} the latest version's, stored already)",
                if n == 1 { "is" } else { "are" }
            ),
        };
        return format!(
            "{how} with {none} to the object store under {prefix}; no version was recorded; put the folder again"
        );
    }
    format!(
        "{how} after writing {written} of {total} {} to the object store under {prefix}{reused}; no version was recorded, so nothing uses {} yet, and a put of the same folder goes on from {} (it writes only the files not there); put the folder again",
        crate::words::plural(total, "file", "files"),
        if written == 1 { "it" } else { "them" },
        if written == 1 { "it" } else { "them" }
    )
}

/// What a put whose every file is in the object store, but whose version the document store did
/// not record, left: `held.written` files under `prefix`, which nothing names.
fn written_unrecorded(held: Held, prefix: &str) -> String {
    let total = held.written;
    if total == 0 {
        return "no version was recorded; its files are all the latest version's, stored already, so putting the folder again, unchanged, records it without writing any".to_string();
    }
    let (files, they) = match total {
        1 => ("file", "it stays"),
        _ => ("files", "they stay"),
    };
    format!(
        "no version was recorded, so nothing uses the {total} {files} the put wrote to the object store under {prefix} yet; {they} there, and putting the folder again, unchanged, records {} without writing {} again",
        if total == 1 { "it" } else { "them" },
        if total == 1 { "it" } else { "them" }
    )
}

/// The type and settings `artifact.toml` declares (read as a bundle reads it), else the type
/// `files` imply.
fn declared(folder: &Path, files: &[String]) -> Result<(String, Map<String, Value>), RunError> {
    let path = folder.join("artifact.toml");
    let manifest = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let (manifest, problems) = read_artifact_manifest(&text);
            if let Some(problem) = problems.first() {
                return Err(BundleError::one(format!("{}: {problem}", path.display())).into());
            }
            manifest
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => ArtifactManifest::default(),
        Err(e) => {
            return Err(BundleError::one(format!("can't read {}: {e}", path.display())).into())
        }
    };
    // Its id is ignored: a stored artifact's id is the one it is put under (--id).
    let artifact_type = manifest
        .artifact_type
        .unwrap_or_else(|| implied_artifact_type(files).to_string());
    Ok((artifact_type, manifest.config))
}

/// The folder's files relative to it, sorted, as a bundle lists an artifact's (dot entries and
/// `__pycache__` left out, `artifact.toml` too).
fn files_of(folder: &Path) -> Result<Vec<String>, RunError> {
    let mut files = Tree::Disk(folder).files_below("").map_err(|e| {
        BundleError::one(format!("can't read the folder {}: {e}", folder.display()))
    })?;
    files.retain(|f| f != "artifact.toml");
    Ok(files)
}

/// Writes the latest version of the stored artifact `id` into `dest` (a bundle's
/// `artifacts/<name>/`): its files, read from the configured object store (each held to the size and
/// sha256 the artifact recorded), and an `artifact.toml` giving its type and settings. Returns how
/// many files it wrote. `cancel` stops it between files.
pub fn write_out(
    session: &Session,
    id: &str,
    dest: &Path,
    cancel: &Cancel,
) -> Result<usize, RunError> {
    let stores = configured_stores(session)?;
    let doc = super::stored_task::get_document(session, ARTIFACTS, id, None)?;
    let files = super::artifact_objects::listed_files(&doc);
    let recorded = recorded_files(&doc);
    let version = doc.get("version").and_then(Value::as_i64).unwrap_or(0);
    for (rel, url) in &files {
        if let Some(signal) = cancel.signal() {
            return Err(RunError::Interrupted {
                signal,
                what: format!("stopped by a signal while copying the artifact '{id}'"),
            });
        }
        if rel
            .split('/')
            .any(|part| part.is_empty() || part == "." || part == "..")
        {
            return Err(BundleError::one(format!(
                "the artifact '{id}' lists a file at '{rel}', which is not a path inside a folder"
            ))
            .into());
        }
        let recorded = recorded.get(url).copied().unwrap_or_default();
        copy_checked(&stores.objects, url, &dest.join(rel), recorded, cancel).map_err(|e| {
            let again = put_again(id);
            if let (CopyError::Cancelled, Some(signal)) = (&e, cancel.signal()) {
                return RunError::Interrupted {
                    signal,
                    what: format!("stopped by a signal while copying the artifact '{id}'"),
                };
            }
            RunError::from(BundleError::one(match e {
                CopyError::Cancelled => format!("stopped while copying the artifact '{id}'"),
                CopyError::Store(e) => match not_given(&e, id, version) {
                    Some(why) => format!("can't copy {url} into the bundle: {why}"),
                    None => format!("reading {rel} of the artifact '{id}': {}", in_brackets(&e)),
                },
                CopyError::Changed(changed) => format!(
                    "{}, so it is not copied; {again}",
                    not_as_put(stores.objects.as_ref(), url, (rel, id, version), &changed)
                ),
            }))
        })?;
    }
    let mut manifest = toml::Table::new();
    if let Some(Value::String(artifact_type)) = doc.get("type") {
        manifest.insert("type".into(), toml::Value::String(artifact_type.clone()));
    }
    if let Some(Value::Object(config)) = doc.get("config") {
        for (key, value) in config {
            if let Ok(value) = toml::Value::try_from(value) {
                manifest.insert(key.clone(), value);
            }
        }
    }
    let text = toml::to_string(&manifest).map_err(|e| {
        BundleError::one(format!(
            "cannot write the artifact '{id}''s artifact.toml: {e}"
        ))
    })?;
    std::fs::write(dest.join("artifact.toml"), text).map_err(|e| {
        BundleError::one(format!(
            "cannot write {}: {e}",
            dest.join("artifact.toml").display()
        ))
    })?;
    Ok(files.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_changed_among_the_files_names_them_by_what_happened() {
        assert_eq!(files_changed(&[], &[], &[]), None);
        assert_eq!(
            files_changed(&[], &[], &["hello.txt"]).as_deref(),
            Some("hello.txt changed")
        );
        assert_eq!(
            files_changed(&["x"], &["y", "z"], &[]).as_deref(),
            Some("x added, y and z removed")
        );
        assert_eq!(
            files_changed(&[], &[], &["a", "b", "c", "d", "e"]).as_deref(),
            Some("a, b, c and 2 more changed")
        );
    }

    #[test]
    fn changed_settings_are_named_once_each() {
        let map = |v: Value| match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        let before = map(json!({"mode": "a", "same": 1, "gone": true}));
        let now = map(json!({"mode": "b", "same": 1, "new": 2}));
        assert_eq!(
            settings_changed(&before, &now).as_deref(),
            Some("gone, mode and new")
        );
        assert_eq!(settings_changed(&before, &before), None);
    }
}
