//! Writing a bundle's entities to the @local store, before its tasks run: artifacts, then tasks, then
//! evals, each through the bundle ledger under a per-id file lock, so unchanged entities are not written
//! again.
//! A dry run makes the same decisions and writes nothing.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::file_lock::lock_without_waiting;
use crate::bundle::ids::{object_key_segment, sha256_hex_prefix, universe_file_id};
use crate::bundle::tree::{join_rel, Tree};
use crate::bundle::{Artifact, Bundle};
use crate::clock;
use crate::output::Output;
use crate::run::artifact_objects;
use crate::run::cancel::Cancel;
use crate::run::events::{RunEvent, RunObserver};
use crate::run::ledger::{self, Decision, Inputs};
use crate::run::plan::Plan;
use crate::run::recorder::SAY_WAITING_AFTER;
use crate::run::run_stores::RunStores;
use crate::run::stored_artifact::placement::Placement;
use crate::stores::{Document, StoreError, VersionedEntityStore};

pub(super) mod state_folder;

/// Why writing a bundle's entities failed.
#[derive(Debug, thiserror::Error)]
pub enum MaterializeError {
    #[error("{0}")]
    Store(#[from] StoreError),
    /// An artifact's file the object store did not take: nothing of the run was recorded.
    #[error("can't store {file} of the artifact '{artifact}' in the object store, for this run's record of it: {source}{}", store_full_hint(source))]
    StoreArtifactFile {
        artifact: String,
        file: String,
        source: StoreError,
    },
    #[error("can't read {path} of the bundle: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("can't take the lock {path}: {source}{}", read_only_hint(path, source))]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A signal cancelled the run while its entities were written; what was written is whole (an
    /// entity interrupted mid-write is adopted or written anew by the next run).
    #[error("the run was cancelled while its bundle's entities were written")]
    Cancelled,
    /// The bundle would record another version of a pinned task than the one the run was asked
    /// for (its file changed since); nothing was written.
    #[error("the bundle changed since the run was asked for: a run now records version {found} of '{id}', not version {pinned}; nothing was written or run")]
    VersionChanged { id: String, pinned: i64, found: i64 },
    #[error(
        "can't make the locks folder {path}: {source}{}",
        locks_folder_hint(path, source)
    )]
    LocksFolder {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The versions the run uses, by entity id.
pub type Versions = BTreeMap<String, i64>;

/// Writes (or, for a dry run, decides) every entity of the plan, printing one line per entity.
pub fn materialize(
    bundle: &Bundle,
    tree: Tree<'_>,
    plan: &Plan<'_>,
    stores: &RunStores,
    writing: Writing<'_>,
    out: &dyn Output,
) -> Result<Versions, MaterializeError> {
    let Writing {
        dry_run,
        places,
        cancel,
        observer,
        pinned,
    } = writing;
    if !dry_run {
        // Before anything is written: a run held to versions the bundle no longer gives writes none.
        check_pinned_tasks(bundle, stores, plan, pinned)?;
    }
    let decided = |kind: &str, path: &str, id: &str, decision: &Decision| {
        let line = format!("{path}: {}", decision.describe());
        match decision {
            Decision::Reuse { .. } => out.detail(&line),
            _ => out.line(&line),
        }
        observer.event(&RunEvent::EntityDecided {
            kind: kind.to_string(),
            path: path.to_string(),
            id: id.to_string(),
            version: decision.version(),
            written: !matches!(decision, Decision::Reuse { .. }),
            reasons: decision.reasons(),
        });
    };
    let mut versions = Versions::new();
    let mut locks = Locks::new(places, cancel, out);
    for artifact in &plan.artifacts {
        cancel.check()?;
        let files = hash_files(tree, artifact, cancel)?;
        let inputs = Inputs {
            entity_type: artifact.artifact_type.clone(),
            config_sha256: ledger::sha256_json(&Value::Object(artifact.config.clone())),
            files: files
                .iter()
                .map(|(k, (h, _))| (k.clone(), h.clone()))
                .collect(),
        };
        let decision = decide(
            bundle,
            stores,
            "artifacts",
            &artifact.id,
            &inputs,
            dry_run,
            &mut locks,
        )?;
        let decision = unless_objects_gone(stores, &artifact.id, decision)?;
        if let (false, Decision::Write { version, .. }) = (dry_run, &decision) {
            let docs = artifact_documents(
                bundle,
                tree,
                artifact,
                (*version, &files),
                stores,
                (places, cancel),
            )?;
            write(
                bundle,
                stores,
                "artifacts",
                &artifact.id,
                *version,
                &inputs,
                docs,
            )?;
        } else if let (false, Decision::Adopt { version }) = (dry_run, &decision) {
            ledger::mark(
                stores.documents.as_ref(),
                &bundle.id_root,
                &artifact.id,
                *version,
                &inputs,
                "done",
            )?;
        }
        decided("artifact", &artifact.path, &artifact.id, &decision);
        versions.insert(artifact.id.clone(), decision.version());
    }
    for planned in &plan.tasks {
        cancel.check()?;
        let task = planned.task;
        let (steps, inputs) = task_inputs(planned);
        let decision = decide(
            bundle, stores, "tasks", &task.id, &inputs, dry_run, &mut locks,
        )?;
        if !dry_run {
            // Again under the id's lock: another run may have written a version since the check.
            check_pinned(pinned, &task.id, decision.version())?;
        }
        if let (false, Decision::Write { version, .. }) = (dry_run, &decision) {
            let mut doc = entity_base(bundle, &task.id, "task", *version, &task.name);
            doc.insert("steps".into(), steps);
            write(
                bundle,
                stores,
                "tasks",
                &task.id,
                *version,
                &inputs,
                vec![("tasks", doc)],
            )?;
        } else if let (false, Decision::Adopt { version }) = (dry_run, &decision) {
            ledger::mark(
                stores.documents.as_ref(),
                &bundle.id_root,
                &task.id,
                *version,
                &inputs,
                "done",
            )?;
        }
        decided("task", &task.path, &task.id, &decision);
        versions.insert(task.id.clone(), decision.version());
    }
    for planned in &plan.evals {
        cancel.check()?;
        let eval = planned.eval;
        let tasks = json!(planned.task_ids);
        let inputs = Inputs {
            entity_type: eval.eval_type.clone(),
            config_sha256: ledger::sha256_json(&json!({"tasks": tasks})),
            files: BTreeMap::new(),
        };
        let decision = decide(
            bundle, stores, "evals", &eval.id, &inputs, dry_run, &mut locks,
        )?;
        if let (false, Decision::Write { version, .. }) = (dry_run, &decision) {
            let mut doc = entity_base(bundle, &eval.id, &eval.eval_type, *version, &eval.name);
            doc.insert("tasks".into(), tasks);
            write(
                bundle,
                stores,
                "evals",
                &eval.id,
                *version,
                &inputs,
                vec![("evals", doc)],
            )?;
        } else if let (false, Decision::Adopt { version }) = (dry_run, &decision) {
            ledger::mark(
                stores.documents.as_ref(),
                &bundle.id_root,
                &eval.id,
                *version,
                &inputs,
                "done",
            )?;
        }
        decided("eval", &eval.path, &eval.id, &decision);
        versions.insert(eval.id.clone(), decision.version());
    }
    Ok(versions)
}

/// A planned task's steps as its document holds them, and what the ledger decides its version by.
fn task_inputs(planned: &crate::run::plan::PlannedTask<'_>) -> (Value, Inputs) {
    let steps = Value::Array(planned.step_docs());
    let inputs = Inputs {
        entity_type: "task".to_string(),
        config_sha256: ledger::sha256_json(&steps),
        files: BTreeMap::new(),
    };
    (steps, inputs)
}

/// Decides (writing nothing, taking no lock) the version of each pinned task of the plan, and
/// refuses the run when one is not the version pinned.
fn check_pinned_tasks(
    bundle: &Bundle,
    stores: &RunStores,
    plan: &Plan<'_>,
    pinned: &Versions,
) -> Result<(), MaterializeError> {
    for planned in plan
        .tasks
        .iter()
        .filter(|t| pinned.contains_key(&t.task.id))
    {
        let (_, inputs) = task_inputs(planned);
        let decision = ledger::decide(
            stores.documents.as_ref(),
            "tasks",
            &bundle.id_root,
            &planned.task.id,
            &inputs,
        )?;
        check_pinned(pinned, &planned.task.id, decision.version())?;
    }
    Ok(())
}

/// An error when `id` is pinned to another version than `version`.
fn check_pinned(pinned: &Versions, id: &str, version: i64) -> Result<(), MaterializeError> {
    match pinned.get(id) {
        Some(&want) if want != version => Err(MaterializeError::VersionChanged {
            id: id.to_string(),
            pinned: want,
            found: version,
        }),
        _ => Ok(()),
    }
}

fn decide(
    bundle: &Bundle,
    stores: &RunStores,
    collection: &str,
    id: &str,
    inputs: &Inputs,
    dry_run: bool,
    locks: &mut Locks<'_>,
) -> Result<Decision, MaterializeError> {
    if !dry_run {
        locks.take(id)?;
    }
    Ok(ledger::decide(
        stores.documents.as_ref(),
        collection,
        &bundle.id_root,
        id,
        inputs,
    )?)
}

/// A reused artifact version whose files the object store no longer holds is written anew (see
/// [`artifact_objects`]).
fn unless_objects_gone(
    stores: &RunStores,
    id: &str,
    decision: Decision,
) -> Result<Decision, MaterializeError> {
    let Decision::Reuse { version } = decision else {
        return Ok(decision);
    };
    let holding = artifact_objects::holding(
        stores.documents.as_ref(),
        stores.objects.as_ref(),
        id,
        version,
    )?;
    Ok(match holding.reason(version) {
        Some(reason) => Decision::Write {
            version: version + 1,
            reasons: vec![reason],
        },
        None => decision,
    })
}

/// Records the write as pending, writes the documents, then marks it done.
fn write(
    bundle: &Bundle,
    stores: &RunStores,
    collection: &str,
    id: &str,
    version: i64,
    inputs: &Inputs,
    docs: Vec<(&str, Document)>,
) -> Result<(), MaterializeError> {
    let store = stores.documents.as_ref();
    ledger::mark(store, &bundle.id_root, id, version, inputs, "pending")?;
    store.ensure_index(collection, &["id", "version"], true)?;
    for (coll, doc) in docs {
        store.ensure_index(coll, &["id", "version"], true)?;
        store.insert(coll, &doc)?;
    }
    ledger::mark(store, &bundle.id_root, id, version, inputs, "done")?;
    Ok(())
}

fn entity_base(bundle: &Bundle, id: &str, entity_type: &str, version: i64, name: &str) -> Document {
    let mut doc = Map::new();
    doc.insert("id".into(), json!(id));
    doc.insert("type".into(), json!(entity_type));
    doc.insert("version".into(), json!(version));
    doc.insert("name".into(), json!(name));
    doc.insert("bundle".into(), json!(bundle.id_root));
    doc.insert("created_at_utc".into(), json!(clock::iso_now()));
    doc
}

/// Relative path → (sha256, size) for each file of an artifact.
type FileHashes = BTreeMap<String, (String, u64)>;

fn hash_files(
    tree: Tree<'_>,
    artifact: &Artifact,
    cancel: &Cancel,
) -> Result<FileHashes, MaterializeError> {
    let mut out = BTreeMap::new();
    for rel in &artifact.files {
        cancel.check()?;
        let path = join_rel(&artifact.path, rel);
        let hashed = tree.hash(&path).map_err(|source| MaterializeError::Read {
            path: path.clone(),
            source,
        })?;
        out.insert(rel.clone(), hashed);
    }
    Ok(out)
}

/// Uploads an artifact's files and builds its documents: the artifact, and for a universe one `file`
/// artifact per file. A file the id's latest recorded version holds with the same bytes names that
/// version's object, and the rest go under a prefix derived from the files (see
/// [`placement`](crate::run::stored_artifact::placement)), so a run stopped part-way and run again
/// writes only what it had not. An object is named again only once read back and found to hold the
/// file's bytes; `cancel` stops that reading.
fn artifact_documents(
    bundle: &Bundle,
    tree: Tree<'_>,
    artifact: &Artifact,
    (version, files): (i64, &FileHashes),
    stores: &RunStores,
    (places, cancel): (&Places, &Cancel),
) -> Result<Vec<(&'static str, Document)>, MaterializeError> {
    let latest = VersionedEntityStore::new(stores.documents.clone(), "artifacts", &[])?
        .get(&artifact.id, None)?;
    let placement = Placement::new(
        &stores.objects,
        cancel,
        &format!(
            "{}artifacts/{}/{}",
            places.fixture_prefix(),
            artifact.artifact_type,
            object_key_segment(&artifact.id),
        ),
        files
            .iter()
            .map(|(rel, (sha, _))| (rel.as_str(), sha.as_str())),
        latest.as_ref(),
        false,
    );
    let prefix = placement.prefix();
    let mut listed = Vec::new();
    let mut docs = Vec::new();
    for (rel, (sha, size)) in files {
        let source = join_rel(&artifact.path, rel);
        let not_stored = |e: StoreError| MaterializeError::StoreArtifactFile {
            artifact: artifact.id.clone(),
            file: rel.clone(),
            source: e,
        };
        let stored = placement.stored(rel, sha, *size);
        // A read back stopped by a cancel found nothing: the run stops rather than write the file.
        cancel.check()?;
        let url = match (stored, tree.disk_path(&source)) {
            (Some(stored), _) => stored.url().to_string(),
            (None, Some(path)) => placement
                .write(rel, sha, *size, &mut |key| {
                    stores
                        .objects
                        .put_file(key, &path, crate::stores::DEFAULT_CONTENT_TYPE)
                })
                .map_err(not_stored)?,
            (None, None) => {
                let bytes = tree.read(&source).map_err(|e| MaterializeError::Read {
                    path: source.clone(),
                    source: e,
                })?;
                placement
                    .write(rel, sha, *size, &mut |key| {
                        stores
                            .objects
                            .put(key, &bytes, crate::stores::DEFAULT_CONTENT_TYPE, false)
                    })
                    .map_err(not_stored)?
            }
        };
        let mut entry = json!({"path": rel, "object_url": url, "sha256": sha, "size": size});
        if artifact.artifact_type == "file_artifact_universe" {
            let file_id = universe_file_id(&artifact.id, rel);
            let file_version =
                ledger::latest_version(stores.documents.as_ref(), "artifacts", &file_id)?
                    .unwrap_or(0)
                    + 1;
            let mut doc = entity_base(bundle, &file_id, "file", file_version, rel);
            doc.insert("universe_id".into(), json!(artifact.id));
            doc.insert("universe_version".into(), json!(version));
            let name = rel.rsplit('/').next().unwrap_or(rel);
            doc.insert(
                "files".into(),
                json!([{"path": name, "object_url": url, "sha256": sha, "size": size}]),
            );
            docs.push(("artifacts", doc));
            entry["artifact_id"] = json!(file_id);
        }
        listed.push(entry);
    }
    let mut doc = entity_base(
        bundle,
        &artifact.id,
        &artifact.artifact_type,
        version,
        &artifact.name,
    );
    doc.insert("files".into(), Value::Array(listed));
    doc.insert("object_prefix".into(), json!(prefix));
    if !artifact.config.is_empty() {
        doc.insert("config".into(), Value::Object(artifact.config.clone()));
    }
    docs.insert(0, ("artifacts", doc));
    Ok(docs)
}

/// How the entities are written: for real or not (a dry run), where, and what stops it.
#[derive(Clone, Copy)]
pub struct Writing<'a> {
    pub dry_run: bool,
    pub places: &'a Places,
    pub cancel: &'a Cancel,
    /// Told each entity's version as it is decided.
    pub observer: &'a dyn RunObserver,
    /// Task versions the run must record, by task id: when the bundle would record another (its
    /// file changed since the run was asked for), nothing is written ([`MaterializeError::VersionChanged`]).
    pub pinned: &'a Versions,
}

/// Where a run writes outside the stores, as the session's environment sets it.
#[derive(Debug, Clone, Default)]
pub struct Places {
    /// The per-id locks folder (`<state root>/locks`).
    pub locks_dir: PathBuf,
    /// `$AGENT_ENV_FIXTURE_PREFIX`, when set: artifacts' object keys start with it.
    pub fixture_prefix: Option<String>,
    /// The `local` sandbox provider's root (`$AGENT_ENV_LOCAL_SANDBOX_DIR`).
    pub sandbox_dir: PathBuf,
    /// Which document store the run's task instances go to.
    pub instances_in: super::liveness::InstancesIn,
    /// Which store that is, for the configured one (a journal keeps a task's end for that store
    /// alone); `None` for a bundle run's, or when it could not be told.
    pub document_store: Option<crate::config::store_identity::StoreIdentity>,
}

impl Places {
    /// `<fixture prefix>/` (empty by default).
    fn fixture_prefix(&self) -> String {
        match self.fixture_prefix.as_deref() {
            Some(p) if !p.trim_end_matches('/').is_empty() => {
                format!("{}/", p.trim_end_matches('/'))
            }
            _ => String::new(),
        }
    }
}

/// The variable that puts a prefix before the object keys of a bundle run's artifacts (tests and
/// fixtures several checkouts share in one store).
pub const FIXTURE_PREFIX_VAR: &str = "AGENT_ENV_FIXTURE_PREFIX";

/// `$AGENT_ENV_FIXTURE_PREFIX` (`value`) when it is a prefix object keys can start with: words of
/// ASCII letters, digits, `-`, `_` and `.` ([`is_plain`]), each at most [`LONGEST_PART`] bytes,
/// joined by single `/`s (a `/` may end it, and is trimmed), none of them `.` or `..`, with no
/// leading `/`; `None` when unset or empty. Anything else is refused, naming the variable, before
/// the run writes anything: its keys would climb out of the store, name another key than written,
/// or be refused by the store once the run has begun.
pub fn fixture_prefix_of(value: Option<String>) -> Result<Option<String>, String> {
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    match prefix_fault(&value) {
        None => Ok(Some(value)),
        Some(fault) => Err(format!(
            "{FIXTURE_PREFIX_VAR}=\"{}\" {fault}, so it can't start the object keys of the run's artifacts; it takes words of letters, digits, '-', '_' and '.' joined by '/' (such as fixtures/team-a), each at most {LONGEST_PART} bytes, none of them '.' or '..', with no leading '/': set it to such a prefix, or unset it",
            value.escape_debug()
        )),
    }
}

/// The longest part of a fixture prefix, in bytes: the longest file name the local object store
/// can make.
const LONGEST_PART: usize = 255;

/// The characters a fixture prefix's words are made of: ASCII letters and digits, `-`, `_`, `.`.
fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// Why `value` is no fixture prefix, or `None` when it is one.
fn prefix_fault(value: &str) -> Option<String> {
    let words = value.strip_suffix('/').unwrap_or(value);
    let parts = || words.split('/');
    if value.starts_with('/') {
        Some("starts with '/'".to_string())
    } else if parts().any(|w| w == "..") {
        Some("has a '..' part".to_string())
    } else if parts().any(|w| w == ".") {
        Some("has a '.' part".to_string())
    } else if parts().any(str::is_empty) {
        Some("has an empty part (two '/' in a row)".to_string())
    } else if let Some(long) = parts().find(|w| w.len() > LONGEST_PART) {
        let shown: String = long.chars().take(20).collect();
        Some(format!(
            "has a part of {} bytes ('{}…'), longer than a file name may be",
            long.len(),
            shown.escape_debug()
        ))
    } else {
        value.chars().find(|&c| c != '/' && !is_plain(c)).map(|c| {
            format!(
                "holds '{}', which is not a letter, a digit, '-', '_' or '.'",
                c.escape_debug()
            )
        })
    }
}

/// Per-id file locks, `<locks dir>/entity-<sha256(id)[:16]>.lock`, held until dropped. A lock's
/// file is removed as it is released (one file per id ever written piled up): a run that opened the
/// file before it went and then gets the lock finds the path no longer names its file, and opens it
/// anew.
struct Locks<'a> {
    dir: &'a Path,
    /// A lock another run holds is waited for until this run is cancelled.
    cancel: &'a Cancel,
    out: &'a dyn Output,
    held: BTreeMap<String, (PathBuf, File)>,
    announced: bool,
    /// The folder is known to exist.
    dir_made: bool,
}

impl<'a> Locks<'a> {
    fn new(places: &'a Places, cancel: &'a Cancel, out: &'a dyn Output) -> Locks<'a> {
        Locks {
            dir: &places.locks_dir,
            cancel,
            out,
            held: BTreeMap::new(),
            announced: false,
            dir_made: false,
        }
    }

    fn take(&mut self, id: &str) -> Result<(), MaterializeError> {
        if self.held.contains_key(id) {
            return Ok(());
        }
        let dir = self.dir.to_path_buf();
        if !self.dir_made {
            crate::stores::local::private_dir::create_private_dir_all(&dir).map_err(|source| {
                MaterializeError::LocksFolder {
                    path: dir.clone(),
                    source,
                }
            })?;
            self.dir_made = true;
        }
        let path = dir.join(format!(
            "entity-{}.lock",
            sha256_hex_prefix(id.as_bytes(), 16)
        ));
        let file = loop {
            let file = self.lock_file(&path)?;
            // The run that held it may have removed the file as it let go: then this lock guards
            // nothing, and the path's file (anew) is the one to lock.
            if names_file(&path, &file) {
                break file;
            }
        };
        self.held.insert(id.to_string(), (path, file));
        Ok(())
    }

    /// Opens (or makes) the lock file at `path` and locks it, waiting while another run holds it.
    fn lock_file(&mut self, path: &Path) -> Result<File, MaterializeError> {
        let mut options = File::options();
        options.create(true).truncate(false).read(true).write(true);
        // The user's alone, whatever the umask.
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options
            .open(path)
            .map_err(|source| MaterializeError::Lock {
                path: path.to_path_buf(),
                source,
            })?;
        let waiting_since = std::time::Instant::now();
        // Polled rather than blocked on, so that Ctrl-C stops the wait.
        while !lock_without_waiting(&file, libc::LOCK_EX) {
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::WouldBlock {
                return Err(MaterializeError::Lock {
                    path: path.to_path_buf(),
                    source: error,
                });
            }
            // Said once the wait is long enough to notice, not for every run that writes its
            // ids a moment after another; read then, the holder has written its id in the file.
            if !self.announced && waiting_since.elapsed() >= SAY_WAITING_AFTER {
                let stopped_by = if self.cancel.watches_signals() {
                    StoppedBy::Signals
                } else {
                    StoppedBy::Caller
                };
                self.out
                    .waiting(&waiting_for(holder_of(&file), path, stopped_by));
                self.announced = true;
            }
            self.cancel.check()?;
            std::thread::sleep(LOCK_POLL);
        }
        write_holder(&file);
        Ok(file)
    }
}

impl Drop for Locks<'_> {
    /// Each lock's file goes before the lock is let go, so no run locks a file while it is removed.
    fn drop(&mut self) {
        for (path, _file) in self.held.values() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// What to do about an object store whose disk is full: make room, and what of agent-env's makes
/// none (stored objects are never deleted by agent-env).
fn store_full_hint(source: &StoreError) -> &'static str {
    match source {
        StoreError::Io {
            raw_os_error: Some(libc::ENOSPC | libc::EDQUOT),
            ..
        } => "; free space on the file system that holds the object store, then run again (agent-env deletes no stored objects: `agent-env task prune` deletes old task instance records and leaves the objects their steps wrote, and the document store keeps the space those records took for its later ones)",
        _ => "",
    }
}

/// What to do about a lock at `lock` that could not be made on a read-only file system, or in a
/// state folder this user may not write ([`state_folder::hint`]).
fn read_only_hint(lock: &Path, source: &std::io::Error) -> String {
    lock.parent()
        .and_then(|locks| state_folder::hint(locks, source))
        .unwrap_or_default()
}

/// What to do about a locks folder at `locks` that could not be made: as for a lock
/// ([`state_folder::hint`]), else that it must be a folder agent-env can write.
fn locks_folder_hint(locks: &Path, source: &std::io::Error) -> String {
    state_folder::hint(locks, source).unwrap_or_else(|| {
        "; it must be a folder agent-env can write: fix it, or point XDG_STATE_HOME at a writable place"
            .to_string()
    })
}

/// How a waiting run is stopped, which its message tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoppedBy {
    /// The process's signals: a person's Ctrl-C, a script's SIGTERM.
    Signals,
    /// Its caller's cancel handle alone: the explorer's Cancel (a signal to the process would stop
    /// the explorer and every run it started).
    Caller,
}

/// What a run says as it starts waiting for the lock at `path`, held by the process `holder` (when
/// known): which process (this one, when a run beside it in the same process holds it), whether it
/// is stopped (a run paused with Ctrl-Z holds its locks), and how this run's wait is stopped.
fn waiting_for(holder: Option<u32>, path: &Path, stopped_by: StoppedBy) -> String {
    let who = match holder {
        Some(pid) if pid == std::process::id() => "another run started beside it".to_string(),
        Some(pid) => format!("another agent-env run (pid {pid}{})", stopped_note(pid)),
        None => "another agent-env run".to_string(),
    };
    let how = match stopped_by {
        StoppedBy::Signals => format!(
            "Ctrl-C in a terminal, SIGTERM from a script (kill {})",
            std::process::id()
        ),
        StoppedBy::Caller => "Cancel on its Run page in the explorer".to_string(),
    };
    format!(
        "waiting for {who} to finish writing this bundle's ids (it holds {}); cancelling this run stops the wait: {how}",
        path.display(),
    )
}

/// `, which is stopped: kill -CONT <pid> lets it go on` when the process `pid` is stopped.
fn stopped_note(pid: u32) -> String {
    let stopped = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('T'))
        })
        .unwrap_or(false);
    match stopped {
        true => format!(", which is stopped: kill -CONT {pid} lets it go on"),
        false => String::new(),
    }
}

/// Writes this process's id into the lock file it now holds, so a run waiting for it can name it
/// where `/proc/locks` does not (another pid namespace, a file system that reports other inodes).
/// A lock whose file cannot be written still locks: the waiting run then names no process.
fn write_holder(mut file: &File) {
    use std::io::{Seek, Write};
    let _ = file
        .set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| writeln!(file, "{}", std::process::id()));
}

/// The process holding the lock on `file`: the one `/proc/locks` names, else the one whose id the
/// file holds ([`write_holder`]); `None` when neither says.
fn holder_of(file: &File) -> Option<u32> {
    holder_in_proc_locks(file).or_else(|| holder_written_in(file))
}

/// The process id the lock file holds, when it holds one.
fn holder_written_in(mut file: &File) -> Option<u32> {
    use std::io::{Read, Seek};
    let mut text = String::new();
    file.rewind().ok()?;
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok().filter(|pid| *pid > 0)
}

/// The process holding the flock on `file`, as `/proc/locks` says (its lines name each lock's
/// holder and its file's inode); `None` without `/proc` or when the lock is gone.
fn holder_in_proc_locks(file: &File) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let ino = file.metadata().ok()?.ino().to_string();
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        // `1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF`
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (kind, pid, file_id) = (fields.get(1)?, fields.get(4)?, fields.get(5)?);
        (*kind == "FLOCK" && file_id.rsplit(':').next() == Some(ino.as_str()))
            .then(|| pid.parse().ok())
            .flatten()
    })
}

/// Whether `path` still names the file `file` has open.
fn names_file(path: &Path, file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

/// How often a lock another run holds is tried again.
const LOCK_POLL: std::time::Duration = std::time::Duration::from_millis(50);

trait CheckCancel {
    /// `Err(Cancelled)` once the run is cancelled.
    fn check(&self) -> Result<(), MaterializeError>;
}

impl CheckCancel for Cancel {
    fn check(&self) -> Result<(), MaterializeError> {
        match self.is_cancelled() {
            true => Err(MaterializeError::Cancelled),
            false => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixture_prefix_is_words_joined_by_slashes() {
        let longest = "y".repeat(255);
        for good in [
            "fixtures",
            "fixtures/team-a",
            "fixtures/team-a/",
            "a..b/.c",
            "Team_2/run-1.x",
            longest.as_str(),
        ] {
            assert_eq!(
                fixture_prefix_of(Some(good.to_string())),
                Ok(Some(good.to_string()))
            );
        }
        assert_eq!(fixture_prefix_of(None), Ok(None));
        assert_eq!(fixture_prefix_of(Some(String::new())), Ok(None));
        let (too_long, long_inside) = ("y".repeat(256), format!("a/{}/b", "y".repeat(300)));
        for (bad, fault) in [
            ("../../escape", "has a '..' part"),
            ("a/../b", "has a '..' part"),
            ("/abs", "starts with '/'"),
            ("/", "starts with '/'"),
            ("a//b", "has an empty part"),
            ("./a", "has a '.' part"),
            ("a\0b", "holds '\\0'"),
            ("a b", "holds ' '"),
            ("a\\b", "holds '\\\\'"),
            ("~/x", "holds '~'"),
            ("a\tb", "holds '\\t'"),
            ("café", "holds 'é'"),
            (
                too_long.as_str(),
                "has a part of 256 bytes ('yyyyyyyyyyyyyyyyyyyy…')",
            ),
            (long_inside.as_str(), "has a part of 300 bytes"),
        ] {
            let e = fixture_prefix_of(Some(bad.to_string())).unwrap_err();
            assert!(
                e.starts_with("AGENT_ENV_FIXTURE_PREFIX=\"") && e.contains(fault),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_lock_on_a_read_only_file_system_says_what_to_do() {
        let error = MaterializeError::Lock {
            path: PathBuf::from("/state/locks/entity-x.lock"),
            source: std::io::Error::from_raw_os_error(libc::EROFS),
        };
        assert!(error
            .to_string()
            .ends_with("mounted read-only: point XDG_STATE_HOME at a writable place (task list and task get-instance still read it)"));
        // A state folder of this user's own.
        let state = tempfile::tempdir().unwrap();
        let other = MaterializeError::Lock {
            path: state.path().join("locks/entity-x.lock"),
            source: std::io::Error::from_raw_os_error(libc::EACCES),
        };
        assert!(other
            .to_string()
            .ends_with("not writable by this user: give it back its write permission (chmod u+w, or chown it to this user), or point XDG_STATE_HOME at a writable place"));
        let other = MaterializeError::Lock {
            path: PathBuf::from("/state/locks/entity-x.lock"),
            source: std::io::Error::from_raw_os_error(libc::EIO),
        };
        assert!(!other.to_string().contains("XDG_STATE_HOME"));
    }

    /// The lock's holder is named, and said to be stopped when it is.
    #[test]
    fn a_wait_names_the_process_holding_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("entity-y.lock");
        let held = File::create(&path).unwrap();
        assert!(lock_without_waiting(&held, libc::LOCK_EX));
        let waiting = File::open(&path).unwrap();
        assert_eq!(holder_of(&waiting), Some(std::process::id()));
        // A run beside this one in the same process (the explorer's) holds it.
        let said = waiting_for(holder_of(&waiting), &path, StoppedBy::Caller);
        assert!(
            said.starts_with("waiting for another run started beside it to finish"),
            "{said}"
        );
        assert!(
            said.ends_with(
                "; cancelling this run stops the wait: Cancel on its Run page in the explorer"
            ),
            "{said}"
        );
        // Another process holds it, and this run stops by its signals.
        let said = waiting_for(Some(1), &path, StoppedBy::Signals);
        assert!(
            said.starts_with("waiting for another agent-env run (pid 1) to finish"),
            "{said}"
        );
        assert!(
            said.ends_with(&format!(
                "; cancelling this run stops the wait: Ctrl-C in a terminal, SIGTERM from a script (kill {})",
                std::process::id()
            )),
            "{said}"
        );
        drop(held);
        assert_eq!(holder_of(&waiting), None);
    }

    /// A lock's holder writes its id into the file, so a run waiting for it names it even where
    /// `/proc/locks` does not.
    #[test]
    fn a_lock_file_names_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("entity-z.lock");
        let held = File::options()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        std::fs::write(
            &path,
            "4242424\nleft by an earlier holder, longer than an id",
        )
        .unwrap();
        write_holder(&held);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{}\n", std::process::id())
        );
        let waiting = File::open(&path).unwrap();
        assert_eq!(holder_written_in(&waiting), Some(std::process::id()));
        std::fs::write(&path, "").unwrap();
        assert_eq!(holder_written_in(&waiting), None);
        assert!(waiting_for(None, &path, StoppedBy::Signals)
            .starts_with("waiting for another agent-env run to finish writing this bundle's ids"));
    }

    /// A run that opened a lock file before its holder removed it, and then gets the lock, sees the
    /// path no longer names what it locked (and opens the path anew).
    #[test]
    fn a_lock_file_removed_or_replaced_is_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("entity-x.lock");
        let opened_before = File::create(&path).unwrap();
        assert!(names_file(&path, &opened_before));
        std::fs::remove_file(&path).unwrap();
        assert!(!names_file(&path, &opened_before), "removed");
        let anew = File::create(&path).unwrap();
        assert!(!names_file(&path, &opened_before), "replaced");
        assert!(names_file(&path, &anew));
    }
}
