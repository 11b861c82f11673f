//! The blob directory: `<root>/blobs/<first two hex>/<sha256>`, each blob written once through a staged
//! file in its own shard directory and an atomic rename, so a blob's name always matches its content.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::error::{CasError, CasResult};
use super::lock::lock_exclusive;

/// Staged files start with this; `gc` removes abandoned ones.
pub const STAGED_PREFIX: &str = ".staged-";
/// gc renames a blob it removes to this prefix + digest inside its transaction, then unlinks it.
pub const TRASH_PREFIX: &str = ".trash-";
/// Files are hashed and copied in chunks of this size, so a large file never sits in memory.
const CHUNK: usize = 1 << 20;

/// The blob directory of one store root.
#[derive(Debug, Clone)]
pub struct Blobs {
    dir: PathBuf,
}

impl Blobs {
    pub fn new(root: &Path) -> Blobs {
        Blobs {
            dir: root.join("blobs"),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the blob of `digest` lives.
    pub fn path(&self, digest: &str) -> PathBuf {
        self.dir.join(&digest[..2]).join(digest)
    }

    /// Writes `data` as the blob of `digest` unless that blob exists already.
    pub fn store_bytes(&self, digest: &str, data: &[u8]) -> CasResult<()> {
        self.store_with(digest, |staged, staged_path| {
            staged
                .write_all(data)
                .map_err(CasError::io("write", staged_path))
        })
    }

    /// Copies `source` as the blob of `digest` (its sha256 from [`hash_file`]) unless that blob exists,
    /// hashing again while copying so a file that changed in between never lands under the wrong name.
    pub fn store_file(&self, digest: &str, source: &Path) -> CasResult<()> {
        self.store_with(digest, |staged, staged_path| {
            let mut input = File::open(source).map_err(CasError::io("open", source))?;
            let copied = copy_hashing(&mut input, staged, source, staged_path)?;
            if copied != digest {
                return Err(CasError::SourceChanged {
                    path: source.to_path_buf(),
                    before: digest.to_string(),
                    after: copied,
                });
            }
            Ok(())
        })
    }

    fn store_with(
        &self,
        digest: &str,
        write: impl FnOnce(&mut File, &Path) -> CasResult<()>,
    ) -> CasResult<()> {
        let target = self.path(digest);
        if target.is_file() {
            return Ok(());
        }
        let shard = self.dir.join(&digest[..2]);
        fs::create_dir_all(&shard).map_err(CasError::io("create", &shard))?;
        let mut staged = tempfile::Builder::new()
            .prefix(STAGED_PREFIX)
            .tempfile_in(&shard)
            .map_err(CasError::io("create a staged file in", &shard))?;
        let staged_path = staged.path().to_path_buf();
        // Held until the staged file is renamed and closed: gc never removes a staged file a writer holds.
        lock_exclusive(staged.as_file()).map_err(CasError::io("lock", &staged_path))?;
        write(staged.as_file_mut(), &staged_path)?;
        staged
            .as_file()
            .sync_data()
            .map_err(CasError::io("flush", &staged_path))?;
        // rename(2) is atomic; a concurrent writer of the same bytes replaces an identical file harmlessly.
        staged
            .persist(&target)
            .map_err(|err| CasError::io("rename a staged file to", &target)(err.error))?;
        Ok(())
    }

    /// Every blob's digest, from the names under the shard directories.
    pub fn digests(&self) -> CasResult<Vec<String>> {
        let mut digests = Vec::new();
        for entry in self.entries()? {
            if let Some(name) = entry.file_name().to_str() {
                if is_digest(name) {
                    digests.push(name.to_string());
                }
            }
        }
        Ok(digests)
    }

    /// Every entry of every shard directory (blobs, staged files, anything else).
    pub fn entries(&self) -> CasResult<Vec<fs::DirEntry>> {
        let shards = match fs::read_dir(&self.dir) {
            Ok(shards) => shards,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(CasError::io("list", &self.dir)(err)),
        };
        let mut entries = Vec::new();
        for shard in shards {
            let shard = shard.map_err(CasError::io("list", &self.dir))?;
            let shard_path = shard.path();
            if !shard_path.is_dir() {
                continue;
            }
            for entry in fs::read_dir(&shard_path).map_err(CasError::io("list", &shard_path))? {
                entries.push(entry.map_err(CasError::io("list", &shard_path))?);
            }
        }
        Ok(entries)
    }
}

/// True for a 64-character lowercase hex name: a blob, not a staged file.
pub fn is_digest(name: &str) -> bool {
    name.len() == 64
        && name
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The sha256 of `data`, lowercase hex.
pub fn hash_bytes(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// The sha256 of a file and its size, read in chunks.
pub fn hash_file(path: &Path) -> CasResult<(String, u64)> {
    let mut file = File::open(path).map_err(CasError::io("open", path))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; CHUNK];
    let mut size = 0u64;
    loop {
        let read = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(CasError::io("read", path)(err)),
        };
        hasher.update(&buffer[..read]);
        size += read as u64;
    }
    Ok((hex::encode(hasher.finalize()), size))
}

fn copy_hashing(
    input: &mut File,
    output: &mut File,
    source: &Path,
    dest: &Path,
) -> CasResult<String> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; CHUNK];
    loop {
        let read = match input.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(CasError::io("read", source)(err)),
        };
        hasher.update(&buffer[..read]);
        output
            .write_all(&buffer[..read])
            .map_err(CasError::io("write", dest))?;
    }
    Ok(hex::encode(hasher.finalize()))
}
