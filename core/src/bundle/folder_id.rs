//! The id root of a bundle folder on disk, refused where it would not name that folder alone: a path
//! whose bytes are not UTF-8 (two folders differing only in such bytes would read as one name), and a
//! path not in Unicode normal form C while another folder holds its NFC form (ids are NFC, so both
//! would get one id). Either way the bundle's runs, artifact versions and recorded instances would mix
//! with the other folder's, so the message says which folder to rename.

use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

use super::error::BundleError;
use super::ids;
use crate::quote;

/// The id root of the bundle folder at `canonical` (its canonical path), its ids rooted at the home
/// folder `home` (canonicalized here) when it lies inside it; an error names the folder and says to
/// rename it when the id would not be the folder's own.
pub fn id_root(canonical: &Path, home: Option<&Path>) -> Result<String, BundleError> {
    let home = home.and_then(|h| std::fs::canonicalize(h).ok());
    let (base, in_id) = match home.as_deref().map(|h| (h, canonical.strip_prefix(h))) {
        Some((h, Ok(rest))) => (h.to_path_buf(), rest),
        _ => (PathBuf::from("/"), canonical),
    };
    let (Some(root), Some(text)) = (
        ids::folder_id_root(canonical, home.as_deref()),
        in_id.to_str(),
    ) else {
        return Err(BundleError::one(not_utf8(canonical, in_id, RENAME)));
    };
    let composed: String = text.nfc().collect();
    if composed != text {
        let twin = base.join(&composed);
        if is_other_folder(&twin, canonical) {
            return Err(BundleError::one(format!(
                "{} and {} are two folders whose names differ only in how their accented letters are \
                 encoded (the first decomposed, NFD; the second composed, NFC), so both would get the \
                 bundle id {}; rename one of them (mv) and run it again",
                quote::os_word(canonical.as_os_str()),
                quote::os_word(twin.as_os_str()),
                quote::id(&root),
            )));
        }
    }
    Ok(root)
}

/// Whether `twin` is a folder other than the one at `canonical` (by device and inode).
fn is_other_folder(twin: &Path, canonical: &Path) -> bool {
    match (std::fs::metadata(twin), std::fs::metadata(canonical)) {
        (Ok(t), Ok(c)) => t.is_dir() && (t.dev(), t.ino()) != (c.dev(), c.ino()),
        _ => false,
    }
}

/// What to do about a bundle folder whose name is not valid UTF-8.
const RENAME: &str = "rename the folder to a name in UTF-8 and run it again";

/// Checks the folder `bundle init` is about to write, `folder` (absolute), before anything is
/// written: a name in the part of its path its ids would hold (below the home folder `home`) that is
/// not valid UTF-8 is refused, as a run of it would be.
pub fn check_new_folder(folder: &Path, home: Option<&Path>) -> Result<(), BundleError> {
    let home = home.and_then(|h| std::fs::canonicalize(h).ok());
    let in_id = home
        .as_deref()
        .and_then(|h| folder.strip_prefix(h).ok())
        .unwrap_or(folder);
    match in_id.to_str() {
        Some(_) => Ok(()),
        None => Err(BundleError::one(not_utf8(
            folder,
            in_id,
            "give the folder a name in UTF-8",
        ))),
    }
}

/// That the folder at `path` has a name in `in_id` (the part of its path its ids hold) that is not
/// valid UTF-8, and what to do (`advice`).
fn not_utf8(path: &Path, in_id: &Path, advice: &str) -> String {
    let name = in_id
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .find(|name| name.to_str().is_none())
        .unwrap_or(OsStr::new(""));
    format!(
        "{}: the folder name {} is not valid UTF-8, so this bundle can't get an id of its own (folders \
         whose names differ only in such bytes would share one, and their runs and artifact versions \
         would mix); {advice}",
        quote::os_word(path.as_os_str()),
        quote::os_word(name),
    )
}

/// Why `agent-env run TEXT` can't run `text`, a word that is not valid UTF-8: the folder it names has
/// no id of its own ([`id_root`]'s message), or there is no such folder.
pub fn refusal_of_non_utf8(text: &OsStr, home: Option<&Path>) -> BundleError {
    let path = match (Path::new(text).strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(text),
    };
    let canonical = match path.is_dir() {
        true => std::fs::canonicalize(&path).ok(),
        false => None,
    };
    match canonical.map(|canonical| id_root(&canonical, home)) {
        Some(Err(refused)) => refused,
        _ => BundleError::one(format!(
            "{}: no such folder, and no installed bundle has a name that is not valid UTF-8; give a \
             bundle's folder, or an installed bundle's name (agent-env run lists the installed bundles)",
            quote::os_word(text)
        )),
    }
}
