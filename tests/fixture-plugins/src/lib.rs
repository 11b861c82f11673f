//! Shared pieces of the fixture plugins (one binary per fixture under `src/bin/`).
//!
//! Each fixture is a real plugin process that the host's tests (`host/tests/it/host_*.rs`) and the bench
//! start: one that works, and one for each way a plugin can misbehave. Beside them, `go/` and `python/`
//! hold fixtures written with the Go and Python SDKs, which the cross-language suite builds and runs.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use agent_env_plugin_sdk::{
    json, ErrorKind, ObjectMetadata, ObjectStore, Plugin, RpcError, SecretStore, StepContext,
    StoreClass, StoreError, StoreResult, Value,
};

/// Adds the methods every working fixture answers: `echo`, `sleep` (honours cancel), `pid`,
/// `stderr` (writes a line to stderr), `big` (answers a string of `bytes` bytes) and `size`
/// (measures the string `data` it was sent), `cancelled` (how many `sleep`s saw a cancel).
pub fn with_basics(plugin: Plugin) -> Plugin {
    plugin
        .method("echo", |_ctx, params| Ok(params))
        .method("sleep", sleep)
        .method("cancelled", |_ctx, _| {
            Ok(json!({ "count": CANCELLED.load(Ordering::SeqCst) }))
        })
        .method("pid", |_ctx, _| Ok(json!({ "pid": std::process::id() })))
        .method("stderr", |_ctx, params| {
            eprintln!("{}", params["line"].as_str().unwrap_or("(no line)"));
            Ok(Value::Null)
        })
        .method("big", |_ctx, params| {
            let n = params["bytes"].as_u64().unwrap_or(0) as usize;
            Ok(json!({ "data": "x".repeat(n) }))
        })
        .method("size", |_ctx, params| {
            Ok(json!({ "bytes": params["data"].as_str().map(str::len).unwrap_or(0) }))
        })
}

static CANCELLED: AtomicU64 = AtomicU64::new(0);

fn sleep(ctx: &StepContext<'_>, params: Value) -> Result<Value, RpcError> {
    let ms = params["ms"].as_u64().unwrap_or(1000);
    for _ in 0..ms {
        if ctx.is_cancelled() {
            CANCELLED.fetch_add(1, Ordering::SeqCst);
            return Err(RpcError::new(ErrorKind::Cancelled, "cancelled by the host"));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(json!({ "slept_ms": ms }))
}

/// Writes `bytes` straight to `fd`, bypassing everything the SDK does to protect stdout.
pub fn write_raw(fd: i32, bytes: &[u8]) {
    let mut rest = bytes;
    while !rest.is_empty() {
        // SAFETY: writing a live buffer to an fd this process owns.
        let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
        if n <= 0 {
            return;
        }
        rest = &rest[n as usize..];
    }
}

/// A duplicate of the current stdout (before the SDK moves it aside), for [`write_raw`].
pub fn dup_stdout() -> i32 {
    // SAFETY: dup of fd 1.
    unsafe { libc::dup(1) }
}

/// A secret store whose secrets are its config's `values` table: a plugin-provided `[stores.secret]`.
pub struct TableSecretStore {
    values: HashMap<String, String>,
}

impl TableSecretStore {
    /// The store class, taking `values` (a table of name → string) and `open_delay_ms`, how long
    /// opening the store takes (for the tests of steps asking for a store while it opens).
    pub fn class() -> StoreClass {
        StoreClass::secret("TableSecretStore", &["values", "open_delay_ms"], |config| {
            if let Some(ms) = config.get("open_delay_ms").and_then(Value::as_u64) {
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
            let values = config
                .get("values")
                .and_then(Value::as_object)
                .map(|table| {
                    table
                        .iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                        .collect()
                })
                .unwrap_or_default();
            Ok(TableSecretStore { values })
        })
    }
}

impl SecretStore for TableSecretStore {
    fn get(&self, name: &str) -> StoreResult<Option<String>> {
        // Which process serves the store, for the tests that check one process serves a package.
        if name == "$pid" {
            return Ok(Some(std::process::id().to_string()));
        }
        Ok(self.values.get(name).cloned())
    }
}

/// One object of a [`MemoryObjectStore`]: its bytes, content type and when it was written.
struct MemoryObject {
    data: Vec<u8>,
    content_type: String,
    written: String,
}

/// An object store kept in memory: `mem://<bucket>/<key>`. It implements every object operation
/// itself, so it passes the object kit through the pipe.
pub struct MemoryObjectStore {
    bucket: String,
    objects: Mutex<HashMap<String, MemoryObject>>,
}

impl MemoryObjectStore {
    /// The store class, taking `root` (required) and `bucket`.
    pub fn class() -> StoreClass {
        StoreClass::object("MemoryObjectStore", &["root", "bucket"], |config| {
            Ok(MemoryObjectStore {
                bucket: config
                    .get("bucket")
                    .and_then(Value::as_str)
                    .unwrap_or("default")
                    .to_string(),
                objects: Mutex::new(HashMap::new()),
            })
        })
        .required(&["root"])
    }

    fn key_of(&self, url: &str) -> StoreResult<String> {
        let prefix = format!("mem://{}/", self.bucket);
        url.strip_prefix(&prefix)
            .map(str::to_string)
            .ok_or_else(|| StoreError::ForeignUrl(format!("{url} is not in {prefix}")))
    }

    fn objects(&self) -> std::sync::MutexGuard<'_, HashMap<String, MemoryObject>> {
        self.objects.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` (UTC) for now.
fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

impl ObjectStore for MemoryObjectStore {
    fn put(
        &self,
        key: &str,
        data: &[u8],
        content_type: &str,
        allow_overwrite: bool,
    ) -> StoreResult<String> {
        if key.starts_with('/') || key.split('/').any(|part| part == "..") {
            return Err(StoreError::InvalidValue(format!(
                "Key '{key}' leaves the store: a key is a relative path without '..' parts."
            )));
        }
        let mut objects = self.objects();
        if !allow_overwrite && objects.contains_key(key) {
            return Err(StoreError::AlreadyExists(format!("{key} exists already")));
        }
        let object = MemoryObject {
            data: data.to_vec(),
            content_type: content_type.to_string(),
            written: now_rfc3339(),
        };
        objects.insert(key.to_string(), object);
        self.object_url(key)
    }

    fn get(&self, url: &str) -> StoreResult<Vec<u8>> {
        let key = self.key_of(url)?;
        self.objects()
            .get(&key)
            .map(|o| o.data.clone())
            .ok_or_else(|| StoreError::object_not_found(url))
    }

    fn put_file_at(&self, url: &str, path: &Path, content_type: &str) -> StoreResult<String> {
        self.put_file(&self.key_of(url)?, path, content_type)
    }

    fn get_object_metadata(&self, key: &str) -> StoreResult<Option<ObjectMetadata>> {
        Ok(self.objects().get(key).map(|o| ObjectMetadata {
            content_type: Some(o.content_type.clone()),
            size: Some(o.data.len() as u64),
            last_modified: Some(o.written.clone()),
            content_encoding: None,
            etag: None,
        }))
    }

    fn get_object_metadata_at(&self, url: &str) -> StoreResult<Option<ObjectMetadata>> {
        self.get_object_metadata(&self.key_of(url)?)
    }

    fn object_url(&self, key: &str) -> StoreResult<String> {
        Ok(format!("mem://{}/{key}", self.bucket))
    }

    fn get_object_key(&self, url: &str) -> StoreResult<String> {
        self.key_of(url)
    }

    fn list(&self, prefix: &str) -> StoreResult<Vec<String>> {
        let mut keys: Vec<String> = self
            .objects()
            .keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect();
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
        Ok(self.key_of(url).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory_store() -> MemoryObjectStore {
        MemoryObjectStore {
            bucket: "kit".into(),
            objects: Mutex::new(HashMap::new()),
        }
    }

    /// The store the host's tests check through the pipe passes the same kit in-process, through the
    /// SDK's testing module: a fresh store, then twice more on one store (a namespace each time).
    #[test]
    fn the_memory_store_passes_the_object_kit_in_process() {
        agent_env_plugin_sdk::testing::assert_passed(&agent_env_plugin_sdk::testing::object_kit(
            &memory_store(),
            "",
        ));
        let shared = memory_store();
        agent_env_plugin_sdk::testing::assert_object_store_conforms(&shared);
        agent_env_plugin_sdk::testing::assert_object_store_conforms(&shared);
    }
}
