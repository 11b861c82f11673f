//! What a database that may not even be looked for says: the folder this user may not enter, and
//! what to do about it. Another user's state folder (mode 0700) is read so by a user who may not.

use std::path::Path;

use agent_env_store::error::StoreError;

/// The error of looking for the database at `db` and failing with `err`: for a permission refused,
/// the folder on its path this user may not enter, that this user may not read the records there,
/// and what to do; else the OS's words as they are.
pub fn looking_failed(db: &Path, err: &std::io::Error) -> StoreError {
    if err.kind() != std::io::ErrorKind::PermissionDenied {
        return StoreError::io(format!("looking for {}", db.display()), err);
    }
    let folder = closed_folder(db)
        .or_else(|| db.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| db.to_path_buf());
    StoreError::Io {
        message: denied_words(db, &folder),
        raw_os_error: err.raw_os_error(),
    }
}

/// What a permission refused on the way to `db` says, `folder` being the one this user may not enter.
fn denied_words(db: &Path, folder: &Path) -> String {
    format!(
        "{} can't be read: this user may not enter {}, so it may not read the records kept there; \
         let this user in (chown it to this user, or give it a group this user is in and chmod g+rx {}), \
         run the command as the user it belongs to, \
         or point XDG_STATE_HOME (or the store's path in the config) at a state folder of this user's",
        db.display(),
        folder.display(),
        crate::quote::word(&folder.display().to_string())
    )
}

/// The first folder on the way to `db` (from the top) that this user may not enter.
fn closed_folder(db: &Path) -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let folders: Vec<&Path> = db.ancestors().skip(1).collect();
    folders.into_iter().rev().find_map(|folder| {
        if folder.as_os_str().is_empty() {
            return None;
        }
        let path = std::ffi::CString::new(folder.as_os_str().as_bytes()).ok()?;
        // SAFETY: `path` is a valid NUL-terminated string that outlives the call.
        let may_enter = unsafe { libc::access(path.as_ptr(), libc::X_OK) } == 0;
        // A folder that is not there is not one this user is kept out of.
        let refused =
            !may_enter && std::io::Error::last_os_error().raw_os_error() == Some(libc::EACCES);
        refused.then(|| folder.to_path_buf())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_look_names_the_folder_and_what_to_do() {
        let db = Path::new("/srv/state/agent-env/document_store/local.db");
        let refused = std::io::Error::from_raw_os_error(libc::EACCES);
        let said = looking_failed(db, &refused).to_string();
        // No folder on that path is closed to this test: the database's own folder is named.
        assert!(
            said.starts_with("/srv/state/agent-env/document_store/local.db can't be read: this user may not enter /srv/state/agent-env/document_store, so it may not read the records kept there"),
            "{said}"
        );
        assert!(
            said.contains("chmod g+rx /srv/state/agent-env/document_store"),
            "{said}"
        );
        assert!(said.contains("XDG_STATE_HOME"), "{said}");
        let other = std::io::Error::from_raw_os_error(libc::ELOOP);
        assert!(looking_failed(db, &other)
            .to_string()
            .starts_with("looking for /srv/state/agent-env/document_store/local.db: "));
    }
}
