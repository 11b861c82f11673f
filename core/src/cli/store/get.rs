//! `agent-env store get URL [-o FILE|-]` writes one object to a file or to stdout, streamed through a
//! temporary file (under `TMPDIR`) whatever its size, binary bytes refused only on a terminal, where
//! text has its control and invisible characters shown as escapes. A file is written in a private
//! folder beside it and renamed into place, so Ctrl-C leaves neither it half-written nor a part of it.
//! Stdout is written through the terminal's writer ([`Terminal::stdout_stream`]), a piece at a time: a
//! reader that goes away ends the copy quietly, and a stdout that fails (a full disk) or was never
//! open (`>&-`) fails the command as it fails every other.

use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::sync::Arc;

use super::scratch::Scratch;
use crate::cli::terminal::StdoutStream;
use crate::cli::{Exit, Failure, Terminal};
use crate::session::Session;
use crate::stores::{ObjectStore, StoreError};

/// `store get URL`: the configured object store when it owns the URL, else the local one. The object
/// goes to the file `--output` names, or to stdout (also for `-o -`).
pub(super) fn get(url: &str, output: Option<&Path>, session: &Session, term: &Terminal) -> Exit {
    let store = store_owning(url, session)?;
    match output {
        Some(path) if path != Path::new("-") => save_to(store.as_ref(), url, path),
        Some(_) => print_object(store.as_ref(), url, Shown::AsTheyAre, term),
        None => print_object(store.as_ref(), url, Shown::ForTheTerminal, term),
    }
}

/// Writes the object to `path`: downloaded into a private folder beside it (the same filesystem),
/// which a signal removes with what it holds, then renamed into place. The folders above `path` are
/// made as a store's download makes them.
fn save_to(store: &dyn ObjectStore, url: &str, path: &Path) -> Exit {
    let cannot = |e: &dyn std::fmt::Display| {
        Failure::new(format!(
            "cannot write {} ({e}); nothing was written",
            path.display()
        ))
    };
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(folder).map_err(|e| cannot(&e))?;
    let scratch = Scratch::new_in(folder).map_err(|e| cannot(&e))?;
    let part = scratch
        .path
        .join(path.file_name().unwrap_or(std::ffi::OsStr::new("object")));
    store.download_to_file(url, &part).map_err(|e| {
        // The user named the file, not the folder it was written in first.
        Failure::new(
            e.to_string()
                .replace(&part.display().to_string(), &path.display().to_string()),
        )
    })?;
    std::fs::rename(&part, path).map_err(|e| cannot(&e))?;
    Ok(0)
}

/// The object store `url` is one of: the configured one, else the local one. A store that refuses the
/// URL (the local one: its key has a part longer than a file name may be, or names what the store
/// keeps for itself) says why, rather than the URL being called no store's.
fn store_owning(url: &str, session: &Session) -> Result<Arc<dyn ObjectStore>, Failure> {
    let configured = session
        .stores()
        .object()
        .map_err(|e| Failure::new(format!("the configured object store can't be used: {e}")))?;
    let local = crate::run::local_stores::open(&session.paths().state_root()).objects;
    let mut unanswered = None;
    for (store, is_local) in [(configured, false), (local, true)] {
        match store.owns(url) {
            Ok(true) => return Ok(store),
            Ok(false) | Err(StoreError::ForeignUrl(_)) => {}
            Err(refusal @ StoreError::InvalidValue(_)) => return Err(Failure::new(refusal)),
            Err(e) if !is_local => unanswered = Some(e),
            Err(e) => return Err(Failure::new(e)),
        }
    }
    Err(Failure::new(match unanswered {
        Some(e) => format!(
            "'{url}' is not a URL of the local object store, and the configured one could not say whether it is one of its own: {e}"
        ),
        None => format!("'{url}' is not a URL of the configured object store or of the local one"),
    }))
}

/// How `store get` writes an object to stdout.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// Its bytes, whatever stdout is (`-o -`).
    AsTheyAre,
    /// Its bytes to a pipe or file; to a terminal, text with its control characters escaped, and
    /// binary bytes refused.
    ForTheTerminal,
}

/// Writes the object to stdout, whatever its size: the store downloads it to a private temporary file
/// (a plugin's store writes the file itself; nothing crosses the pipe but its path), which is copied
/// out a piece at a time. Bytes that are not text are refused only when stdout is a terminal, which
/// they would garble; a pipe or a file gets them as they are.
fn print_object(store: &dyn ObjectStore, url: &str, shown: Shown, term: &Terminal) -> Exit {
    let temp = std::env::temp_dir();
    let scratch = Scratch::new_in(&temp).map_err(|e| scratch_failure(url, &temp, &e))?;
    let file = scratch.path.join("object");
    download(store, url, &file).map_err(|e| download_failure(url, &temp, &e))?;
    if shown == Shown::AsTheyAre || !std::io::stdout().is_terminal() {
        return copy_to(&file, &mut term.stdout_stream());
    }
    let is_text = match text_pieces(&file, |_| Ok(())) {
        Ok(is_text) => is_text,
        Err(e) => return e.exit(&file),
    };
    if !is_text {
        return Err(Failure::new(format!(
            "{url} holds binary bytes, which a terminal cannot show; write them to a file with --output FILE, or pipe them to a program"
        )));
    }
    // Text from a shared store reaches the terminal with its control characters shown as escapes
    // (one could retitle the window or clear the screen), and its invisible ones too (a bidi control
    // could show other text than the object holds), a piece at a time; a pipe or a file gets the
    // bytes as they are.
    let mut out = term.stdout_stream();
    let mut at_start = true;
    let shown = text_pieces(&file, |piece| {
        let written = out.write_all(escaped_piece(piece, at_start).as_bytes());
        at_start &= piece.is_empty();
        written
    })
    .and_then(|_| out.flush().map_err(|_| PieceError::Write));
    match shown {
        Err(e) => e.exit(&file),
        Ok(()) => Ok(0),
    }
}

/// A piece of the object's text as a terminal gets it: [`crate::printable::plain`], a byte order mark
/// kept only at the object's start.
fn escaped_piece(piece: &str, at_start: bool) -> std::borrow::Cow<'_, str> {
    if at_start {
        crate::printable::plain(piece)
    } else {
        crate::printable::plain_continued(piece)
    }
}

/// `store.download_to_file(url, file)`; a store that does not implement it has the object read whole.
fn download(store: &dyn ObjectStore, url: &str, file: &Path) -> Result<(), StoreError> {
    match store.download_to_file(url, file) {
        Err(StoreError::NotSupported(_)) => {
            let bytes = store.get(url)?;
            std::fs::write(file, bytes)
                .map_err(|e| StoreError::io(format_args!("cannot write {}", file.display()), &e))
        }
        other => other,
    }
}

/// Whether an I/O error of `kind` says the disk, or the user's quota on it, is full.
fn out_of_room(kind: std::io::ErrorKind) -> bool {
    matches!(
        kind,
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}

/// The temporary folder `temp` could not hold the scratch folder `store get` fetches `url` into.
fn scratch_failure(url: &str, temp: &Path, e: &std::io::Error) -> Failure {
    if out_of_room(e.kind()) {
        return no_room(url, temp, e);
    }
    Failure::new(format!(
        "cannot fetch {url} to print it: the temporary folder {} cannot be written ({e}); set TMPDIR to \
         a folder you can write that has room for the object, or write the object to a file with \
         --output FILE",
        temp.display()
    ))
}

/// The download of `url` into the temporary folder `temp` failed: for want of room, said so with what
/// to do; else the store's own words.
fn download_failure(url: &str, temp: &Path, e: &StoreError) -> Failure {
    match e.io_kind() {
        Some(kind) if out_of_room(kind) => no_room(url, temp, e),
        _ => Failure::new(e.to_string()),
    }
}

/// The temporary folder `temp` has no room for `url`.
fn no_room(url: &str, temp: &Path, e: &dyn std::fmt::Display) -> Failure {
    Failure::new(format!(
        "cannot fetch {url} to print it: the temporary folder {} is full ({e}); free space there, set \
         TMPDIR to a folder with room for the object, or write the object to a file with --output FILE",
        temp.display()
    ))
}

fn reading(file: &Path, e: &std::io::Error) -> Failure {
    Failure::new(format!(
        "cannot read the downloaded object {}: {e}",
        file.display()
    ))
}

/// How much of the object is read at a time.
const CHUNK: usize = 64 * 1024;

/// What stopped [`text_pieces`]: reading the file, or what was done with a piece.
enum PieceError {
    Read(std::io::Error),
    /// Writing it to stdout failed (the terminal keeps why).
    Write,
}

impl PieceError {
    /// How the command ends: a write to stdout that failed is the terminal's to say (a reader that
    /// went away is no failure), and ends the command as it is.
    fn exit(self, file: &Path) -> Exit {
        match self {
            PieceError::Read(e) => Err(reading(file, &e)),
            PieceError::Write => Ok(0),
        }
    }
}

/// Hands `file` to `on_piece` as text, a piece at a time; `Ok(false)` at the first bytes that are not
/// UTF-8 (what came before them was handed over).
fn text_pieces(
    file: &Path,
    mut on_piece: impl FnMut(&str) -> std::io::Result<()>,
) -> Result<bool, PieceError> {
    let mut reader = std::fs::File::open(file).map_err(PieceError::Read)?;
    // A character cut at a piece's end (at most 3 of its bytes) is carried to the next piece.
    let mut buf = vec![0u8; CHUNK + 3];
    let mut carried = 0;
    loop {
        let n = reader
            .read(&mut buf[carried..carried + CHUNK])
            .map_err(PieceError::Read)?;
        if n == 0 {
            return Ok(carried == 0);
        }
        let filled = carried + n;
        let (valid, is_text) = match std::str::from_utf8(&buf[..filled]) {
            Ok(_) => (filled, true),
            Err(e) => (e.valid_up_to(), e.error_len().is_none()),
        };
        // Checked just above: the first `valid` bytes are UTF-8.
        let piece = std::str::from_utf8(&buf[..valid]).unwrap_or_default();
        on_piece(piece).map_err(|_| PieceError::Write)?;
        if !is_text {
            return Ok(false);
        }
        buf.copy_within(valid..filled, 0);
        carried = filled - valid;
    }
}

/// Copies `file` to stdout a piece at a time. A write that fails is the terminal's to say (a reader
/// that went away, `| head`, is no failure: it chose to stop), and ends the copy.
fn copy_to(file: &Path, out: &mut StdoutStream<'_>) -> Exit {
    let mut reader = std::fs::File::open(file).map_err(|e| reading(file, &e))?;
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(reading(file, &e)),
        };
        if out.write_all(&buf[..n]).is_err() {
            return Ok(0);
        }
    }
    let _ = out.flush();
    Ok(0)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    const URL: &str = "s3://bucket/big.txt";

    fn temp() -> PathBuf {
        PathBuf::from("/var/tmp/scratch")
    }

    #[test]
    fn a_full_temporary_folder_is_named_with_what_to_do() {
        let full = "cannot fetch s3://bucket/big.txt to print it: the temporary folder /var/tmp/scratch \
                    is full (No space left on device (os error 28)); free space there, set TMPDIR to a \
                    folder with room for the object, or write the object to a file with --output FILE";
        let no_space = StoreError::Io {
            message: "No space left on device (os error 28)".into(),
            raw_os_error: Some(libc::ENOSPC),
        };
        assert_eq!(download_failure(URL, &temp(), &no_space).to_string(), full);
        let making = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert_eq!(scratch_failure(URL, &temp(), &making).to_string(), full);
        let quota = StoreError::io("writing", &std::io::Error::from_raw_os_error(libc::EDQUOT));
        let said = download_failure(URL, &temp(), &quota).to_string();
        assert!(
            said.contains("/var/tmp/scratch is full (writing: "),
            "{said}"
        );
    }

    #[test]
    fn a_temporary_folder_that_cannot_be_written_is_named_with_what_to_do() {
        let missing = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(
            scratch_failure(URL, &temp(), &missing).to_string(),
            "cannot fetch s3://bucket/big.txt to print it: the temporary folder /var/tmp/scratch cannot \
             be written (No such file or directory (os error 2)); set TMPDIR to a folder you can write \
             that has room for the object, or write the object to a file with --output FILE"
        );
    }

    #[test]
    fn another_download_failure_is_the_stores_own() {
        let failures = [
            StoreError::object_not_found(URL),
            StoreError::io("reading", &std::io::Error::from_raw_os_error(libc::EIO)),
            StoreError::Io {
                message: "the plugin's disk is gone".into(),
                raw_os_error: None,
            },
        ];
        for e in failures {
            assert_eq!(
                download_failure(URL, &temp(), &e).to_string(),
                e.to_string()
            );
        }
    }

    #[test]
    fn a_byte_order_mark_is_kept_only_at_the_start_of_the_object() {
        assert_eq!(escaped_piece("\u{feff}a\u{202e}", true), "\u{feff}a\\u202e");
        assert_eq!(escaped_piece("\u{feff}a", false), "\\ufeffa");
    }
}
