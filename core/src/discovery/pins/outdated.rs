//! Pins an older agent-env wrote: it pinned fewer of a package's files than agent-env pins now (a
//! Python plugin's console script alone, not its manifest nor its code), and pins are written only by
//! `plugin add` and `plugin approve`, so such a package's other files can change unnoticed until its
//! user approves it again. The report warns of each such package; it still starts.

use std::path::{Path, PathBuf};

use agent_env_host::pins;
use agent_env_protocol::manifest::Manifest;

use super::pin_path::normalised;

/// A package whose pins do not cover every file agent-env pins now.
#[derive(Debug, Clone)]
pub struct Outdated<'m> {
    pub manifest: &'m Manifest,
    /// The files agent-env pins now that its pins leave out, in the order they are pinned.
    pub unpinned: Vec<PathBuf>,
}

/// Each of `manifests` in the plugins directory whose pins leave out a file agent-env pins now.
/// A package with no pins (a pin file that cannot be read, which is warned of on its own, or one
/// that never pinned it) is left out, as is one whose pinned files changed: its start is refused,
/// naming `plugin approve`, which pins the rest too.
pub fn outdated_packages<'m>(
    plugins_dir: &Path,
    manifests: impl IntoIterator<Item = &'m Manifest>,
) -> Vec<Outdated<'m>> {
    let Ok(file) = pins::load(&super::pin_file(plugins_dir)) else {
        return Vec::new();
    };
    manifests
        .into_iter()
        .filter(|manifest| manifest.path.starts_with(plugins_dir))
        .filter_map(|manifest| {
            let pinned = file.packages.get(&manifest.canonical_name())?;
            if !pins::changed(pinned).is_empty() {
                return None;
            }
            let covered: Vec<PathBuf> = pinned.iter().map(|pin| normalised(&pin.path)).collect();
            let unpinned: Vec<PathBuf> = super::files_to_pin(manifest)?
                .into_iter()
                .filter(|file| !covered.contains(file))
                .collect();
            (!unpinned.is_empty()).then_some(Outdated { manifest, unpinned })
        })
        .collect()
}
