//! What a run says of agent-env's state folder (`<state root>`, the locks folder's parent): when a
//! folder in it could not be made, why and what to do; before a run, a home folder taken from the
//! user database that is not there, and a state folder of another user's that a run as root writes in.
//!
//! Each looks at the nearest part of the path that is there ([`nearest_there`]): a state folder not
//! made yet is refused by the folder it would be made in, and what root makes under another user's
//! folder is root's, not that user's.

use std::ffi::OsStr;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::environment::Environment;
use crate::quote;
use crate::user_db;

/// The nearest of a path and its folders that is there.
#[derive(Debug, PartialEq, Eq)]
struct Nearest {
    place: PathBuf,
    /// Its owner's user id.
    owner: u32,
    /// The part of the path inside it could not be looked at (this user may not enter it), rather
    /// than not being there.
    closed: bool,
}

/// The nearest of `path` and its folders that this user can look at, with its owner; `None` when
/// none can be.
fn nearest_there(path: &Path) -> Option<Nearest> {
    use std::os::unix::fs::MetadataExt;
    let mut closed = false;
    for place in path.ancestors().filter(|p| !p.as_os_str().is_empty()) {
        match std::fs::metadata(place) {
            Ok(meta) => {
                return Some(Nearest {
                    place: place.to_path_buf(),
                    owner: meta.uid(),
                    closed,
                })
            }
            Err(error) => closed = error.kind() == ErrorKind::PermissionDenied,
        }
    }
    None
}

/// What to do when something in the locks folder `locks` (`<state root>/locks`), or that folder
/// itself, could not be made on a read-only file system, or where this user may not write
/// ([`not_writable`]). `None` for any other failure.
pub(super) fn hint(locks: &Path, source: &std::io::Error) -> Option<String> {
    match source.raw_os_error() {
        Some(libc::EROFS) => Some("; agent-env's state folder is on a file system mounted read-only: point XDG_STATE_HOME at a writable place (task list and task get-instance still read it)".to_string()),
        Some(libc::EACCES | libc::EPERM) => Some(not_writable(locks)),
        _ => None,
    }
}

/// Why this user may not write in the locks folder `locks`, and what to do. A state folder that is
/// there: its owner may give it back its write permission; one another user owns is that user's
/// (chmod cannot help this one, and only root may chown it), which is said, with whose it is. A
/// state folder not there yet: the nearest folder that is there refuses to have it made, which is
/// named, with whose it is; when the state folder is under a home folder the user database gives
/// and that is not there, that is said, with HOME and XDG_STATE_HOME to set.
fn not_writable(locks: &Path) -> String {
    let state_root = locks.parent().unwrap_or(locks);
    let me = current_uid();
    let Some(nearest) = nearest_there(locks) else {
        return OWN_STATE_FOLDER_NOT_WRITABLE.to_string();
    };
    let owner = user_db::name_of(nearest.owner);
    let my_name = user_db::name_of(me);
    let chown_me = chown_word(me);
    if nearest.place.starts_with(state_root) {
        return match nearest.owner == me {
            true => OWN_STATE_FOLDER_NOT_WRITABLE.to_string(),
            false => format!(
                "; agent-env's state folder {} belongs to {owner}, not to this user ({my_name}), so chmod cannot make it writable here: have it chowned to this user (sudo chown -R {chown_me} {}), run agent-env as {owner}, or point XDG_STATE_HOME at a place of this user's",
                state_root.display(),
                shown_for_shell(state_root)
            ),
        };
    }
    let place = nearest.place.display();
    let may_not = match nearest.closed {
        true => "enter",
        false => "write in",
    };
    let refusal = match nearest.owner == me {
        true => format!("this user ({my_name}) may not {may_not} {place}"),
        false => {
            format!("{place} belongs to {owner} and this user ({my_name}) may not {may_not} it")
        }
    };
    let cannot = format!(
        "; {refusal}, so agent-env's state folder {} cannot be made",
        state_root.display()
    );
    if let Some(home) = missing_home(state_root) {
        return format!(
            "{cannot}; {}, the home folder the user database gives this user, is not there: set HOME to a folder of this user's, or point XDG_STATE_HOME at one",
            home.display()
        );
    }
    let (permissions, chmod) = match nearest.closed {
        true => ("permissions", "u+rwx"),
        false => ("write permission", "u+w"),
    };
    match nearest.owner == me {
        true => format!(
            "{cannot}: give {place} back its {permissions} (chmod {chmod} {}), or point XDG_STATE_HOME at a writable place",
            shown_for_shell(&nearest.place)
        ),
        false => format!(
            "{cannot}: have it made for this user (sudo mkdir -p {root} && sudo chown {chown_me} {root}), or point XDG_STATE_HOME at a place of this user's",
            root = shown_for_shell(state_root)
        ),
    }
}

/// What is said of a state folder of this user's own that it may not write.
const OWN_STATE_FOLDER_NOT_WRITABLE: &str = "; agent-env's state folder is not writable by this user: give it back its write permission (chmod u+w, or chown it to this user), or point XDG_STATE_HOME at a writable place";

/// The home folder the user database gives this process's user, when it is not there and
/// `state_root` is under it (where agent-env keeps its state when HOME does not name a folder).
fn missing_home(state_root: &Path) -> Option<PathBuf> {
    // SAFETY: getuid only reads this process's real user id.
    let home = user_db::home_of(unsafe { libc::getuid() })?;
    let gone =
        matches!(std::fs::symlink_metadata(&home), Err(e) if e.kind() == ErrorKind::NotFound);
    (gone && state_root.starts_with(&home)).then_some(home)
}

/// What a run warns of before it starts when HOME (in `env`) is not set or empty, so that the state
/// folder `state_root` is under the home folder the user database gives this user, and that folder
/// is not there (a container's `nobody`, whose home is `/nonexistent`): what HOME is, where the state
/// goes, and to set HOME or XDG_STATE_HOME. `None` when HOME or XDG_STATE_HOME is an absolute path,
/// or the home folder is there; and when HOME is a relative path, which every command says
/// ([`crate::paths::Paths::ignored_relative_vars`]), that folder's not being there included.
pub(crate) fn home_not_there_warning(env: &Environment, state_root: &Path) -> Option<String> {
    let absolute = |value: Option<&OsStr>| value.is_some_and(|v| Path::new(v).is_absolute());
    let home_var = env.var_os("HOME");
    if absolute(home_var) || absolute(env.var_os("XDG_STATE_HOME")) {
        return None;
    }
    let what_home_is = match home_var {
        None => "HOME is not set",
        Some(value) if value.is_empty() => "HOME is empty",
        Some(_) => return None,
    };
    let home = missing_home(state_root)?;
    Some(format!(
        "{what_home_is}, so agent-env keeps its state in {}, under {}, the home folder the user database gives this user ({}), which is not there: set HOME to a folder of this user's, or point XDG_STATE_HOME at one",
        state_root.display(),
        home.display(),
        user_db::name_of(current_uid())
    ))
}

/// What a run as root warns of before it starts when the state folder `state_root` belongs to
/// another user, or is not there and the nearest folder above it that is belongs to one, or is
/// root's but made in a folder of another user's (as an earlier run as root left it): the stores,
/// locks and logs root makes there are root's, which that user may not write. `None` for any other
/// process than root's, and for a state folder of root's in a folder of root's.
pub(crate) fn others_folder_warning(state_root: &Path) -> Option<String> {
    if current_uid() != 0 {
        return None;
    }
    let (whose, uid) = others_folder(state_root)?;
    let owner = user_db::name_of(uid);
    Some(format!(
        "{whose}, and {owner} will not be able to write them; run agent-env as {owner}, or point XDG_STATE_HOME at a place of root's (chown -R {} {} gives {owner} back what root made there)",
        chown_word(uid),
        shown_for_shell(state_root)
    ))
}

/// Whose folder a run as root would make root's files in, said as the start of
/// [`others_folder_warning`], with that user's id; `None` when it is root's.
fn others_folder(state_root: &Path) -> Option<(String, u32)> {
    let nearest = nearest_there(state_root)?;
    let root = state_root.display();
    let there = nearest.place == state_root;
    if there && nearest.owner == 0 {
        let parent = state_root.parent()?;
        let uid = nearest_there(parent)?.owner;
        if uid == 0 {
            return None;
        }
        let owner = user_db::name_of(uid);
        return Some((
            format!(
                "agent-env's state folder {root} is root's, in {}, which belongs to {owner}: the stores, locks and logs this run makes there will be root's too",
                parent.display()
            ),
            uid,
        ));
    }
    if nearest.owner == 0 {
        return None;
    }
    let owner = user_db::name_of(nearest.owner);
    let whose = match there {
        true => format!(
            "agent-env's state folder {root} belongs to {owner}, but this run is root's: the stores, locks and logs it makes there will be root's"
        ),
        false => format!(
            "{}, where agent-env's state folder {root} is to be made, belongs to {owner}, but this run is root's: the state folder, and the stores, locks and logs it makes there, will be root's",
            nearest.place.display()
        ),
    };
    Some((whose, nearest.owner))
}

/// The user `uid` as `chown` takes it: the name the user database gives, else the number.
fn chown_word(uid: u32) -> String {
    user_db::name(uid).map_or_else(|| uid.to_string(), |name| quote::word(&name))
}

/// `path` as a word a shell reads back as it.
fn shown_for_shell(path: &Path) -> String {
    quote::word(&path.display().to_string())
}

/// The effective user id of this process.
fn current_uid() -> u32 {
    // SAFETY: geteuid only reads this process's effective user id.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_part_there_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("a/b/c");
        let nearest = nearest_there(&missing).unwrap();
        assert_eq!(nearest.place, dir.path());
        assert_eq!(nearest.owner, current_uid());
        assert!(!nearest.closed);
        assert_eq!(nearest_there(dir.path()).unwrap().place, dir.path());
    }

    /// A state folder of this user's not there yet, in a folder of its own it may not write: that
    /// folder is named, not the state folder.
    #[test]
    fn a_state_folder_not_made_names_the_folder_that_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let locks = dir.path().join("home/.local/state/agent-env/locks");
        let said = not_writable(&locks);
        let me = user_db::name_of(current_uid());
        assert!(
            said.starts_with(&format!(
                "; this user ({me}) may not write in {}, so agent-env's state folder {} cannot be made: give {} back its write permission (chmod u+w ",
                dir.path().display(),
                locks.parent().unwrap().display(),
                dir.path().display()
            )),
            "{said}"
        );
        assert!(!said.contains("not writable by this user"), "{said}");
    }

    #[test]
    fn a_home_that_is_set_is_not_warned_of() {
        let env = Environment::from_vars([("HOME", "/h")], Path::new("/"));
        assert_eq!(
            home_not_there_warning(&env, Path::new("/h/.local/state/agent-env")),
            None
        );
        // A relative one is said by every command that uses the home folder, not here again.
        let env = Environment::from_vars([("HOME", "h")], Path::new("/"));
        assert_eq!(
            home_not_there_warning(&env, Path::new("/nonexistent/.local/state/agent-env")),
            None
        );
    }
}
