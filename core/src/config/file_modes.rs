//! Files holding secrets that other users on this machine can open: the secrets file the built-in
//! secret store reads (`[stores.secret] config.file_path`), and the config file itself when it holds a
//! credential written out (`literal_secrets` says so in its warning). A file whose mode gives its group
//! or others anything (`mode & 0o077`) is named, with its mode and the `chmod 600` that closes it.
//! `config check` warns of them; nothing here changes a file.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::configured_store::store_spec;
use super::document::ConfigDocument;
use super::store_selection::selection;
use crate::stores::config_table::expand_home;
use crate::stores::StoreKind;

/// The class whose `file_path` is a secrets file.
const SECRET_FILE_CLASS: &str = crate::stores::local::secrets::CLASS;

/// A file other users may open, and its mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenFile {
    pub path: PathBuf,
    /// The permission bits (`0o644`).
    pub mode: u32,
}

impl OpenFile {
    /// What the mode lets others do, as a sentence's verb: `can be read by other users`.
    pub fn exposure(&self) -> &'static str {
        match (self.mode & 0o004 != 0, self.mode & 0o040 != 0) {
            (true, _) => "can be read by every user on this machine",
            (false, true) => "can be read by the other users of its group",
            (false, false) => "is open to other users on this machine",
        }
    }

    /// `mode 0644`.
    pub fn mode_words(&self) -> String {
        format!("mode {:04o}", self.mode)
    }

    /// The command that keeps everyone else out, quoted to paste.
    pub fn chmod(&self) -> String {
        format!(
            "chmod 600 {}",
            crate::quote::word(&self.path.display().to_string())
        )
    }
}

/// `path` when its group or others have any permission on it (the file it names, if a link); `None`
/// when only its owner does, or it cannot be read.
pub fn open_to_others(path: &Path) -> Option<OpenFile> {
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o7777;
    (mode & 0o077 != 0).then(|| OpenFile {
        path: path.to_path_buf(),
        mode,
    })
}

/// The secrets file the configured secret store reads, when it is the built-in store's and names one;
/// its path as the store reads it (`~` expanded, a relative one taken from the project's folder).
fn secrets_file(doc: &ConfigDocument) -> Option<PathBuf> {
    let chosen = selection(doc, "secret").ok()?;
    if crate::stores::local_builtin(StoreKind::Secret, &chosen.impl_name) != Some(SECRET_FILE_CLASS)
    {
        return None;
    }
    // A reference that does not resolve is the check's problem to say, not this one's.
    let spec = store_spec(&chosen, &doc.env, None).ok()?;
    let written = spec.config.get("file_path")?.as_str()?;
    if written.is_empty() {
        return None;
    }
    Some(doc.env.cwd().join(expand_home(written, &doc.env)))
}

/// The warning for a secrets file other users may open, if there is one.
pub fn secrets_file_warning(doc: &ConfigDocument) -> Option<String> {
    let open = open_to_others(&secrets_file(doc)?)?;
    Some(format!(
        "the secrets file {} ([stores.secret] file_path) {} ({}), and so can every secret in it; run `{}`",
        open.path.display(),
        open.exposure(),
        open.mode_words(),
        open.chmod()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with_mode(dir: &Path, mode: u32) -> PathBuf {
        let path = dir.join(format!("f{mode:o}"));
        std::fs::write(&path, "{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn only_a_file_its_group_or_others_may_open_is_named() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(open_to_others(&file_with_mode(dir.path(), 0o600)), None);
        assert_eq!(open_to_others(&file_with_mode(dir.path(), 0o400)), None);
        let readable = open_to_others(&file_with_mode(dir.path(), 0o644)).unwrap();
        assert_eq!(readable.mode, 0o644);
        assert_eq!(readable.mode_words(), "mode 0644");
        assert!(readable.exposure().starts_with("can be read"));
        let writable = open_to_others(&file_with_mode(dir.path(), 0o620)).unwrap();
        assert!(writable.exposure().starts_with("is open to"));
        assert_eq!(open_to_others(&dir.path().join("missing")), None);
    }

    #[test]
    fn the_chmod_is_quoted_to_paste() {
        let open = OpenFile {
            path: PathBuf::from("/home/me/my secrets.json"),
            mode: 0o644,
        };
        assert_eq!(open.chmod(), "chmod 600 '/home/me/my secrets.json'");
    }
}
