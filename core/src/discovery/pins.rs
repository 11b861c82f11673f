//! Pinning what `plugin add` installed: the sha256 of each file a package starts from (and, for a
//! Python package, the code its distribution installed), in
//! `<plugins dir>/.pins.json`, which the host checks before every start (`agent_env_host::pins`).
//! `agent-env plugin approve PACKAGE` pins a package again after a change its user made.
//!
//! - [`pin_path`]: how a pinned file's path is spelled, when pins are written and compared.
//! - [`outdated`]: packages whose pins an older agent-env wrote, which cover fewer files.

use std::path::{Path, PathBuf};

use agent_env_host::pins::{self, Pin, PinError, PinFile};
use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::names::canonical_name;

pub mod outdated;
pub mod pin_path;

/// The pin file of a plugins directory.
pub fn pin_file(plugins_dir: &Path) -> PathBuf {
    plugins_dir.join(".pins.json")
}

/// Why the plugins directory's pin file cannot be read, when it cannot: then no plugin's files are
/// checked before it starts, which the user must hear of.
pub fn unreadable(plugins_dir: &Path) -> Option<String> {
    let path = pin_file(plugins_dir);
    let problem = pins::load(&path).err()?;
    Some(format!(
        "{problem}: the files of the plugins agent-env installed are not checked before they start; `agent-env plugin approve PACKAGE…` pins what is installed now, writing the file again"
    ))
}

/// Pins each of `manifests` as its files are now (its manifest included: a changed `exec` starts
/// other code), replacing its earlier pins. An error names the file that could not be hashed, or the
/// pin file that could not be written.
pub fn pin_packages(plugins_dir: &Path, manifests: &[&Manifest]) -> Result<(), PinError> {
    let mut pinned = Vec::new();
    for manifest in manifests {
        if let Some(pins) = current_pins(manifest)? {
            pinned.push((manifest.canonical_name(), pins));
        }
    }
    save_package_pins(plugins_dir, pinned)
}

/// The pins of the files `manifest`'s package starts from, as they are now: its executable, each file
/// an `exec` argument names by an absolute path, its manifest, and for a Python package the code its
/// distribution installed. None when its executable cannot be run: it is not pinned, and the check
/// that follows an install reports why it fails. An error names the file that could not be hashed.
pub fn current_pins(manifest: &Manifest) -> Result<Option<Vec<Pin>>, PinError> {
    let Some(files) = files_to_pin(manifest) else {
        return Ok(None);
    };
    files
        .iter()
        .map(|f| pins::pin(f))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The files [`current_pins`] pins for `manifest`'s package, each once, spelled as
/// [`pin_path::normalised`] spells them; None when its executable cannot be run.
pub fn files_to_pin(manifest: &Manifest) -> Option<Vec<PathBuf>> {
    let argv = manifest.resolved_exec();
    let program = argv.first()?;
    let executable = agent_env_host::resolve_executable(program).ok()?;
    let mut candidates = pins::files_of(&argv, &executable);
    candidates.push(manifest.path.clone());
    // A Python plugin's console script only imports its code: pin the code too.
    candidates.extend(super::python_record::distribution_code(&manifest.path));
    let mut files: Vec<PathBuf> = Vec::new();
    for file in candidates.iter().map(|f| pin_path::normalised(f)) {
        if !files.contains(&file) {
            files.push(file);
        }
    }
    Some(files)
}

/// Writes `pinned` (canonical package name, its pins) to the plugins directory's pin file, each
/// package's pins replacing its earlier ones. An error names the pin file that could not be written.
pub fn save_package_pins(
    plugins_dir: &Path,
    pinned: Vec<(String, Vec<Pin>)>,
) -> Result<(), PinError> {
    let path = pin_file(plugins_dir);
    // A file that cannot be read pins nothing any more: it is written anew.
    let mut file = pins::load(&path).unwrap_or_default();
    file.packages.extend(pinned);
    pins::save(&path, &file)
}

/// Forgets the pins of `packages` (they were removed). An error names the pin file that could not be
/// read or written.
pub fn unpin_packages(plugins_dir: &Path, packages: &[String]) -> Result<(), PinError> {
    let path = pin_file(plugins_dir);
    let mut file: PinFile = pins::load(&path)?;
    let before = file.packages.len();
    for package in packages {
        file.packages.remove(&canonical_name(package));
    }
    if file.packages.len() == before {
        return Ok(());
    }
    pins::save(&path, &file)
}
