//! The private folder `store get` downloads an object into (in `TMPDIR` to print it, beside the file
//! `-o` names to write it there): removed with what it holds when dropped, and by a signal handler,
//! which then ends the command, when a signal comes first.

use std::path::{Path, PathBuf};

use crate::run::cancel::{watch_signals, Cancel, Signalled};

/// A folder only this user can read, removed with what it holds when dropped.
pub(super) struct Scratch {
    pub(super) path: PathBuf,
}

impl Scratch {
    /// A new folder in `temp`.
    pub(super) fn new_in(temp: &Path) -> std::io::Result<Scratch> {
        use std::os::unix::fs::DirBuilderExt;
        let mut random = [0u8; 8];
        getrandom::getrandom(&mut random).map_err(|e| std::io::Error::other(e.to_string()))?;
        let path = temp.join(format!(".agent-env-get-{}", hex::encode(random)));
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        // A signal ends the command before any drop (`store get … | less`, then Ctrl-C): the copy
        // of the object goes first.
        if SCRATCH.set(path.clone()).is_ok() {
            watch_signals(Cancel::new(), Some(on_get_signal))?;
        }
        Ok(Scratch { path })
    }
}

/// The folder `store get` copies the object into, for its signal handler.
static SCRATCH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// A signal during `store get`: the copy is removed and the command ends as the signal says.
fn on_get_signal(signalled: Signalled) {
    let (Signalled::First(signal) | Signalled::Again(signal)) = signalled;
    if let Some(path) = SCRATCH.get() {
        // Again if the download made it anew meanwhile.
        for _ in 0..3 {
            if std::fs::remove_dir_all(path).is_err() && !path.exists() {
                break;
            }
        }
    }
    std::process::exit(128 + signal);
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
