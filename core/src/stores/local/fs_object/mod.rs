//! `LocalFilesystemObjectStore`: objects as files under a root (default `<state root>/object_store`),
//! `file://` URLs, atomic write-once commits, content-type sidecars.
//!
//! Layout under the root: objects at `<root>/<key>`; `.gitignore` (`*`) written when the store creates the
//! root (mode 0700); `.agentenv-meta/<key>` sidecars; `.agentenv-tmp/` staging files and 256 lock stripes.
//! Nothing is created until the first write. A store built from its config table issues transfer
//! grants (`grants = "auto"`, the default) from a loopback HTTPS server started by the first grant
//! ([`grants`]); a store made with [`LocalFilesystemObjectStore::new`] issues none.
//!
//! Nothing inside the root is reached through a symlink (see [`beneath`]): a symlinked folder, object,
//! `.agentenv-tmp` or `.agentenv-meta` is refused with an error naming it, and listings skip symlinks.

mod beneath;
pub mod grants;
mod keys;
mod locks;
mod settings;
mod sidecar;
mod staging;

use std::fs::File;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rustix::fs::FileType;

use self::beneath::{symlink_found, Dir};
use self::keys::{split_key, Resolved, META_DIR, RESERVED, TMP_DIR};
use self::staging::Staged;
use super::private_dir::{check_makeable, ensure_private_dir};
use crate::clock::rfc3339_utc;
use crate::environment::Environment;
use crate::stores::config_table::{self, ConfigTable};
use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::grant::{HttpGetGrant, HttpPostPolicyGrant, HttpPutGrant, UploadPolicy};
use agent_env_store::object::{ObjectMetadata, ObjectReader, ObjectStore, DEFAULT_CONTENT_TYPE};
use agent_env_store::SettingsProblems;
use std::time::Duration;

/// The class name, as `[stores.object] impl` names it.
pub const CLASS: &str = "LocalFilesystemObjectStore";
/// The original's full impl path, which the `local` alias expands to.
pub const IMPL: &str = "agent_env.store.object_store:LocalFilesystemObjectStore";
/// The keys its config table takes.
pub const CONFIG_KEYS: [&str; 5] = [
    "root",
    "grants",
    "grant_bind_host",
    "grant_advertise_host",
    "grant_lifetime_seconds",
];

/// Objects as files under one root directory.
pub struct LocalFilesystemObjectStore {
    root: PathBuf,
    /// Set once the root and staging folder exist: whether anonymous staging files work there.
    ready: OnceLock<bool>,
    /// How it grants; `None` when it does not.
    grants: Option<grants::GrantSettings>,
}

/// The host grant URLs name unless `grant_advertise_host` says otherwise: this machine's loopback name,
/// which a process here resolves. Sandboxes in containers need `host.docker.internal`.
pub const DEFAULT_ADVERTISE_HOST: &str = "localhost";

impl LocalFilesystemObjectStore {
    /// A store rooted at `root` (nothing is created yet). A relative root is taken from the
    /// process's working directory; [`LocalFilesystemObjectStore::from_config`] takes it from the
    /// invocation's.
    pub fn new(root: impl AsRef<Path>) -> Self {
        LocalFilesystemObjectStore {
            root: keys::resolve_root(root.as_ref()),
            ready: OnceLock::new(),
            grants: None,
        }
    }

    /// The same store, issuing grants with `settings`.
    pub fn with_grants(mut self, settings: grants::GrantSettings) -> Self {
        self.grants = Some(settings);
        self
    }

    /// The default root: `<state root>/object_store` in `env`.
    pub fn default_root(env: &Environment) -> PathBuf {
        crate::paths::local_objects_root(&crate::paths::Paths::noted(env).state_root())
    }

    /// Builds the store from its config table, refusing unknown keys and bad grant settings; `~`, the
    /// folder a relative root is taken from (its working directory) and the default root are
    /// `env`'s. Each key is read on its own, so the error names every problem.
    pub fn from_config(
        impl_name: &str,
        table: &ConfigTable,
        env: &Environment,
    ) -> Result<Self, SettingsProblems> {
        let mut problems = config_table::key_problems(impl_name, table, &CONFIG_KEYS, &[]);
        let grants = settings::read_checked(&mut problems, impl_name, table, "grants", |v| {
            settings::check_grants(v).map(|()| v.to_string())
        });
        let bind = settings::read_checked(
            &mut problems,
            impl_name,
            table,
            "grant_bind_host",
            settings::check_bind_host,
        )
        .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST));
        let advertise = settings::read_checked(
            &mut problems,
            impl_name,
            table,
            "grant_advertise_host",
            |v| settings::check_advertise_host(v).map(|()| v.to_string()),
        )
        .unwrap_or_else(|| DEFAULT_ADVERTISE_HOST.to_string());
        let lifetime = table
            .get("grant_lifetime_seconds")
            .and_then(|lifetime| problems.keep(settings::check_lifetime(lifetime)))
            .unwrap_or(agent_env_store::grant::DEFAULT_GRANT_LIFETIME_SECONDS);
        let root = problems
            .keep(config_table::opt_path(impl_name, table, "root"))
            .flatten()
            .map(|root| env.cwd().join(config_table::expand_home(&root, env)))
            .unwrap_or_else(|| Self::default_root(env));
        let store = problems.into_result(Self::new(root))?;
        if grants.as_deref() == Some("off") {
            return Ok(store);
        }
        Ok(store.with_grants(grants::GrantSettings {
            bind,
            advertise,
            lifetime: std::time::Duration::from_secs(lifetime),
            tls_dir: crate::paths::Paths::noted(env).state_root().join("tls"),
        }))
    }

    /// The resolved root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Removes every object under the folder `prefix` (`agent-env-kit/<hex>/`) and their sidecars,
    /// then each folder above it that is left empty: what `store check object` wrote, which only
    /// this store can take back (the object store API has no delete). A folder already gone is no
    /// error; a symlink on the way is not followed.
    pub fn remove_folder(&self, prefix: &str) -> StoreResult<()> {
        let target = keys::resolve_key(&self.root, prefix.trim_end_matches('/'))?;
        if target.key == "." {
            return Err(StoreError::InvalidValue(
                "the store's root is not a folder to remove".into(),
            ));
        }
        for base in [self.root.clone(), self.root.join(META_DIR)] {
            let mut folder = base.clone();
            let real_folders = target.key.split('/').all(|part| {
                folder.push(part);
                std::fs::symlink_metadata(&folder).is_ok_and(|m| m.is_dir())
            });
            if !real_folders {
                continue;
            }
            std::fs::remove_dir_all(&folder)
                .map_err(|e| StoreError::io(format!("removing {}", folder.display()), &e))?;
            // The folders above it, while empty (another check's folder keeps them).
            let mut above = folder.parent();
            while let Some(dir) = above.filter(|d| *d != base && d.starts_with(&base)) {
                if std::fs::remove_dir(dir).is_err() {
                    break;
                }
                above = dir.parent();
            }
        }
        Ok(())
    }

    /// The root folder, `None` before the first write created it.
    fn open_root(&self) -> StoreResult<Option<Dir>> {
        Dir::open_root(&self.root)
    }

    /// Creates the root (private-state rule) and the staging folder, and once per store sweeps abandoned
    /// staging files and finds whether anonymous staging files work under the root.
    /// Returns the root, the staging folder, and that answer.
    fn open_for_writes(&self) -> StoreResult<(Dir, Dir, bool)> {
        ensure_private_dir(&self.root)?;
        let root = self.open_root()?.ok_or_else(|| {
            StoreError::Internal(format!(
                "{} vanished after it was created",
                self.root.display()
            ))
        })?;
        let tmp = must_exist(root.child(TMP_DIR, true)?, &self.root.join(TMP_DIR))?;
        if let Some(anonymous) = self.ready.get() {
            return Ok((root, tmp, *anonymous));
        }
        staging::sweep_abandoned(&tmp);
        let anonymous = Staged::anonymous_works(&tmp);
        let anonymous = *self.ready.get_or_init(|| anonymous);
        Ok((root, tmp, anonymous))
    }

    fn resolve_object_key(&self, key: &str) -> StoreResult<Resolved> {
        let resolved = keys::resolve_key(&self.root, key)?;
        if resolved.key == "." {
            return Err(StoreError::InvalidValue(format!(
                "Key '{key}' names the store root, not an object."
            )));
        }
        Ok(resolved)
    }

    /// Stages the bytes `fill` writes, then commits them at `target` under the key's lock.
    fn write(
        &self,
        target: &Resolved,
        content_type: &str,
        allow_overwrite: bool,
        fill: impl FnOnce(&mut Staged) -> StoreResult<()>,
    ) -> StoreResult<String> {
        let (root, tmp, anonymous_staging) = self.open_for_writes()?;
        let (folders, name) = split_key(&target.key);
        let exists_error = || StoreError::object_exists(&target.path.display().to_string());
        if let Some(folder) = root.walk(&folders, false)? {
            match folder.kind_of(name)? {
                Some(FileType::Symlink) => return Err(symlink_found(&target.path)),
                Some(FileType::Directory) => {
                    return Err(StoreError::InvalidValue(format!(
                        "Key '{}' names a folder of other objects in the store, so it cannot hold an object.",
                        target.key
                    )))
                }
                Some(_) if !allow_overwrite => return Err(exists_error()),
                _ => {}
            }
        }
        let anonymous = (!allow_overwrite && anonymous_staging)
            .then(|| Staged::create_anonymous(&tmp))
            .flatten();
        let mut staged = match anonymous {
            Some(staged) => staged,
            None => Staged::create(&tmp)?,
        };
        fill(&mut staged)?;
        let size = staged
            .file
            .metadata()
            .map_err(|e| StoreError::io(format!("reading {}", staged.path.display()), &e))?
            .len();
        let mtime_ns = staged.stamp_unique_mtime()?;
        let parent = target.path.parent().unwrap_or(&self.root);
        let folder = must_exist(root.walk(&folders, true)?, parent)?;
        let meta = root.child(META_DIR, false)?;
        let _lock = locks::lock_stripe(&tmp, &target.path, true)?;
        let writing =
            |e: std::io::Error| StoreError::io(format!("writing {}", target.path.display()), &e);
        if allow_overwrite {
            sidecar::remove(meta.as_ref(), &target.key)?;
            staged.rename_to(&folder, name).map_err(writing)?;
        } else {
            match staged.link_to(&folder, name) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::AlreadyExists => return Err(exists_error()),
                Err(e) if lacks_hard_links(&e) && !staged.is_anonymous() => {
                    if folder.kind_of(name)?.is_some() {
                        return Err(exists_error());
                    }
                    staged.rename_to(&folder, name).map_err(writing)?;
                }
                Err(e) => return Err(writing(e)),
            }
            sidecar::remove(meta.as_ref(), &target.key)?;
        }
        if content_type != DEFAULT_CONTENT_TYPE {
            let meta = match meta {
                Some(meta) => meta,
                None => must_exist(root.child(META_DIR, true)?, &self.root.join(META_DIR))?,
            };
            sidecar::write(&meta, &tmp, &target.key, content_type, size, mtime_ns)?;
        }
        Ok(keys::url_of(&target.path))
    }

    /// The object a read URL names (a `file://` URL or a bare absolute path under the root).
    fn readable(&self, url: &str) -> StoreResult<Resolved> {
        let path = keys::path_of_readable(url)?;
        keys::key_of_path(&self.root, &path, url)
    }

    /// The folder a resolved key names (`.` is the root); `None` when there is none.
    fn folder_of(&self, root: &Dir, target: &Resolved) -> StoreResult<Option<Dir>> {
        if target.key == "." {
            return root.try_clone().map(Some);
        }
        root.walk(&target.key.split('/').collect::<Vec<_>>(), false)
    }

    /// Opens the object file, refusing a symlink and mapping every "no object here" to not-found.
    fn open_object(&self, target: &Resolved) -> StoreResult<File> {
        let missing = || StoreError::object_not_found(&keys::url_of(&target.path));
        if target.key == "." {
            return Err(missing());
        }
        let (folders, name) = split_key(&target.key);
        let Some(root) = self.open_root()? else {
            return Err(missing());
        };
        let Some(folder) = root.walk(&folders, false)? else {
            return Err(missing());
        };
        let file = folder.open_read(name)?.ok_or_else(missing)?;
        let is_file = file
            .metadata()
            .map_err(|e| StoreError::io(format!("reading {}", target.path.display()), &e))?
            .is_file();
        if is_file {
            Ok(file)
        } else {
            Err(missing())
        }
    }

    fn metadata_of(&self, target: &Resolved) -> StoreResult<Option<ObjectMetadata>> {
        if target.key == "." {
            return Ok(None);
        }
        let Some(root) = self.open_root()? else {
            return Ok(None);
        };
        let _lock = match root.child(TMP_DIR, false)? {
            Some(tmp) => Some(locks::lock_stripe(&tmp, &target.path, false)?),
            None => None,
        };
        let (folders, name) = split_key(&target.key);
        let Some(folder) = root.walk(&folders, false)? else {
            return Ok(None);
        };
        let meta = match folder.open_read(name)?.map(|f| f.metadata()) {
            Some(Ok(m)) if m.is_file() => m,
            _ => return Ok(None),
        };
        let content_type = root
            .child(META_DIR, false)
            .ok()
            .flatten()
            .and_then(|dir| sidecar::read(&dir, &target.key, &meta));
        Ok(Some(ObjectMetadata {
            content_type,
            size: Some(meta.len()),
            last_modified: meta.modified().ok().map(rfc3339_utc),
            content_encoding: None,
            etag: None,
        }))
    }

    /// Every object file under `dir`, as paths relative to it, skipping the store's own root entries
    /// and every symlink.
    fn files_under(&self, dir: &Dir, is_root: bool) -> StoreResult<Vec<String>> {
        let mut out = Vec::new();
        walk(dir, "", is_root, &mut out)?;
        Ok(out)
    }
}

/// Fails with an internal error when a folder that was just created is missing.
fn must_exist(dir: Option<Dir>, path: &Path) -> StoreResult<Dir> {
    dir.ok_or_else(|| StoreError::Internal(format!("{} was not created", path.display())))
}

/// Filesystems without hard links answer one of these.
fn lacks_hard_links(err: &std::io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::EPERM) | Some(libc::EOPNOTSUPP) | Some(libc::EXDEV) | Some(libc::EMLINK)
    )
}

fn walk(dir: &Dir, rel: &str, skip_reserved: bool, out: &mut Vec<String>) -> StoreResult<()> {
    for (name, kind) in dir.entries()? {
        if skip_reserved && RESERVED.contains(&name.as_str()) {
            continue;
        }
        let child_rel = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        // The entry's own type: a symlink is neither a folder nor a file here.
        match kind {
            FileType::Directory => {
                if let Some(child) = dir.child(&name, false)? {
                    walk(&child, &child_rel, false, out)?;
                }
            }
            FileType::RegularFile => out.push(child_rel),
            _ => {}
        }
    }
    Ok(())
}

impl ObjectStore for LocalFilesystemObjectStore {
    /// The root is, or can be made, a folder this user may write in (nothing is created).
    fn probe(&self) -> StoreResult<()> {
        check_makeable(&self.root)
    }

    fn put(
        &self,
        key: &str,
        data: &[u8],
        content_type: &str,
        allow_overwrite: bool,
    ) -> StoreResult<String> {
        let target = self.resolve_object_key(key)?;
        self.write(&target, content_type, allow_overwrite, |staged| {
            staged.write_all(data)
        })
    }

    fn put_file(&self, key: &str, file_path: &Path, content_type: &str) -> StoreResult<String> {
        let target = self.resolve_object_key(key)?;
        self.write(&target, content_type, false, |staged| {
            staged.copy_from(file_path).map(|_| ())
        })
    }

    fn put_file_at(
        &self,
        object_url: &str,
        file_path: &Path,
        content_type: &str,
    ) -> StoreResult<String> {
        let key = self.get_object_key(object_url)?;
        self.put_file(&key, file_path, content_type)
    }

    fn get(&self, object_url: &str) -> StoreResult<Vec<u8>> {
        use std::io::Read;
        let target = self.readable(object_url)?;
        let mut file = self.open_object(&target)?;
        let mut data = Vec::new();
        file.read_to_end(&mut data)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::EISDIR) => StoreError::object_not_found(&keys::url_of(&target.path)),
                _ => StoreError::io(format!("reading {}", target.path.display()), &e),
            })?;
        Ok(data)
    }

    fn get_object_metadata(&self, key: &str) -> StoreResult<Option<ObjectMetadata>> {
        let target = keys::resolve_key(&self.root, key)?;
        self.metadata_of(&target)
    }

    fn get_object_metadata_at(&self, object_url: &str) -> StoreResult<Option<ObjectMetadata>> {
        let path = keys::path_of_url(object_url)?;
        let target = keys::key_of_path(&self.root, &path, object_url)?;
        self.metadata_of(&target)
    }

    fn list(&self, prefix: &str) -> StoreResult<Vec<String>> {
        let Some(root) = self.open_root()? else {
            return Ok(Vec::new());
        };
        let start = match prefix.rsplit_once('/') {
            Some((dir, _)) if !dir.is_empty() => keys::resolve_key(&self.root, dir)?,
            _ => keys::resolve_key(&self.root, "")?,
        };
        let rel = start.key.clone();
        let Some(folder) = self.folder_of(&root, &start)? else {
            return Ok(Vec::new());
        };
        let found = self.files_under(&folder, rel == ".")?;
        let mut keys: Vec<String> = found
            .into_iter()
            .map(|k| if rel == "." { k } else { format!("{rel}/{k}") })
            .filter(|k| k.starts_with(prefix))
            .collect();
        keys.sort();
        Ok(keys)
    }

    fn list_at(&self, url_prefix: &str) -> StoreResult<Vec<String>> {
        let path = keys::path_of_url(url_prefix)?;
        let target = keys::key_of_path(&self.root, &path, url_prefix)?;
        let Some(root) = self.open_root()? else {
            return Ok(Vec::new());
        };
        let Some(folder) = self.folder_of(&root, &target)? else {
            return Ok(Vec::new());
        };
        let base = url_prefix.trim_end_matches('/');
        let mut urls: Vec<String> = self
            .files_under(&folder, target.key == ".")?
            .into_iter()
            .map(|rel| format!("{base}/{rel}"))
            .collect();
        urls.sort();
        Ok(urls)
    }

    fn object_url(&self, key: &str) -> StoreResult<String> {
        Ok(keys::url_of(&keys::resolve_key(&self.root, key)?.path))
    }

    fn get_object_key(&self, object_url: &str) -> StoreResult<String> {
        let path = keys::path_of_url(object_url)?;
        Ok(keys::key_of_path(&self.root, &path, object_url)?.key)
    }

    fn download_to_file(&self, object_url: &str, dest: &Path) -> StoreResult<()> {
        let target = self.readable(object_url)?;
        let mut source = self.open_object(&target)?;
        agent_env_store::object::write_to_file(&mut source, dest)
    }

    fn open(&self, object_url: &str) -> StoreResult<ObjectReader> {
        let target = self.readable(object_url)?;
        Ok(Box::new(self.open_object(&target)?))
    }

    /// A `file://` URL under this store's folder that names no key it may hold (a part longer than
    /// a file name may be, a reserved name) is refused in its words, not called another store's.
    fn owns(&self, object_url: &str) -> StoreResult<bool> {
        match self.get_object_key(object_url) {
            Ok(_) => Ok(true),
            Err(refusal @ StoreError::InvalidValue(_)) => Err(refusal),
            Err(_) => Ok(false),
        }
    }

    fn supports_transfer_grants(&self) -> bool {
        self.grants.is_some()
    }

    fn grant_trust_pem(&self) -> Option<String> {
        let settings = self.grants.as_ref()?;
        grants::ca::LocalCa::load_or_create(&settings.tls_dir)
            .ok()
            .map(|ca| ca.cert_pem)
    }

    fn issue_read_grant(
        &self,
        object_url: &str,
        expires_in: Option<Duration>,
    ) -> StoreResult<HttpGetGrant> {
        let (server, lifetime) = self.grant_server(expires_in)?;
        let key = self
            .resolve_object_key(&self.get_object_key(object_url)?)?
            .key;
        let (exp, expires_at) = grants::expiry(lifetime);
        let claims = self.claims("get", exp, Some(key), None, None, None);
        Ok(HttpGetGrant::new(server.url(&claims), expires_at))
    }

    fn issue_write_grant(
        &self,
        object_url: &str,
        media_type: &str,
        max_bytes: u64,
        expires_in: Option<Duration>,
    ) -> StoreResult<HttpPutGrant> {
        let (server, lifetime) = self.grant_server(expires_in)?;
        let key = self
            .resolve_object_key(&self.get_object_key(object_url)?)?
            .key;
        let (exp, expires_at) = grants::expiry(lifetime);
        let claims = self.claims(
            "put",
            exp,
            Some(key),
            None,
            Some(max_bytes),
            Some(media_type.to_string()),
        );
        Ok(HttpPutGrant::new(
            server.url(&claims),
            expires_at,
            media_type,
        ))
    }

    fn issue_upload_policy(
        &self,
        prefix_url: &str,
        max_object_bytes: u64,
        expires_in: Duration,
    ) -> StoreResult<UploadPolicy> {
        let (server, lifetime) = self.grant_server(Some(expires_in))?;
        let key = self.get_object_key(prefix_url)?;
        let prefix = if key == "." || key.is_empty() {
            String::new()
        } else {
            format!("{}/", key.trim_end_matches('/'))
        };
        let (exp, expires_at) = grants::expiry(lifetime);
        let claims = self.claims(
            "post",
            exp,
            None,
            Some(prefix),
            Some(max_object_bytes),
            None,
        );
        Ok(UploadPolicy {
            write: HttpPostPolicyGrant::new(server.url(&claims), Default::default(), "key", "file"),
            expires_at,
        })
    }
}

impl LocalFilesystemObjectStore {
    /// The grant server (started on first use, this store registered with it) and a grant's lifetime.
    fn grant_server(
        &self,
        expires_in: Option<Duration>,
    ) -> StoreResult<(std::sync::Arc<grants::GrantServer>, Duration)> {
        let settings = self
            .grants
            .as_ref()
            .ok_or_else(|| agent_env_store::grant::grants_unsupported(CLASS))?;
        let lifetime = agent_env_store::grant::grant_lifetime(
            expires_in,
            settings.lifetime,
            settings::MAX_LOCAL_GRANT_LIFETIME_SECONDS,
        )?;
        let server = grants::server_for(settings)?;
        server.register(&grants::store_id(&self.root), &self.root);
        Ok((server, lifetime))
    }

    fn claims(
        &self,
        op: &str,
        exp: i64,
        k: Option<String>,
        p: Option<String>,
        max: Option<u64>,
        ct: Option<String>,
    ) -> grants::token::Claims {
        grants::token::Claims {
            op: op.to_string(),
            s: grants::store_id(&self.root),
            exp,
            id: grants::grant_id(),
            k,
            p,
            max,
            ct,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_root_is_taken_from_the_invocations_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::from_vars([("HOME", dir.path().join("home"))], dir.path());
        let mut table = ConfigTable::new();
        table.insert("root".into(), "objects/here".into());
        table.insert("grants".into(), "off".into());
        let store = LocalFilesystemObjectStore::from_config(IMPL, &table, &env).unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        assert_eq!(store.root(), cwd.join("objects/here"));
    }
}
