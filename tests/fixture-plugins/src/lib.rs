//! Shared pieces of the fixture plugins (one binary per fixture under `src/bin/`).
//!
//! Each fixture is a real plugin process that the host's tests (`core/tests/host_*.rs`) and the bench
//! start: one that works, and one for each way a plugin can misbehave.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use agent_env_plugin_sdk::{
    json, ErrorKind, ObjectStore, Plugin, RpcError, StepContext, StoreClass, StoreError, Value,
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

/// An object store kept in memory: `mem://<bucket>/<key>`.
pub struct MemoryObjectStore {
    bucket: String,
    objects: Mutex<HashMap<String, Vec<u8>>>,
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

    fn key_of(&self, url: &str) -> Result<String, StoreError> {
        let prefix = format!("mem://{}/", self.bucket);
        url.strip_prefix(&prefix)
            .map(str::to_string)
            .ok_or_else(|| {
                StoreError::new(ErrorKind::ForeignUrl, format!("{url} is not in {prefix}"))
            })
    }

    fn objects(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<u8>>> {
        self.objects.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ObjectStore for MemoryObjectStore {
    fn put(
        &self,
        key: &str,
        data: &[u8],
        _content_type: Option<&str>,
        allow_overwrite: bool,
    ) -> Result<String, StoreError> {
        let mut objects = self.objects();
        if !allow_overwrite && objects.contains_key(key) {
            return Err(StoreError::already_exists(format!("{key} exists already")));
        }
        objects.insert(key.to_string(), data.to_vec());
        self.object_url(key)
    }

    fn get(&self, url: &str) -> Result<Vec<u8>, StoreError> {
        let key = self.key_of(url)?;
        self.objects()
            .get(&key)
            .cloned()
            .ok_or_else(|| StoreError::not_found(format!("No object at {url}.")))
    }

    fn object_url(&self, key: &str) -> Result<String, StoreError> {
        Ok(format!("mem://{}/{key}", self.bucket))
    }

    fn get_object_key(&self, url: &str) -> Result<String, StoreError> {
        self.key_of(url)
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let mut keys: Vec<String> = self
            .objects()
            .keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect();
        keys.sort();
        Ok(keys)
    }

    fn owns(&self, url: &str) -> Result<bool, StoreError> {
        Ok(self.key_of(url).is_ok())
    }
}
