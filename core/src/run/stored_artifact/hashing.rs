//! A file of a put hashed a chunk at a time, stopped between two chunks once the put is cancelled:
//! a Ctrl-C during the sha256 of a file of many gigabytes is heard within a chunk, not at the
//! file's last byte.

use std::io;
use std::path::Path;

use crate::bundle::tree::hash_in_chunks;
use crate::run::cancel::Cancel;

/// How the hashing of a file ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Hashed {
    /// The file's sha256 (hex) and size, read to its end.
    Whole { sha256: String, size: u64 },
    /// `cancel` was set before the file's end: nothing of it is known.
    Stopped,
}

/// The sha256 and size of the file at `path`, read in chunks (constant memory for a file of any
/// size), or [`Hashed::Stopped`] once `cancel` is set.
pub(crate) fn hash_file(path: &Path, cancel: &Cancel) -> io::Result<Hashed> {
    let file = std::fs::File::open(path)?;
    Ok(match hash_in_chunks(file, || !cancel.is_cancelled())? {
        Some((sha256, size)) => Hashed::Whole { sha256, size },
        None => Hashed::Stopped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    #[test]
    fn a_file_is_hashed_whole_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        let bytes: Vec<u8> = (0..(crate::bundle::tree::HASH_CHUNK * 2 + 17))
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(
            hash_file(&path, &Cancel::new()).unwrap(),
            Hashed::Whole {
                sha256: hex::encode(Sha256::digest(&bytes)),
                size: bytes.len() as u64,
            }
        );
    }

    #[test]
    fn a_cancelled_put_hashes_nothing_more() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, b"abc").unwrap();
        let cancel = Cancel::new();
        cancel.cancel(libc::SIGINT);
        assert_eq!(hash_file(&path, &cancel).unwrap(), Hashed::Stopped);
    }
}
