//! Sandbox providers. The built-in `local` provider needs nothing installed: a sandbox is a work folder
//! `<$AGENT_ENV_LOCAL_SANDBOX_DIR>/agent-env-local-<8 hex>-<random>`, and the sandbox path `/app` maps to it.

use std::path::{Path, PathBuf};

/// The built-in provider's name.
pub const LOCAL: &str = "local";
/// How every local sandbox's folder name begins: `agent-env-local-<8 hex>-<random>`.
pub const LOCAL_FOLDER_PREFIX: &str = "agent-env-local-";

/// A sandbox that is up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// `local-<8 hex>`.
    pub id: String,
    pub name: String,
    /// `vm` or `container`.
    pub mode: String,
    /// The provider (`local`).
    pub provider: String,
    /// The folder that is its filesystem.
    pub work_dir: PathBuf,
}

/// Why a sandbox could not be deployed, reached or torn down.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("can't create the local sandbox folder {path}: {source}{}", elsewhere_hint(.source))]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("can't remove the local sandbox folder {path}: {source}")]
    Remove {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the local sandbox maps only /app (to its work folder), so '{0}' is outside it")]
    OutsideApp(String),
    #[error(
        "'{0}' has a '..' part: a sandbox path may not climb, even where it would stay inside /app"
    )]
    Climbs(String),
    #[error("sandbox_mode must be one of ['container', 'vm'], got '{0}'")]
    Mode(String),
    #[error("Sandbox '{0}' is already deployed")]
    AlreadyDeployed(String),
    #[error("{path} leads through a symbolic link to {target}, outside the sandbox; agent-env reads and writes only the sandbox's own files")]
    LinkOutside { path: PathBuf, target: PathBuf },
    #[error("can't tell where {path} leads: {source}")]
    Resolve {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// For a folder this user may not write: where sandboxes can go instead.
fn elsewhere_hint(error: &std::io::Error) -> &'static str {
    match error.raw_os_error() {
        Some(libc::EACCES | libc::EPERM | libc::EROFS) => {
            "; set AGENT_ENV_LOCAL_SANDBOX_DIR to a folder you may write, and local sandboxes go there"
        }
        _ => "",
    }
}

/// What a sandbox provider does.
pub trait SandboxProvider: Send + Sync {
    fn name(&self) -> &str;
    /// Brings a sandbox up.
    fn deploy(&self, name: &str, mode: &str) -> Result<Sandbox, SandboxError>;
    /// Takes it down; a sandbox already gone is not an error.
    fn teardown(&self, sandbox: &Sandbox) -> Result<(), SandboxError>;
    /// The host path behind a path inside the sandbox.
    fn host_path(&self, sandbox: &Sandbox, path: &str) -> Result<PathBuf, SandboxError>;
    /// How `--keep` describes where it is, e.g. `folder  /tmp/x`.
    fn describe(&self, sandbox: &Sandbox) -> String;
}

/// The `local` provider: work folders under a root.
pub struct LocalProvider {
    root: PathBuf,
}

impl LocalProvider {
    /// Work folders under `root` (the session's [`crate::paths::Paths::local_sandbox_dir`]).
    pub fn with_root(root: PathBuf) -> Self {
        LocalProvider { root }
    }
}

/// `n` random characters of `[a-z0-9]`.
pub fn random_suffix(n: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = vec![0u8; n];
    if getrandom::getrandom(&mut bytes).is_err() {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
            ^ u128::from(std::process::id());
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (seed >> ((i * 5) % 120)) as u8;
        }
    }
    bytes
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect()
}

/// `n` random hex digits.
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n.div_ceil(2)];
    let _ = getrandom::getrandom(&mut bytes);
    let mut s = hex::encode(bytes);
    s.truncate(n);
    s
}

impl SandboxProvider for LocalProvider {
    fn name(&self) -> &str {
        LOCAL
    }

    fn deploy(&self, name: &str, mode: &str) -> Result<Sandbox, SandboxError> {
        if mode != "vm" && mode != "container" {
            return Err(SandboxError::Mode(mode.to_string()));
        }
        let short = random_hex(8);
        let work_dir = self
            .root
            .join(format!("{LOCAL_FOLDER_PREFIX}{short}-{}", random_suffix(8)));
        // The user's alone, as the stores are: it holds copies of artifacts, and what a task made.
        let make = || {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new().mode(0o700).create(&work_dir)
        };
        let made = match make() {
            // The first sandbox under this root: the root is made, then the sandbox.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(&self.root)
                    .map_err(|source| SandboxError::Create {
                        path: self.root.clone(),
                        source,
                    })
                    .and_then(|()| {
                        make().map_err(|source| SandboxError::Create {
                            path: work_dir.clone(),
                            source,
                        })
                    })
            }
            other => other.map_err(|source| SandboxError::Create {
                path: work_dir.clone(),
                source,
            }),
        };
        made?;
        Ok(Sandbox {
            id: format!("local-{short}"),
            name: name.to_string(),
            mode: mode.to_string(),
            provider: LOCAL.to_string(),
            work_dir,
        })
    }

    fn teardown(&self, sandbox: &Sandbox) -> Result<(), SandboxError> {
        match std::fs::remove_dir_all(&sandbox.work_dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(SandboxError::Remove {
                path: sandbox.work_dir.clone(),
                source,
            }),
        }
    }

    fn host_path(&self, sandbox: &Sandbox, path: &str) -> Result<PathBuf, SandboxError> {
        map_app_path(&sandbox.work_dir, path)
    }

    fn describe(&self, sandbox: &Sandbox) -> String {
        format!("folder  {}", sandbox.work_dir.display())
    }
}

/// Checks that `target`, a path under `work_dir`, stays in it once symbolic links are followed: a
/// link the sandbox's own commands made (`ln -s ~/.bashrc d/p.txt`) must not make agent-env read or
/// write a file of the machine. Parts of `target` that do not exist yet are fine: agent-env makes
/// them as folders.
pub fn stays_inside(work_dir: &Path, target: &Path) -> Result<(), SandboxError> {
    let Ok(below) = target.strip_prefix(work_dir) else {
        return Ok(());
    };
    // Only a link among the parts below the work folder can lead out: each is looked at without
    // following it (one lstat a part), and resolved only when it is a link.
    let mut here = work_dir.to_path_buf();
    for part in below.components() {
        here.push(part);
        match here.symlink_metadata() {
            Ok(meta) if meta.file_type().is_symlink() => {
                return resolves_inside(work_dir, &here, target)
            }
            Ok(_) => {}
            // Not there yet: agent-env makes it, as a plain folder or file.
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}

/// Whether the link `link` (a part of `target` under `work_dir`) leads to a place inside it.
fn resolves_inside(work_dir: &Path, link: &Path, target: &Path) -> Result<(), SandboxError> {
    let resolve = |path: &Path| {
        path.canonicalize().map_err(|source| SandboxError::Resolve {
            path: path.to_path_buf(),
            source,
        })
    };
    let root = resolve(work_dir)?;
    let resolved = resolve(link)?;
    if resolved.starts_with(&root) {
        // A link that stays inside may lead to more links: the rest is checked from where it leads.
        let rest = target.strip_prefix(link).unwrap_or(Path::new(""));
        stays_inside(&root, &resolved.join(rest))
    } else {
        Err(SandboxError::LinkOutside {
            path: target.to_path_buf(),
            target: resolved,
        })
    }
}

/// `/app/x` → `<work>/x`; a relative path is relative to the work folder; `..` may not climb out.
pub fn map_app_path(work_dir: &Path, path: &str) -> Result<PathBuf, SandboxError> {
    let rest = if path == "/app" {
        ""
    } else if let Some(rest) = path.strip_prefix("/app/") {
        rest
    } else if path.starts_with('/') {
        return Err(SandboxError::OutsideApp(path.to_string()));
    } else {
        path
    };
    if rest.split('/').any(|s| s == "..") {
        return Err(SandboxError::Climbs(path.to_string()));
    }
    Ok(if rest.is_empty() {
        work_dir.to_path_buf()
    } else {
        work_dir.join(rest.trim_end_matches('/'))
    })
}

/// What is said of a chain none of whose names is a provider; `source` says where it was written.
pub fn no_provider(source: &str, chain: &str) -> String {
    format!("{source} '{chain}': no sandbox provider of that name is available; the built-in one is 'local'")
}

/// The first name of a comma-separated chain (`--sandbox`, `[sandbox] default`) that names a
/// sandbox provider this agent-env has.
pub fn first_available(chain: &str) -> Option<&str> {
    chain
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .find(|name| *name == LOCAL)
}

/// The provider named `name`, when this build has it.
pub fn provider(name: &str, local_root: &Path) -> Option<Box<dyn SandboxProvider>> {
    (name == LOCAL).then(|| {
        Box::new(LocalProvider::with_root(local_root.to_path_buf())) as Box<dyn SandboxProvider>
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_folder_that_may_not_be_written_says_where_sandboxes_can_go() {
        let denied = SandboxError::Create {
            path: "/ro/sandboxes".into(),
            source: std::io::Error::from_raw_os_error(libc::EROFS),
        };
        assert!(denied
            .to_string()
            .ends_with("; set AGENT_ENV_LOCAL_SANDBOX_DIR to a folder you may write, and local sandboxes go there"));
        let missing = SandboxError::Create {
            path: "/x".into(),
            source: std::io::Error::from_raw_os_error(libc::ENOENT),
        };
        assert!(!missing.to_string().contains("AGENT_ENV_LOCAL_SANDBOX_DIR"));
    }

    use super::*;

    #[test]
    fn app_maps_to_the_work_folder() {
        let w = Path::new("/w");
        assert_eq!(map_app_path(w, "/app").unwrap(), PathBuf::from("/w"));
        assert_eq!(
            map_app_path(w, "/app/greeting").unwrap(),
            PathBuf::from("/w/greeting")
        );
        assert_eq!(map_app_path(w, "x/y").unwrap(), PathBuf::from("/w/x/y"));
        assert!(map_app_path(w, "/etc/passwd").is_err());
        assert!(map_app_path(w, "/app/../x").is_err());
    }

    #[test]
    fn only_a_link_that_leads_out_of_the_work_folder_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(work.join("real")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(work.join("real"), work.join("inner")).unwrap();
        std::os::unix::fs::symlink(&outside, work.join("real/out")).unwrap();
        // Not there yet, or plain folders: fine.
        assert!(stays_inside(&work, &work.join("new/deeper/f.txt")).is_ok());
        assert!(stays_inside(&work, &work.join("real/f.txt")).is_ok());
        // A link that stays inside, then one that leads out through it.
        assert!(stays_inside(&work, &work.join("inner/f.txt")).is_ok());
        let e = stays_inside(&work, &work.join("inner/out/f.txt")).unwrap_err();
        assert!(matches!(e, SandboxError::LinkOutside { .. }), "{e}");
    }

    #[test]
    fn a_local_sandbox_is_a_work_folder_removed_at_teardown() {
        let root = tempfile::tempdir().unwrap();
        let p = LocalProvider::with_root(root.path().to_path_buf());
        let s = p.deploy("box", "vm").unwrap();
        assert!(s.work_dir.is_dir());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&s.work_dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "the user's alone: {mode:o}");
        let name = s
            .work_dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.starts_with(&format!("agent-env-{}-", s.id)));
        p.teardown(&s).unwrap();
        assert!(!s.work_dir.exists());
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
    }
}

/// The sandboxes one task run deployed, with the provider that deployed them.
pub struct Deployed {
    provider: Box<dyn SandboxProvider>,
    sandboxes: std::sync::Mutex<Vec<Sandbox>>,
    /// What tearing down the sandboxes a retry replaced did, reported with the rest.
    retired: std::sync::Mutex<Teardown>,
    log: Option<std::sync::Arc<dyn DeployLog>>,
}

/// Told of each sandbox as it is deployed, so that what a killed run left can be found later.
pub trait DeployLog: Send + Sync {
    fn deployed(&self, work_dir: &std::path::Path);
}

/// What tearing a run's sandboxes down did.
#[derive(Debug, Default)]
pub struct Teardown {
    pub torn_down: Vec<Sandbox>,
    /// How many of `torn_down` a retry replaced while the task ran (they were down before the end).
    pub replaced: usize,
    /// Sandboxes still up, with why.
    pub still_up: Vec<(Sandbox, String)>,
}

impl Deployed {
    pub fn new(provider: Box<dyn SandboxProvider>) -> Self {
        Deployed {
            provider,
            sandboxes: std::sync::Mutex::new(Vec::new()),
            retired: std::sync::Mutex::new(Teardown::default()),
            log: None,
        }
    }

    /// The same, telling `log` of each sandbox deployed.
    pub fn logged(mut self, log: Option<std::sync::Arc<dyn DeployLog>>) -> Self {
        self.log = log;
        self
    }

    pub fn provider(&self) -> &dyn SandboxProvider {
        self.provider.as_ref()
    }

    /// Deploys a sandbox and remembers it for teardown.
    pub fn deploy(&self, name: &str, mode: &str) -> Result<Sandbox, SandboxError> {
        if self.get(name).is_some() {
            return Err(SandboxError::AlreadyDeployed(name.to_string()));
        }
        let sandbox = self.provider.deploy(name, mode)?;
        if let Some(log) = &self.log {
            log.deployed(&sandbox.work_dir);
        }
        if let Ok(mut list) = self.sandboxes.lock() {
            list.push(sandbox.clone());
        }
        Ok(sandbox)
    }

    /// The sandbox of this name.
    pub fn get(&self, name: &str) -> Option<Sandbox> {
        self.sandboxes
            .lock()
            .ok()?
            .iter()
            .rev()
            .find(|s| s.name == name)
            .cloned()
    }

    /// Every sandbox that is up.
    pub fn all(&self) -> Vec<Sandbox> {
        self.sandboxes.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Tears down the sandbox of this name, for a retry that deploys it again: it is no longer up
    /// under that name, and [`Deployed::teardown_all`] reports it (as torn down, or as still up
    /// with why). Returns it, or `None` when none of that name is up.
    pub fn retire(&self, name: &str) -> Option<Sandbox> {
        let sandbox = {
            let mut list = self.sandboxes.lock().ok()?;
            let at = list.iter().rposition(|s| s.name == name)?;
            list.remove(at)
        };
        let outcome = self.provider.teardown(&sandbox);
        if let Ok(mut retired) = self.retired.lock() {
            match outcome {
                Ok(()) => {
                    retired.torn_down.push(sandbox.clone());
                    retired.replaced += 1;
                }
                Err(e) => retired.still_up.push((sandbox.clone(), e.to_string())),
            }
        }
        Some(sandbox)
    }

    /// Tears every sandbox down.
    pub fn teardown_all(&self) -> Teardown {
        let list = match self.sandboxes.lock() {
            Ok(mut l) => std::mem::take(&mut *l),
            Err(_) => Vec::new(),
        };
        let mut report = match self.retired.lock() {
            Ok(mut r) => std::mem::take(&mut *r),
            Err(_) => Teardown::default(),
        };
        for s in list {
            match self.provider.teardown(&s) {
                Ok(()) => report.torn_down.push(s),
                Err(e) => report.still_up.push((s, e.to_string())),
            }
        }
        report
    }
}
