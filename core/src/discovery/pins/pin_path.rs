//! The one spelling of a pinned file's path: without `.` parts, and with each `..` taken back over
//! the folder before it where that folder is not a link (where a link leads, `..` leaves from its
//! target, so the lexical step would name another file). New pins are written so, and pins are
//! compared so: an older agent-env wrote a Python plugin's console script as
//! `…/share/agent-env/plugins/../../../bin/x`, the file agent-env pins now as `…/bin/x`.

use std::path::{Path, PathBuf};

/// `path` as pins spell it (see the module docs): the same file, named without detours, as a
/// manifest's executable is shown ([`agent_env_protocol::manifest::tidy_path`]).
pub fn normalised(path: &Path) -> PathBuf {
    agent_env_protocol::manifest::tidy_path(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_parts_go_and_dot_dot_is_taken_back_except_over_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("venv/share/agent-env/plugins")).unwrap();
        assert_eq!(
            normalised(&root.join("venv/share/agent-env/plugins/../../.././bin/x")),
            root.join("venv/bin/x")
        );
        std::fs::create_dir_all(root.join("elsewhere/deep")).unwrap();
        std::os::unix::fs::symlink(root.join("elsewhere/deep"), root.join("link")).unwrap();
        assert_eq!(
            normalised(&root.join("link/../x")),
            root.join("link/../x"),
            "past a link, .. leaves from its target"
        );
    }
}
