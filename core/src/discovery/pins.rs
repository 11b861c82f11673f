//! Pinning what `plugin add` installed: the sha256 of each file a package starts from (and, for a
//! Python package, the code its distribution installed), in
//! `<plugins dir>/.pins.json`, which the host checks before every start (`agent_env_host::pins`).
//! `agent-env plugin approve PACKAGE` pins a package again after a change its user made.

use std::path::{Path, PathBuf};

use agent_env_host::pins::{self, PinError, PinFile};
use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::names::canonical_name;

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
    let path = pin_file(plugins_dir);
    // A file that cannot be read pins nothing any more: it is written anew.
    let mut file = pins::load(&path).unwrap_or_default();
    for manifest in manifests {
        let argv = manifest.resolved_exec();
        let Some(program) = argv.first() else {
            continue;
        };
        // One that cannot be run is not pinned: the check that follows reports why it fails.
        let Ok(executable) = agent_env_host::resolve_executable(program) else {
            continue;
        };
        let mut files = pins::files_of(&argv, &executable);
        files.push(manifest.path.clone());
        // A Python plugin's console script only imports its code: pin the code too.
        for file in super::python_record::distribution_code(&manifest.path) {
            if !files.contains(&file) {
                files.push(file);
            }
        }
        let pinned = files
            .iter()
            .map(|f| pins::pin(f))
            .collect::<Result<Vec<_>, _>>()?;
        file.packages.insert(manifest.canonical_name(), pinned);
    }
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
