//! A byte-for-byte record of the plugins directory (contents, modes, symlinks), taken before a change, and
//! the restore that puts the directory back to it: anything new is removed, anything changed is rewritten.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::error::InstallError;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Dir,
    File(Vec<u8>),
    Symlink(PathBuf),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    kind: Kind,
    mode: u32,
}

/// The plugins directory as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    root: PathBuf,
    /// `None`: the directory did not exist.
    entries: Option<BTreeMap<PathBuf, Entry>>,
}

fn read_err(path: &Path, source: std::io::Error) -> InstallError {
    InstallError::Read {
        path: path.to_path_buf(),
        source,
    }
}

fn write_err(path: &Path, source: std::io::Error) -> InstallError {
    InstallError::Write {
        path: path.to_path_buf(),
        source,
    }
}

fn walk(root: &Path, rel: &Path, out: &mut BTreeMap<PathBuf, Entry>) -> Result<(), InstallError> {
    let dir = root.join(rel);
    let read = fs::read_dir(&dir).map_err(|e| read_err(&dir, e))?;
    for item in read {
        let item = item.map_err(|e| read_err(&dir, e))?;
        let rel_path = rel.join(item.file_name());
        let path = root.join(&rel_path);
        let meta = fs::symlink_metadata(&path).map_err(|e| read_err(&path, e))?;
        let mode = meta.permissions().mode() & 0o7777;
        let kind = if meta.file_type().is_symlink() {
            Kind::Symlink(fs::read_link(&path).map_err(|e| read_err(&path, e))?)
        } else if meta.is_dir() {
            Kind::Dir
        } else {
            Kind::File(fs::read(&path).map_err(|e| read_err(&path, e))?)
        };
        let is_dir = kind == Kind::Dir;
        out.insert(rel_path.clone(), Entry { kind, mode });
        if is_dir {
            walk(root, &rel_path, out)?;
        }
    }
    Ok(())
}

impl Snapshot {
    /// Records everything under `root`.
    pub fn take(root: &Path) -> Result<Snapshot, InstallError> {
        let entries = match fs::symlink_metadata(root) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(read_err(root, e)),
            Ok(_) => {
                let mut map = BTreeMap::new();
                map.insert(
                    PathBuf::new(),
                    Entry {
                        kind: Kind::Dir,
                        mode: fs::metadata(root)
                            .map_err(|e| read_err(root, e))?
                            .permissions()
                            .mode()
                            & 0o7777,
                    },
                );
                walk(root, Path::new(""), &mut map)?;
                Some(map)
            }
        };
        Ok(Snapshot {
            root: root.to_path_buf(),
            entries,
        })
    }

    /// Paths (relative to the root) that differ between `self` and `now`: added, removed or changed.
    pub fn changed_paths(&self, now: &Snapshot) -> Vec<PathBuf> {
        let empty = BTreeMap::new();
        let before = self.entries.as_ref().unwrap_or(&empty);
        let after = now.entries.as_ref().unwrap_or(&empty);
        let mut out: Vec<PathBuf> = after
            .iter()
            .filter(|(p, e)| before.get(*p) != Some(e))
            .map(|(p, _)| p.clone())
            .collect();
        out.extend(before.keys().filter(|p| !after.contains_key(*p)).cloned());
        if self.entries.is_some() != now.entries.is_some() && !out.contains(&PathBuf::new()) {
            out.push(PathBuf::new());
        }
        out.sort();
        out
    }

    /// Puts the directory back as recorded, then checks it is.
    pub fn restore(&self) -> Result<(), InstallError> {
        let now = Snapshot::take(&self.root)?;
        let Some(before) = &self.entries else {
            if now.entries.is_some() {
                fs::remove_dir_all(&self.root).map_err(|e| write_err(&self.root, e))?;
            }
            return Ok(());
        };
        let current = now.entries.unwrap_or_default();
        // Remove what is new or of another kind, deepest first.
        for (rel, entry) in current.iter().rev() {
            let keep = before.get(rel).is_some_and(|b| {
                std::mem::discriminant(&b.kind) == std::mem::discriminant(&entry.kind)
            });
            if keep {
                continue;
            }
            let path = self.root.join(rel);
            let result = if entry.kind == Kind::Dir {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            match result {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(write_err(&path, e))
                }
                _ => {}
            }
        }
        // Recreate and rewrite, parents first; modes of folders last so a read-only one is filled first.
        for (rel, entry) in before {
            let path = self.root.join(rel);
            if current.get(rel) == Some(entry) {
                continue;
            }
            match &entry.kind {
                Kind::Dir => match fs::create_dir(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                        return Err(write_err(&path, e))
                    }
                    _ => {}
                },
                Kind::File(bytes) => {
                    if let Ok(meta) = fs::symlink_metadata(&path) {
                        let writable = meta.permissions().mode() | 0o200;
                        let _ = fs::set_permissions(&path, fs::Permissions::from_mode(writable));
                    }
                    fs::write(&path, bytes).map_err(|e| write_err(&path, e))?;
                    fs::set_permissions(&path, fs::Permissions::from_mode(entry.mode))
                        .map_err(|e| write_err(&path, e))?;
                }
                Kind::Symlink(target) => {
                    let _ = fs::remove_file(&path);
                    std::os::unix::fs::symlink(target, &path).map_err(|e| write_err(&path, e))?;
                }
            }
        }
        for (rel, entry) in before.iter().rev() {
            if entry.kind == Kind::Dir {
                let path = self.root.join(rel);
                fs::set_permissions(&path, fs::Permissions::from_mode(entry.mode))
                    .map_err(|e| write_err(&path, e))?;
            }
        }
        let after = Snapshot::take(&self.root)?;
        let differ = self.changed_paths(&after);
        if differ.is_empty() {
            Ok(())
        } else {
            Err(InstallError::Restore(format!(
                "these differ from before: {}",
                differ
                    .iter()
                    .map(|p| self.root.join(p).display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restore_removes_new_and_rewrites_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("plugins");
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/f"), b"one").unwrap();
        fs::set_permissions(root.join("a/b/f"), fs::Permissions::from_mode(0o640)).unwrap();
        std::os::unix::fs::symlink("b/f", root.join("a/link")).unwrap();
        let snap = Snapshot::take(&root).unwrap();
        fs::write(root.join("a/b/f"), b"two").unwrap();
        fs::set_permissions(root.join("a/b/f"), fs::Permissions::from_mode(0o755)).unwrap();
        fs::remove_file(root.join("a/link")).unwrap();
        fs::create_dir_all(root.join("new/deep")).unwrap();
        fs::write(root.join("new/deep/x"), b"x").unwrap();
        assert_eq!(snap.changed_paths(&Snapshot::take(&root).unwrap()).len(), 5);
        snap.restore().unwrap();
        assert_eq!(snap, Snapshot::take(&root).unwrap());
        assert_eq!(fs::read(root.join("a/b/f")).unwrap(), b"one");
    }

    #[test]
    fn restore_of_a_missing_directory_removes_it() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("plugins");
        let snap = Snapshot::take(&root).unwrap();
        fs::create_dir_all(root.join("x")).unwrap();
        snap.restore().unwrap();
        assert!(!root.exists());
    }
}
