//! Whether the explorer can use its state folder: the local stores a bundle run writes (and the
//! explorer reads), the locks a run takes and the run logs live there. A folder this user may not
//! read and write in is said at start, in every list's `warnings`, and as the 503 of a request to
//! start a run, each naming the folder and what to do.

use std::path::{Path, PathBuf};

use agent_env::paths::{local_documents_db, local_objects_root};
use agent_env::stores::local::private_dir::check_makeable;
use axum::http::StatusCode;

use crate::http::problem::ApiError;

/// The folders under `state_root` a run writes in (each made when missing, so one missing needs
/// the nearest folder above it that is there to be writable).
fn folders(state_root: &Path) -> Vec<PathBuf> {
    let documents = local_documents_db(state_root);
    let mut folders: Vec<PathBuf> = documents
        .parent()
        .map(Path::to_path_buf)
        .into_iter()
        .collect();
    folders.push(local_objects_root(state_root));
    folders.push(state_root.join("locks"));
    folders.push(state_root.join("logs"));
    folders
}

/// Why the state folder `state_root` can't be used (the first of its folders that can't), in
/// words that name it and what to do; `None` when it can. Nothing is made.
pub fn unusable(state_root: &Path) -> Option<String> {
    folders(state_root)
        .iter()
        .find_map(|folder| check_makeable(folder).err().map(|e| e.to_string()))
}

/// The 503 a request to start runs gets while the state folder can't be used: no run was started.
pub fn refusal(why: &str) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        format!("no run was started, since the explorer can't use its state folder: {why}; then ask again"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_root_under_a_file_is_unusable_and_named() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(unusable(&tmp.path().join("state/agent-env")), None);
        let file = tmp.path().join("afile");
        std::fs::write(&file, "x").unwrap();
        let why = unusable(&file.join("agent-env")).unwrap();
        assert!(
            why.starts_with("Cannot create the local state directory")
                && why.contains(&format!("{} is not a folder", file.display()))
                && why.contains("point XDG_STATE_HOME"),
            "{why}"
        );
        let refused = refusal(&why);
        assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(refused.detail.as_str().unwrap().starts_with(
            "no run was started, since the explorer can't use its state folder: Cannot create"
        ));
    }
}
