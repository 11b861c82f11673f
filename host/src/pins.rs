//! Executables pinned when a plugin was added: `agent-env plugin add` records the sha256 of each file a
//! plugin starts from (its executable, and the scripts its `exec` names inside its folder) in one pin
//! file; the host refuses to start a pinned plugin whose file changed since, naming the file and the
//! command that approves the change. A plugin with no pins (found on `PATH`, or added before pins
//! existed) starts as before.
//!
//! Hashing a large executable on every start would cost milliseconds, so a pin also keeps the file's
//! size, inode and change time (`ctime`, which no user can set back): while those match, the file is
//! the one that was hashed.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One pinned file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    pub path: PathBuf,
    pub sha256: String,
    pub size: u64,
    pub ino: u64,
    /// `ctime` in nanoseconds since the epoch.
    pub ctime_ns: i128,
}

/// The pin file: canonical package name → its pinned files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinFile {
    pub format_version: u32,
    pub packages: BTreeMap<String, Vec<Pin>>,
}

/// Why pins could not be read, written or checked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PinError {
    #[error("cannot read the plugin pins {path}: {reason}; remove it and re-approve each plugin with `agent-env plugin approve PACKAGE`")]
    Unreadable { path: String, reason: String },
    /// The file (or its folder) may not be read: the permissions to mend, not the file.
    #[error("cannot read the plugin pins {path}: {reason}; let this user read it and its folder")]
    Forbidden { path: String, reason: String },
    #[error("cannot write the plugin pins {path}: {reason}")]
    Unwritable { path: String, reason: String },
    #[error("cannot hash {path}: {reason}")]
    Unhashable { path: String, reason: String },
}

/// A pinned file that is not the one that was approved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub path: PathBuf,
    /// What it is now: a new sha256, or why it could not be read.
    pub now: String,
}

fn ctime_ns(meta: &fs::Metadata) -> i128 {
    i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec())
}

fn sha256_of(path: &Path) -> io::Result<String> {
    let mut file = fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Pins `path` as it is now.
pub fn pin(path: &Path) -> Result<Pin, PinError> {
    let fail = |e: io::Error| PinError::Unhashable {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let meta = fs::metadata(path).map_err(fail)?;
    Ok(Pin {
        path: path.to_path_buf(),
        sha256: sha256_of(path).map_err(fail)?,
        size: meta.len(),
        ino: meta.ino(),
        ctime_ns: ctime_ns(&meta),
    })
}

/// The files a plugin starts from: its resolved executable, and each other `argv` element that is the
/// absolute path of a file (a script an interpreter runs, wherever it lives).
pub fn files_of(argv: &[String], executable: &Path) -> Vec<PathBuf> {
    let mut files = vec![executable.to_path_buf()];
    for arg in argv.iter().skip(1) {
        let candidate = Path::new(arg);
        if candidate.is_absolute() && candidate.is_file() && !files.iter().any(|f| f == candidate) {
            files.push(candidate.to_path_buf());
        }
    }
    files
}

/// The files of `pins` that changed; empty when all are as approved.
pub fn changed(pins: &[Pin]) -> Vec<Changed> {
    pins.iter()
        .filter_map(|p| {
            let meta = match fs::metadata(&p.path) {
                Ok(m) => m,
                Err(e) => {
                    return Some(Changed {
                        path: p.path.clone(),
                        now: format!("unreadable ({e})"),
                    })
                }
            };
            if meta.len() == p.size && meta.ino() == p.ino && ctime_ns(&meta) == p.ctime_ns {
                return None;
            }
            match sha256_of(&p.path) {
                Ok(sum) if sum == p.sha256 => None,
                Ok(sum) => Some(Changed {
                    path: p.path.clone(),
                    now: format!("sha256 {sum}, approved {}", p.sha256),
                }),
                Err(e) => Some(Changed {
                    path: p.path.clone(),
                    now: format!("unreadable ({e})"),
                }),
            }
        })
        .collect()
}

/// Reads the pin file; an absent file holds no pins.
pub fn load(path: &Path) -> Result<PinFile, PinError> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| PinError::Unreadable {
            path: path.display().to_string(),
            reason: e.to_string(),
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(PinFile::default()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Err(PinError::Forbidden {
            path: path.display().to_string(),
            reason: e.to_string(),
        }),
        Err(e) => Err(PinError::Unreadable {
            path: path.display().to_string(),
            reason: e.to_string(),
        }),
    }
}

/// Writes the pin file whole (a temp file renamed over it).
pub fn save(path: &Path, pins: &PinFile) -> Result<(), PinError> {
    let fail = |e: String| PinError::Unwritable {
        path: path.display().to_string(),
        reason: e,
    };
    let mut pins = pins.clone();
    pins.format_version = 1;
    let text = serde_json::to_vec_pretty(&pins).map_err(|e| fail(e.to_string()))?;
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
    }
    let temp = path.with_extension(format!("tmp-{}", std::process::id()));
    fs::write(&temp, text).map_err(|e| fail(e.to_string()))?;
    fs::rename(&temp, path).map_err(|e| fail(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_holds_while_the_file_is_unchanged_and_catches_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("plugin");
        fs::write(&exe, b"#!/bin/sh\necho one\n").unwrap();
        let pinned = pin(&exe).unwrap();
        assert!(changed(std::slice::from_ref(&pinned)).is_empty());
        // Rewritten with the same bytes: ctime moves, the hash still matches.
        fs::write(&exe, b"#!/bin/sh\necho one\n").unwrap();
        assert!(changed(std::slice::from_ref(&pinned)).is_empty());
        fs::write(&exe, b"#!/bin/sh\necho two\n").unwrap();
        let found = changed(std::slice::from_ref(&pinned));
        assert_eq!(found.len(), 1);
        assert!(found[0].now.starts_with("sha256 "), "{:?}", found[0]);
        fs::remove_file(&exe).unwrap();
        assert!(changed(&[pinned])[0].now.starts_with("unreadable"));
    }

    #[test]
    fn a_plugin_starts_from_its_executable_and_each_file_named_by_an_absolute_argument() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("elsewhere/plugin.py");
        std::fs::create_dir_all(script.parent().unwrap()).unwrap();
        std::fs::write(&script, "print()").unwrap();
        let python = dir.path().join("python");
        std::fs::write(&python, "").unwrap();
        let argv: Vec<String> = [
            python.display().to_string(),
            "-u".into(),
            script.display().to_string(),
            "relative.py".into(),
            dir.path().display().to_string(),
            script.display().to_string(),
        ]
        .into();
        assert_eq!(files_of(&argv, &python), [python.clone(), script]);
    }

    #[test]
    fn the_pin_file_round_trips_and_an_absent_one_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pins.json");
        assert_eq!(load(&path).unwrap(), PinFile::default());
        let exe = dir.path().join("x");
        fs::write(&exe, b"x").unwrap();
        let mut file = PinFile::default();
        file.packages
            .insert("agentenv-x".into(), vec![pin(&exe).unwrap()]);
        save(&path, &file).unwrap();
        let back = load(&path).unwrap();
        assert_eq!(back.packages, file.packages);
        assert_eq!(back.format_version, 1);
        fs::write(&path, b"{").unwrap();
        assert!(load(&path).is_err());
    }
}
