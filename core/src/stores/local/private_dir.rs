//! The private-state rule: a state directory agent-env creates is mode 0700 and holds a `.gitignore` of
//! `*`, so it never lands in a repository. An existing directory is left as it is.
//! [`create_private_dir_all`] is the one way agent-env makes a folder under its state root or the local
//! sandbox root: mode 0700 whatever the umask, so no other user may plant or remove what it keeps there.

use std::fs;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

use agent_env_store::error::{StoreError, StoreResult};

/// Creates `dir` (and its parents) if it is missing; only a directory created here gets mode 0700 and
/// the `.gitignore`.
pub fn ensure_private_dir(dir: &Path) -> StoreResult<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        create_private_dir_all(parent).map_err(|e| cannot_create(dir, &e))?;
    }
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => write_gitignore(dir).map_err(|e| cannot_create(dir, &e)),
        Err(e) if e.kind() == ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(cannot_create(dir, &e)),
    }
}

/// Makes `dir` and every missing folder above it, each mode 0700 whatever the umask (as the XDG spec
/// asks of a missing base folder); a folder already there is left as it is.
pub fn create_private_dir_all(dir: &Path) -> std::io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Makes the empty file `path`, mode 0600 whatever the umask, unless something is there already (then
/// it is left as it is).
pub fn create_private_file(path: &Path) -> std::io::Result<()> {
    let made = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
    match made {
        Err(e) if e.kind() != ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

/// The `.gitignore` of `*` in a state folder just made: mode 0644 whatever the umask.
fn write_gitignore(dir: &Path) -> std::io::Result<()> {
    fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .open(dir.join(".gitignore"))?
        .write_all(b"*\n")
}

/// Whether [`ensure_private_dir`] could make `dir` (or use it), found without making anything: `dir` is a
/// folder this user may write in, or the nearest part of its path that exists is. What `config check`
/// asks of a store on this machine.
pub fn check_makeable(dir: &Path) -> StoreResult<()> {
    let mut existing = dir;
    loop {
        match fs::metadata(existing) {
            Ok(meta) if meta.is_dir() => break,
            Ok(_) => {
                return Err(cannot_create(
                    dir,
                    &std::io::Error::other(format!("{} is not a folder", existing.display())),
                ))
            }
            // A missing part, or one under a file: look further up for what is there.
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                match existing.parent() {
                    Some(parent) if !parent.as_os_str().is_empty() => existing = parent,
                    _ => return Ok(()),
                }
            }
            Err(e) => return Err(cannot_create(dir, &e)),
        }
    }
    if existing == dir {
        // It is there: the question is whether it can be used, not made.
        return match why_not_usable(dir, libc::R_OK | libc::W_OK | libc::X_OK) {
            None => Ok(()),
            Some(why) => Err(StoreError::Config(format!(
                "The local state directory {} can't be used: {why}; let this user read and write in it (chmod u+rwx), or point XDG_STATE_HOME (or the store's config) at a place it may",
                dir.display()
            ))),
        };
    }
    match why_not_usable(existing, libc::W_OK | libc::X_OK) {
        None => Ok(()),
        Some(why) => Err(cannot_create(dir, &std::io::Error::other(why))),
    }
}

/// Why this process may not use the folder `dir` as `mode` asks (`W_OK | X_OK`: make entries in
/// it; with `R_OK`: read and write in it): its file system is mounted read-only, or the folder's
/// permissions say no; `None` when it may.
fn why_not_usable(dir: &Path, mode: libc::c_int) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return Some(format!("{} is no path the system takes", dir.display()));
    };
    // SAFETY: `path` is a valid NUL-terminated string that outlives the call.
    if unsafe { libc::access(path.as_ptr(), mode) } == 0 {
        // Permissions (or root) may allow what the file system never does.
        return kernel_file_system(&path).map(|name| {
            format!(
                "{} is on the kernel's {name} file system, where no folder or file can be made",
                dir.display()
            )
        });
    }
    Some(match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EROFS) => format!(
            "{} is on a file system mounted read-only; point XDG_STATE_HOME at a writable place",
            dir.display()
        ),
        _ if mode & libc::R_OK != 0 => {
            format!("this user may not read and write in {}", dir.display())
        }
        _ => format!("this user may not write in {}", dir.display()),
    })
}

/// The name of the kernel's own file system `path` is on (`/proc`, `/sys` and the like), where no
/// one may make a folder or a file whatever the permissions say; `None` for any other.
fn kernel_file_system(path: &std::ffi::CStr) -> Option<&'static str> {
    // SAFETY: an all-zero `statfs` is a valid value for the call to fill.
    let mut info: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated and `info` is a live, writable `statfs`.
    if unsafe { libc::statfs(path.as_ptr(), &mut info) } != 0 {
        return None;
    }
    // The magic numbers of linux/magic.h.
    let kinds: [(i64, &str); 6] = [
        (0x9fa0, "proc"),
        (0x6265_6572, "sysfs"),
        (0x6367_7270, "cgroup2"),
        (0x0027_e0eb, "cgroup"),
        (0x6462_6720, "debugfs"),
        (0x1cd1, "devpts"),
    ];
    let kind = info.f_type as i64;
    kinds
        .iter()
        .find(|(magic, _)| *magic == kind)
        .map(|(_, name)| *name)
}

/// Why `dir` could not be made, and what to do: on a full disk (or a used-up quota) make room there,
/// else point the state folder at a place this user may write.
fn cannot_create(dir: &Path, err: &std::io::Error) -> StoreError {
    let what_to_do = match err.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT) => {
            "free space on the file system it is on, or point XDG_STATE_HOME (or the store's config) at a file system with room"
        }
        _ => "point XDG_STATE_HOME (or the store's config) at a writable place",
    };
    StoreError::Config(format!(
        "Cannot create the local state directory {}: {err}; {what_to_do}",
        dir.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_under_proc_is_not_makeable_whoever_asks() {
        let said = check_makeable(Path::new("/proc/agent-env-nowhere/docs"))
            .unwrap_err()
            .to_string();
        assert!(
            said.contains(
                "/proc is on the kernel's proc file system, where no folder or file can be made"
            ),
            "{said}"
        );
        assert!(check_makeable(&std::env::temp_dir().join("agent-env-somewhere")).is_ok());
    }

    #[test]
    fn a_path_under_a_file_cannot_be_made() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("afile");
        fs::write(&file, "x").unwrap();
        let err = check_makeable(&file.join("objects/deeper")).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("afile is not a folder"), "{text}");
        assert!(
            text.contains("Cannot create the local state directory"),
            "{text}"
        );
        assert!(
            check_makeable(&file).is_err(),
            "a file is not a folder either"
        );
    }

    #[test]
    fn a_full_disk_is_told_to_make_room_not_to_move_elsewhere() {
        let dir = Path::new("/state/object_store");
        for code in [libc::ENOSPC, libc::EDQUOT] {
            let said = cannot_create(dir, &std::io::Error::from_raw_os_error(code)).to_string();
            assert!(
                said.ends_with("; free space on the file system it is on, or point XDG_STATE_HOME (or the store's config) at a file system with room"),
                "{said}"
            );
            assert!(!said.contains("writable place"), "{said}");
        }
        let denied = cannot_create(dir, &std::io::Error::from_raw_os_error(libc::EACCES));
        assert!(
            denied.to_string().contains("at a writable place"),
            "{denied}"
        );
    }

    #[test]
    fn a_missing_folder_under_a_writable_one_can_be_made_and_nothing_is_made() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b/c");
        check_makeable(&dir).unwrap();
        assert!(!tmp.path().join("a").exists());
        check_makeable(tmp.path()).unwrap();
    }

    #[test]
    fn a_folder_this_user_cannot_write_in_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let locked = tmp.path().join("locked");
        fs::create_dir(&locked).unwrap();
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o500)).unwrap();
        // root may write anywhere; the check asks the kernel, so it agrees with what a write would do.
        // The refusal itself is seen as root too: config_check's black-box test runs agent-env as nobody.
        let root = unsafe { libc::geteuid() } == 0;
        let outcome = check_makeable(&locked.join("store"));
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(outcome.is_ok(), root, "{outcome:?}");
    }

    #[test]
    fn a_folder_that_is_there_but_closed_is_said_unusable_not_unmakeable() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let closed = tmp.path().join("object_store");
        fs::create_dir(&closed).unwrap();
        fs::set_permissions(&closed, fs::Permissions::from_mode(0o000)).unwrap();
        let root = unsafe { libc::geteuid() } == 0;
        let outcome = check_makeable(&closed);
        fs::set_permissions(&closed, fs::Permissions::from_mode(0o700)).unwrap();
        if root {
            assert!(outcome.is_ok(), "{outcome:?}");
            return;
        }
        let text = outcome.unwrap_err().to_string();
        assert_eq!(
            text,
            format!(
                "The local state directory {0} can't be used: this user may not read and write in {0}; let this user read and write in it (chmod u+rwx), or point XDG_STATE_HOME (or the store's config) at a place it may",
                closed.display()
            )
        );
    }
}
