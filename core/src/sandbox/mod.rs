//! Sandbox providers. The built-in `local` provider needs nothing installed: a sandbox is a work folder
//! `<$AGENT_ENV_LOCAL_SANDBOX_DIR>/agent-env-local-<8 hex>-<random>`, and the sandbox path `/app` maps to it.
//! What one task run deployed, each name claimed once, is [`Deployed`] (`deployed.rs`); tearing a
//! sandbox down there first stops what task commands started in it and left running
//! (`marked_processes.rs`).

use std::path::{Path, PathBuf};

mod deployed;
pub mod marked_processes;

pub use deployed::{DeployLog, Deployed, Teardown};

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
    #[error("can't create the local sandbox folder {path}: {source}{}", elsewhere_hint(.path, .source))]
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
    #[error("'sandbox_mode' is '{0}'; it takes 'container' or 'vm'")]
    Mode(String),
    #[error("{}", already_deployed(.name, .by, *.underway))]
    AlreadyDeployed {
        name: String,
        /// The step that deployed it (or is deploying it).
        by: String,
        /// Whether that step's deploy was still under way.
        underway: bool,
    },
    #[error("{path} leads through a symbolic link to {target}, outside the sandbox; agent-env reads and writes only the sandbox's own files")]
    LinkOutside { path: PathBuf, target: PathBuf },
    #[error("can't tell where {path} leads: {source}")]
    Resolve {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Why a task's second deploy of the sandbox `name` fails, and what to do instead: `by` is the
/// step that deployed it first, `underway` whether it was still deploying it (so this step does
/// not wait for it).
fn already_deployed(name: &str, by: &str, underway: bool) -> String {
    let fix = "a task deploys each sandbox once, so give this step another sandbox_name";
    match underway {
        false => format!(
            "Sandbox '{name}' is already deployed (by step '{by}'): {fix}, or remove it and have the steps after it use the sandbox step '{by}' deploys"
        ),
        true => format!(
            "Sandbox '{name}' is already deployed (step '{by}' is deploying it, and this step does not wait for it): {fix}, or remove it and make the steps that use '{name}' wait for step '{by}'"
        ),
    }
}

/// For a folder this user may not write: where sandboxes can go instead.
fn elsewhere_hint(path: &Path, error: &std::io::Error) -> String {
    match error.raw_os_error() {
        Some(libc::EACCES | libc::EPERM | libc::EROFS) => {
            "; set AGENT_ENV_LOCAL_SANDBOX_DIR to a folder you may write, and local sandboxes go there".to_string()
        }
        // The place (or a folder on the way to it) is a link to nothing, or a file.
        Some(libc::ENOTDIR | libc::EEXIST) => match path.ancestors().find_map(dangling_link) {
            Some(link) => format!(
                "; {link}: set AGENT_ENV_LOCAL_SANDBOX_DIR to a folder (or a path one can be made at), or make the folder the link leads to"
            ),
            None => "; a file stands where that folder or one above it should be: set AGENT_ENV_LOCAL_SANDBOX_DIR to a folder (or a path one can be made at), or move the file away".to_string(),
        },
        Some(libc::ENOSPC | libc::EDQUOT) => {
            "; the disk is full: free some space, or set AGENT_ENV_LOCAL_SANDBOX_DIR to a folder on another disk".to_string()
        }
        _ => String::new(),
    }
}

/// Why `place`, which leads nowhere, stands in the way: it is a symbolic link to something that does
/// not exist (`mkdir` makes no folder where a link stands, dangling or not).
pub(crate) fn dangling_link(place: &Path) -> Option<String> {
    let is_link = std::fs::symlink_metadata(place).is_ok_and(|m| m.file_type().is_symlink());
    let leads_nowhere =
        std::fs::metadata(place).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    if !is_link || !leads_nowhere {
        return None;
    }
    let target = std::fs::read_link(place).ok()?;
    Some(format!(
        "{} is a symbolic link to {}, which does not exist",
        place.display(),
        target.display()
    ))
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
                crate::stores::local::private_dir::create_private_dir_all(&self.root)
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
        // A file where the folder should be, as create_dir_all meets it.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("afile");
        std::fs::write(&file, "").unwrap();
        for path in [file.join("sandboxes"), file.clone()] {
            let source = std::fs::create_dir_all(&path).unwrap_err();
            let said = SandboxError::Create { path, source }.to_string();
            assert!(
                said.ends_with("; a file stands where that folder or one above it should be: set AGENT_ENV_LOCAL_SANDBOX_DIR to a folder (or a path one can be made at), or move the file away"),
                "{said}"
            );
        }
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
