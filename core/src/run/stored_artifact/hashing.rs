//! A file of a put hashed a chunk at a time, stopped between two chunks once the put is cancelled:
//! a Ctrl-C during the sha256 of a file of many gigabytes is heard within a chunk, not at the
//! file's last byte.

use std::io::{self, Read};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::run::cancel::Cancel;

/// The most bytes hashed between two looks at the cancel flag.
const CHUNK: usize = 256 * 1024;

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
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; CHUNK];
    let mut size = 0u64;
    loop {
        if cancel.is_cancelled() {
            return Ok(Hashed::Stopped);
        }
        let n = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buffer[..n]);
        size += n as u64;
    }
    Ok(Hashed::Whole {
        sha256: hex::encode(hasher.finalize()),
        size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_hashed_whole_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        let bytes: Vec<u8> = (0..(CHUNK * 2 + 17)).map(|i| (i % 251) as u8).collect();
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
