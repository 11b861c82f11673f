//! Garbage collection: removes blobs no index row references (left behind by `allow_overwrite`) and
//! staged files abandoned by writers that died, while other processes keep writing.
//!
//! # The protocol
//!
//! Writers (see `store.rs` and `index.rs`):
//! 1. store the blob first: stage a file in the blob's shard directory (holding an exclusive `flock` on it
//!    until it is renamed and closed), then `rename(2)` it to `<digest>`; or find the blob already there;
//! 2. then, in one SQLite `BEGIN IMMEDIATE` transaction, check the blob file still exists and insert the row.
//!    If the blob is gone, a gc removed it after step 1: go back to step 1.
//!
//! gc:
//! 1. takes `<root>/gc.lock` (exclusive, non-blocking: one gc at a time) and notes its start time;
//! 2. reads the digests the index references, then lists the shard directories;
//! 3. a blob is a candidate when no row referenced it in step 2 and its mtime is older than gc's start
//!    (a blob written after gc started is left for the next run: that spares a writer a second copy, and
//!    is not what makes gc safe);
//! 4. removes candidates in batches, each batch inside one `BEGIN IMMEDIATE` transaction that re-checks
//!    that no row references the digest before taking the blob away: it renames it to `.trash-<digest>`
//!    (a rename is quick, so writers wait for the index briefly), and unlinks the trash after the commit.
//!    A trash file left by a gc that died is removed by the next one; nothing else uses those names.
//!
//! Why no live blob is lost: a writer's check-and-insert (writer step 2) and gc's check-and-unlink (gc step
//! 4) each run inside an IMMEDIATE transaction, and SQLite lets only one such transaction run at a time. If
//! gc's runs first, the writer finds the blob gone and stores it again; if the writer's runs first, gc sees
//! its row and keeps the blob. Readers hold the blob open once they found it, and Unix keeps an unlinked
//! open file readable.
//!
//! Staged files: gc removes a `.staged-*` file only when it is older than the grace period *and* gc can take
//! its `flock` without waiting (a live writer holds it). It unlinks by the staged name, which a rename to
//! the blob's name has already retired, so it can never remove a blob this way.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use super::blobs::{is_digest, STAGED_PREFIX, TRASH_PREFIX};
use super::error::{CasError, CasResult};
use super::lock::{try_lock_exclusive, unlock};
use super::store::ContentAddressedObjectStore;

/// Candidates removed per index transaction, so writers wait for the index briefly.
const BATCH: usize = 64;

/// How gc treats young files.
#[derive(Debug, Clone)]
pub struct GcOptions {
    /// Staged files younger than this are left alone even when no writer holds them.
    pub staged_grace: Duration,
}

impl Default for GcOptions {
    fn default() -> GcOptions {
        GcOptions {
            staged_grace: Duration::from_secs(3600),
        }
    }
}

/// What one gc run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GcReport {
    /// Blobs on disk when gc listed the shards.
    pub blobs_seen: usize,
    /// Blobs removed because nothing referenced them.
    pub blobs_removed: usize,
    /// Their total size in bytes.
    pub bytes_removed: u64,
    /// Unreferenced blobs kept because they were written after gc started.
    pub blobs_kept_young: usize,
    /// Abandoned staged files removed (and trash left by a gc that died).
    pub staged_removed: usize,
    /// Staged files kept (younger than the grace period, or held by a live writer).
    pub staged_kept: usize,
    /// Of those, the ones a live writer held.
    pub staged_kept_in_use: usize,
    /// The bytes the kept staged files take.
    pub staged_kept_bytes: u64,
    /// Digests the index references whose blob is missing (files removed by hand; never by gc).
    pub dangling_digests: Vec<String>,
}

impl ContentAddressedObjectStore {
    /// Removes unreferenced blobs and abandoned staged files; safe while other processes write.
    pub fn gc(&self, options: &GcOptions) -> CasResult<GcReport> {
        let mut report = GcReport::default();
        if !self.root().is_dir() {
            return Ok(report);
        }
        let _lock = GcLock::acquire(self.root())?;
        let started = SystemTime::now();
        let referenced = self.index().referenced_digests()?;
        let mut candidates = Vec::new();
        let mut on_disk = std::collections::HashSet::new();
        for entry in self.blobs().entries()? {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let path = entry.path();
            if name.starts_with(TRASH_PREFIX) {
                if remove_if_present(&path)? {
                    report.staged_removed += 1;
                }
                continue;
            }
            if name.starts_with(STAGED_PREFIX) {
                match remove_abandoned_staged(&path, started, options.staged_grace)? {
                    Staged::Removed => report.staged_removed += 1,
                    Staged::Gone => {}
                    kept => {
                        report.staged_kept += 1;
                        report.staged_kept_in_use += usize::from(kept == Staged::InUse);
                        report.staged_kept_bytes +=
                            fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                    }
                }
                continue;
            }
            if !is_digest(name) {
                continue;
            }
            report.blobs_seen += 1;
            on_disk.insert(name.to_string());
            if referenced.contains(name) {
                continue;
            }
            match modified(&path)? {
                Some(mtime) if mtime < started => candidates.push(name.to_string()),
                Some(_) => report.blobs_kept_young += 1,
                None => {}
            }
        }
        let mut dangling: Vec<String> = referenced.difference(&on_disk).cloned().collect();
        dangling.sort();
        report.dangling_digests = dangling;

        for batch in candidates.chunks(BATCH) {
            let mut trash = Vec::new();
            let moved = self.index().remove_unreferenced(batch, |digest| {
                let path = self.blobs().path(digest);
                let size = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                let trashed = path.with_file_name(format!("{TRASH_PREFIX}{digest}"));
                match fs::rename(&path, &trashed) {
                    Ok(()) => {
                        trash.push((trashed, size));
                        Ok(true)
                    }
                    Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
                    Err(err) => Err(CasError::io("move to the trash", path)(err)),
                }
            })?;
            report.blobs_removed += moved.len();
            for (trashed, size) in trash {
                remove_if_present(&trashed)?;
                report.bytes_removed += size;
            }
        }
        Ok(report)
    }
}

/// What gc did with one staged file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Staged {
    Removed,
    /// Kept: younger than the grace period.
    Young,
    /// Kept: a live writer holds its lock.
    InUse,
    /// It vanished meanwhile (its writer finished).
    Gone,
}

/// Removes a staged file when it is past the grace period and no writer holds its lock.
fn remove_abandoned_staged(path: &Path, started: SystemTime, grace: Duration) -> CasResult<Staged> {
    let Some(mtime) = modified(path)? else {
        return Ok(Staged::Gone);
    };
    let old_enough = started
        .checked_sub(grace)
        .is_some_and(|threshold| mtime <= threshold);
    if !old_enough {
        return Ok(Staged::Young);
    }
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Staged::Gone),
        Err(err) => return Err(CasError::io("open", path)(err)),
    };
    if !try_lock_exclusive(&file).map_err(CasError::io("lock", path))? {
        return Ok(Staged::InUse);
    }
    match fs::remove_file(path) {
        Ok(()) => Ok(Staged::Removed),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(Staged::Gone),
        Err(err) => Err(CasError::io("remove", path)(err)),
    }
}

/// Unlinks `path`; `false` when it was already gone.
fn remove_if_present(path: &Path) -> CasResult<bool> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(CasError::io("remove", path)(err)),
    }
}

/// A file's mtime, `None` when it vanished meanwhile.
fn modified(path: &Path) -> CasResult<Option<SystemTime>> {
    match fs::metadata(path).and_then(|meta| meta.modified()) {
        Ok(mtime) => Ok(Some(mtime)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(CasError::io("inspect", path)(err)),
    }
}

/// `<root>/gc.lock`, held exclusively for one gc run (released when dropped).
struct GcLock {
    file: File,
}

impl Drop for GcLock {
    fn drop(&mut self) {
        // Unlock before the close: a process spawned by another thread may hold a copy of the fd
        // until it execs, and the next gc would find the lock taken.
        let _ = unlock(&self.file);
    }
}

impl GcLock {
    fn acquire(root: &Path) -> CasResult<GcLock> {
        let path: PathBuf = root.join("gc.lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(CasError::io("open", &path))?;
        if !try_lock_exclusive(&file).map_err(CasError::io("lock", &path))? {
            return Err(CasError::GcBusy {
                root: root.to_path_buf(),
            });
        }
        Ok(GcLock { file })
    }
}
