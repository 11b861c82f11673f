//! A store plugin that misbehaves on purpose, for the host's plugin-store tests. Its `DiskObjectStore`
//! keeps each object as a file under its config's `root` (so objects outlast the process, and a test can
//! put a large one there itself), writes one line to stderr for every operation, exits with code 7 on
//! the calls its config names, and answers errors of no named kind for chosen keys.
//!
//! Config: `root` (required); `crash_at = N`: the Nth store operation exits with code 7;
//! `crash_from = N`: every operation from the Nth on does. Operations are counted over every process of
//! the store, in `<root>/.calls`, so a restarted process goes on counting.
//!
//! Keys (and URLs, `disk://fixture/<key>`) that start with `fail-internal` fail with an internal error,
//! those that start with `fail-io` with an I/O error. A download of a key that starts with `slow`
//! writes half the object, says so on stderr, and waits a minute before it writes the rest;
//! `slow_download_ms = N` makes every download do so, waiting N milliseconds.

use std::path::{Path, PathBuf};

use agent_env_plugin_sdk::{
    ObjectStore, Plugin, StoreClass, StoreError, StoreResult, Value, WireObjectMetadata,
};

/// Where the store's URLs start.
const PREFIX: &str = "disk://fixture/";

/// The code it exits with when told to crash.
const CRASH_CODE: i32 = 7;

struct DiskObjectStore {
    root: PathBuf,
    crash_at: Option<u64>,
    crash_from: Option<u64>,
    slow_download_ms: Option<u64>,
}

impl DiskObjectStore {
    fn class() -> StoreClass {
        StoreClass::object(
            "DiskObjectStore",
            &["root", "crash_at", "crash_from", "slow_download_ms"],
            |config| {
                let root = config.get("root").and_then(Value::as_str).unwrap_or("");
                std::fs::create_dir_all(root)
                    .map_err(|e| StoreError::io(format!("creating {root}"), &e))?;
                Ok(DiskObjectStore {
                    root: PathBuf::from(root),
                    crash_at: config.get("crash_at").and_then(Value::as_u64),
                    crash_from: config.get("crash_from").and_then(Value::as_u64),
                    slow_download_ms: config.get("slow_download_ms").and_then(Value::as_u64),
                })
            },
        )
        .required(&["root"])
    }

    /// Counts one operation, says it on stderr, and exits when the config says this one crashes; then
    /// fails for the keys that fail.
    fn begin(&self, op: &str, key: &str) -> StoreResult<()> {
        let n = self.count();
        eprintln!("fixture-store: {op} {key} (call {n})");
        let crash = self.crash_at == Some(n) || self.crash_from.is_some_and(|from| n >= from);
        if crash {
            eprintln!("fixture-store: crashing in the middle of {op}");
            std::process::exit(CRASH_CODE);
        }
        if key.starts_with("fail-internal") {
            return Err(StoreError::Internal(
                "RuntimeError: the acme backend said 503 Service Unavailable".into(),
            ));
        }
        if key.starts_with("fail-io") {
            return Err(StoreError::io(
                format!("reading {key}"),
                &std::io::Error::from_raw_os_error(libc::EIO),
            ));
        }
        Ok(())
    }

    /// The number of this operation, counting every process's.
    fn count(&self) -> u64 {
        let file = self.root.join(".calls");
        let before: u64 = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0);
        let _ = std::fs::write(&file, (before + 1).to_string());
        before + 1
    }

    fn key_of(&self, url: &str) -> StoreResult<String> {
        url.strip_prefix(PREFIX)
            .map(str::to_string)
            .ok_or_else(|| StoreError::ForeignUrl(format!("{url} is not in {PREFIX}")))
    }

    fn path(&self, key: &str) -> StoreResult<PathBuf> {
        if key.is_empty() || key.starts_with('/') || key.split('/').any(|p| p == ".." || p == ".") {
            return Err(StoreError::InvalidValue(format!(
                "Key '{key}' leaves the store: a key is a relative path without '..' parts."
            )));
        }
        Ok(self.root.join("objects").join(key))
    }

    fn object_file(&self, url: &str) -> StoreResult<PathBuf> {
        let path = self.path(&self.key_of(url)?)?;
        match path.is_file() {
            true => Ok(path),
            false => Err(StoreError::object_not_found(url)),
        }
    }
}

fn write_file(path: &Path, data: &[u8]) -> StoreResult<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| StoreError::io(format!("creating {}", parent.display()), &e))?;
    }
    std::fs::write(path, data)
        .map_err(|e| StoreError::io(format!("writing {}", path.display()), &e))
}

impl ObjectStore for DiskObjectStore {
    fn put(
        &self,
        key: &str,
        data: &[u8],
        _content_type: &str,
        allow_overwrite: bool,
    ) -> StoreResult<String> {
        self.begin("put", key)?;
        let path = self.path(key)?;
        if !allow_overwrite && path.exists() {
            return Err(StoreError::object_exists(&path.display().to_string()));
        }
        write_file(&path, data)?;
        self.object_url(key)
    }

    fn get(&self, url: &str) -> StoreResult<Vec<u8>> {
        self.begin("get", &self.key_of(url)?)?;
        let path = self.object_file(url)?;
        std::fs::read(&path).map_err(|e| StoreError::io(format!("reading {}", path.display()), &e))
    }

    fn put_file(&self, key: &str, file_path: &Path, _content_type: &str) -> StoreResult<String> {
        self.begin("put_file", key)?;
        let path = self.path(key)?;
        if path.exists() {
            return Err(StoreError::object_exists(&path.display().to_string()));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| StoreError::io(format!("creating {}", parent.display()), &e))?;
        }
        std::fs::copy(file_path, &path)
            .map_err(|e| StoreError::io(format!("copying {}", file_path.display()), &e))?;
        self.object_url(key)
    }

    fn put_file_at(&self, url: &str, file_path: &Path, content_type: &str) -> StoreResult<String> {
        self.put_file(&self.key_of(url)?, file_path, content_type)
    }

    fn get_object_metadata(&self, key: &str) -> StoreResult<Option<WireObjectMetadata>> {
        self.begin("get_object_metadata", key)?;
        let path = self.path(key)?;
        Ok(std::fs::metadata(&path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| WireObjectMetadata {
                content_type: None,
                size: Some(m.len()),
                last_modified: None,
                content_encoding: None,
                etag: None,
            }))
    }

    fn get_object_metadata_at(&self, url: &str) -> StoreResult<Option<WireObjectMetadata>> {
        self.get_object_metadata(&self.key_of(url)?)
    }

    fn object_url(&self, key: &str) -> StoreResult<String> {
        Ok(format!("{PREFIX}{key}"))
    }

    fn get_object_key(&self, url: &str) -> StoreResult<String> {
        self.key_of(url)
    }

    /// Copies the file: the object never goes through memory whole.
    fn download_to_file(&self, url: &str, dest: &Path) -> StoreResult<()> {
        self.begin("download_to_file", &self.key_of(url)?)?;
        let path = self.object_file(url)?;
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| StoreError::io(format!("creating {}", parent.display()), &e))?;
        }
        let wait = match self.slow_download_ms {
            Some(ms) => Some(std::time::Duration::from_millis(ms)),
            None if self.key_of(url)?.starts_with("slow") => {
                Some(std::time::Duration::from_secs(60))
            }
            None => None,
        };
        if let Some(wait) = wait {
            let bytes = std::fs::read(&path)
                .map_err(|e| StoreError::io(format!("reading {}", path.display()), &e))?;
            write_file(dest, &bytes[..bytes.len() / 2])?;
            eprintln!("fixture-store: wrote half of {url}, waiting");
            std::thread::sleep(wait);
        }
        std::fs::copy(&path, dest)
            .map_err(|e| StoreError::io(format!("writing {}", dest.display()), &e))?;
        Ok(())
    }

    fn list(&self, prefix: &str) -> StoreResult<Vec<String>> {
        self.begin("list", prefix)?;
        let mut keys = Vec::new();
        collect_keys(&self.root.join("objects"), "", &mut keys);
        keys.retain(|k| k.starts_with(prefix));
        keys.sort();
        Ok(keys)
    }

    fn list_at(&self, url_prefix: &str) -> StoreResult<Vec<String>> {
        self.list(&self.key_of(url_prefix)?)?
            .iter()
            .map(|k| self.object_url(k))
            .collect()
    }

    fn owns(&self, url: &str) -> StoreResult<bool> {
        Ok(url.starts_with(PREFIX))
    }
}

/// Every file under `dir`, as keys below `at`.
fn collect_keys(dir: &Path, at: &str, keys: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let key = format!("{at}{name}");
        if entry.path().is_dir() {
            collect_keys(&entry.path(), &format!("{key}/"), keys);
        } else {
            keys.push(key);
        }
    }
}

fn main() {
    let plugin = Plugin::new("agentenv-fixture-store", "0.1.0").store(DiskObjectStore::class());
    plugin.serve()
}
