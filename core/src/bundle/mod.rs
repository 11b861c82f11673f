//! Bundles: folders of tasks, evals, artifacts, skills, envs and agents (§10 of the reference).
//!
//! - [`parse`] reads a folder and reports every problem at once ([`BundleError`]);
//! - [`installed`] lists the bundles packages install, [`resolve`] turns `agent-env run TEXT` into one;
//! - [`plan`] picks what a run does; [`ledger`] decides what must be written anew.

pub mod error;
pub mod ids;
pub mod installed;
pub mod layout;
pub mod ledger;
pub mod manifest_entry;
pub mod plan;
pub mod steps;
pub mod tree;

use std::path::Path;

pub use error::BundleError;
pub use installed::{core_bundles, installed, resolve, InstalledBundle, Location, Target};
pub use layout::{Artifact, Bundle, Eval, Task};

/// Parses the bundle folder at `folder`, with ids rooted at its canonical path.
pub fn parse(folder: &Path) -> Result<Bundle, BundleError> {
    installed::parse_folder(folder)
}

/// Parses the folder of a bundle that `package` installs as `name`, with ids rooted at
/// `@local/<package>/<name>` (what `plugin check` checks; `BundleError::summary` words the reason).
pub fn parse_installed(folder: &Path, package: &str, name: &str) -> Result<Bundle, BundleError> {
    layout::parse_tree(
        tree::Tree::Disk(folder),
        &crate::paths::tilde(folder),
        &ids::installed_id_root(package, name),
    )
}
