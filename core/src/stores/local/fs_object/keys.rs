//! How keys and `file://` URLs map to paths under the store root, and which keys are refused.

use std::path::{Component, Path, PathBuf};

use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::object_key::key_segments;

/// Root-level names the store keeps for itself.
pub const RESERVED: [&str; 3] = [".gitignore", META_DIR, TMP_DIR];
/// Content-type sidecars: `.agentenv-meta/<key>`.
pub const META_DIR: &str = ".agentenv-meta";
/// Staging files and lock stripes.
pub const TMP_DIR: &str = ".agentenv-tmp";

const SCHEME: &str = "file://";

/// A key resolved against the root: its normalized form (`.` for the root itself) and its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub key: String,
    pub path: PathBuf,
}

/// Lexically normalizes an absolute path: drops `.`, folds `..`.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The root made absolute (a relative one from the process's working directory) and resolved as far
/// as it exists (symlinks of existing parts followed), so URLs stay stable before and after the root
/// is created.
pub fn resolve_root(root: &Path) -> PathBuf {
    let absolute = if root.is_absolute() {
        root.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(root)
    };
    let absolute = normalize(&absolute);
    let mut existing = absolute.clone();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return absolute,
        }
    }
}

/// The longest name a part of a key may have, in bytes: what the filesystems a store lives on
/// (ext4, XFS, Btrfs, APFS, tmpfs) take for a file name.
pub const NAME_MAX_BYTES: usize = 255;

/// Resolves `key` under `root` by the stores' key rule ([`key_segments`]), refusing also a key that names
/// a reserved root entry, holds a NUL byte or has a part longer than a file name may be
/// ([`NAME_MAX_BYTES`]), before the disk is touched.
pub fn resolve_key(root: &Path, key: &str) -> StoreResult<Resolved> {
    refuse_unwritable_names(key)?;
    let parts = key_segments(key)?;
    if let Some(first) = parts.first() {
        if let Some(name) = RESERVED.iter().find(|r| *r == first) {
            return Err(StoreError::InvalidValue(format!(
                "Key '{key}' is reserved: the store keeps its own {name} there."
            )));
        }
    }
    let mut path = root.to_path_buf();
    for part in &parts {
        path.push(part);
    }
    let key = if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    };
    Ok(Resolved { key, path })
}

/// A key no file can be named by: one with a NUL byte, or with a part longer than
/// [`NAME_MAX_BYTES`].
fn refuse_unwritable_names(key: &str) -> StoreResult<()> {
    if key.contains('\0') {
        return Err(StoreError::InvalidValue(format!(
            "Key '{}' holds a NUL byte, which keys may not: remove it.",
            key.escape_debug()
        )));
    }
    if let Some(part) = key.split('/').find(|p| p.len() > NAME_MAX_BYTES) {
        let shown: String = part.chars().take(20).collect();
        return Err(StoreError::InvalidValue(format!(
            "Key '{}' has a part of {} bytes ('{}…'), longer than the filesystem's limit for a name ({NAME_MAX_BYTES} bytes): shorten that part, or split it with '/'.",
            shortened_key(key),
            part.len(),
            shown,
        )));
    }
    Ok(())
}

/// `key` cut to its first 80 characters, marked as cut (a refusal quotes it whole otherwise).
fn shortened_key(key: &str) -> String {
    match key.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &key[..at]),
        None => key.to_string(),
    }
}

/// A normalized key's folders and its last name: `a/b/c` → (`[a, b]`, `c`); `.` → (`[]`, `.`).
pub fn split_key(key: &str) -> (Vec<&str>, &str) {
    match key.rsplit_once('/') {
        Some((folders, name)) => (folders.split('/').collect(), name),
        None => (Vec::new(), key),
    }
}

/// The URL of a path: `file://` + the absolute path.
pub fn url_of(path: &Path) -> String {
    format!("{SCHEME}{}", path.display())
}

/// The path a `file://` URL names; [`StoreError::ForeignUrl`] for another scheme or a bare path.
pub fn path_of_url(url: &str) -> StoreResult<PathBuf> {
    match url.strip_prefix(SCHEME) {
        Some(rest) if rest.starts_with('/') => Ok(normalize(Path::new(rest))),
        _ => Err(StoreError::ForeignUrl(format!(
            "'{url}' is not a file:// url of this store."
        ))),
    }
}

/// The path a read names: a `file://` URL or, for reads only, a bare absolute path.
pub fn path_of_readable(url: &str) -> StoreResult<PathBuf> {
    if url.starts_with('/') {
        return Ok(normalize(Path::new(url)));
    }
    path_of_url(url)
}

/// The key of a path under `root`, checked like any key; `.` for the root itself. A path under a
/// root that has moved here ([`moved_here`]) is read as the same key under `root`.
pub fn key_of_path(root: &Path, path: &Path, url: &str) -> StoreResult<Resolved> {
    let rel = match path.strip_prefix(root) {
        Ok(rel) => rel,
        Err(_) => moved_here(root, path).ok_or_else(|| {
            StoreError::ForeignUrl(format!("'{url}' is not an object in {}.", root.display()))
        })?,
    };
    let key: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    resolve_key(root, &key.join("/"))
}

/// Where `path` lies under `root` if `root` is the folder `path` was written under, moved (a state
/// folder restored at another path, from a CI cache or a backup, or after a user was renamed): the
/// part of `path` after its last folder of `root`'s name, when the folder it names there no longer
/// exists and that part names something under `root`, or a folder under `root` that would hold it
/// (an object deleted since the move is then this store's, missing, not another store's). A second
/// store of the same folder name that still exists elsewhere is another store, not this one moved.
fn moved_here<'p>(root: &Path, path: &'p Path) -> Option<&'p Path> {
    let name = root.file_name()?;
    let old_root = path
        .ancestors()
        .skip(1)
        .find(|a| a.file_name() == Some(name))?;
    let rel = path.strip_prefix(old_root).ok()?;
    let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    let held_here = exists(&root.join(rel))
        || rel
            .parent()
            .is_some_and(|folder| !folder.as_os_str().is_empty() && exists(&root.join(folder)));
    (!rel.as_os_str().is_empty() && !exists(old_root) && held_here).then_some(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_resolve_and_refuse() {
        let root = Path::new("/r");
        assert_eq!(resolve_key(root, "a/b/").unwrap().path, Path::new("/r/a/b"));
        assert_eq!(resolve_key(root, "a/../b").unwrap().key, "b");
        assert_eq!(resolve_key(root, "").unwrap().key, ".");
        assert_eq!(
            resolve_key(root, "../escapes.bin").unwrap_err().to_string(),
            "Key '../escapes.bin' escapes the store root."
        );
        assert_eq!(
            resolve_key(root, "a/../.agentenv-meta")
                .unwrap_err()
                .to_string(),
            "Key 'a/../.agentenv-meta' is reserved: the store keeps its own .agentenv-meta there."
        );
        assert!(resolve_key(root, "a/.gitignore").is_ok());
        assert!(resolve_key(root, "/etc/passwd").is_err());
    }

    #[test]
    fn a_nul_byte_is_refused_as_such() {
        let e = resolve_key(Path::new("/r"), "a/\u{0}b").unwrap_err();
        assert!(matches!(e, StoreError::InvalidValue(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            "Key 'a/\\0b' holds a NUL byte, which keys may not: remove it."
        );
    }

    #[test]
    fn a_part_longer_than_a_file_name_may_be_is_refused_before_the_disk() {
        let root = Path::new("/r");
        let longest = "x".repeat(NAME_MAX_BYTES);
        assert!(resolve_key(root, &format!("a/{longest}")).is_ok());
        let e = resolve_key(root, &format!("a/{}/b", "y".repeat(300))).unwrap_err();
        assert!(matches!(e, StoreError::InvalidValue(_)), "{e:?}");
        let message = e.to_string();
        assert!(
            message.contains("a part of 300 bytes ('yyyyyyyyyyyyyyyyyyyy…')")
                && message.contains("limit for a name (255 bytes)"),
            "{message}"
        );
        // Bytes, not characters: 128 two-byte characters are 256 bytes.
        assert!(resolve_key(root, &"é".repeat(128)).is_err());
    }

    #[test]
    fn a_path_under_a_moved_root_is_read_under_this_one() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("new").join("object_store");
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::write(root.join("a/b.txt"), "x").unwrap();
        let gone = tmp.path().join("old").join("object_store").join("a/b.txt");
        let found = key_of_path(&root, &gone, "u").unwrap();
        assert_eq!(
            (found.key.as_str(), found.path),
            ("a/b.txt", root.join("a/b.txt"))
        );
        // An object deleted since the move, in a folder that is here: this store's, missing.
        let deleted = tmp.path().join("old").join("object_store").join("a/c.txt");
        assert_eq!(
            key_of_path(&root, &deleted, "u").unwrap().path,
            root.join("a/c.txt")
        );
        // Nothing of that key or its folder here: another store's object, as before.
        let other = tmp.path().join("old").join("object_store").join("z/c.txt");
        assert!(matches!(
            key_of_path(&root, &other, "u"),
            Err(StoreError::ForeignUrl(_))
        ));
        // A store of the same name that still exists is another store.
        std::fs::create_dir_all(tmp.path().join("old").join("object_store")).unwrap();
        assert!(matches!(
            key_of_path(&root, &gone, "u"),
            Err(StoreError::ForeignUrl(_))
        ));
        // Nor is a folder of another name the same store.
        let elsewhere = tmp.path().join("gone").join("objects").join("a/b.txt");
        assert!(key_of_path(&root, &elsewhere, "u").is_err());
    }

    #[test]
    fn urls_convert_both_ways() {
        let root = Path::new("/r");
        let url = url_of(&resolve_key(root, "a/b.txt").unwrap().path);
        assert_eq!(url, "file:///r/a/b.txt");
        let path = path_of_url(&url).unwrap();
        assert_eq!(key_of_path(root, &path, &url).unwrap().key, "a/b.txt");
        assert_eq!(
            path_of_url("s3://b/k").unwrap_err().to_string(),
            "'s3://b/k' is not a file:// url of this store."
        );
        assert_eq!(
            key_of_path(root, Path::new("/elsewhere/x"), "file:///elsewhere/x")
                .unwrap_err()
                .to_string(),
            "'file:///elsewhere/x' is not an object in /r."
        );
        assert!(path_of_url("/r/a").is_err());
        assert_eq!(path_of_readable("/r/a").unwrap(), Path::new("/r/a"));
    }
}
