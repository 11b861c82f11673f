//! Bundles as data: folders of tasks, evals, artifacts, skills, envs and agents (`docs/protocol.md`,
//! Bundles).
//!
//! - [`parse`] reads a folder with the [`parser`] into a [`Bundle`] ([`model`]) and reports every problem
//!   at once ([`BundleError`]); [`tree`] reads a folder on disk or a bundle built into the binary.
//! - [`installed()`] lists the bundles packages install, [`resolve`] turns `agent-env run TEXT` into one;
//!   [`manifest_entry`] checks one manifest's `[provides.bundles]` entry.
//! - [`links`]: the links among an artifact's files that lead outside the bundle's folder, which a
//!   run names.
//! - [`natural_order`]: the order of a bundle's tasks and evals, `task2` before `task10`.
//! - [`folder_id`]: the id root of a folder on disk, refused when another folder would share it.
//! - [`ids`] and [`step_fields`]: the ids a bundle's entities get and the common fields of a step;
//!   [`task_json`] reads a task file's JSON, finding every key given twice; [`task_steps`] checks a
//!   task's steps, for a bundle's task and a stored one alike.
//!
//! Planning a run and the ledger of what was written belong to the run (`crate::run`).

pub mod copy;
pub mod error;
pub mod export;
pub mod folder_id;
pub mod ids;
pub mod installed;
pub mod links;
pub mod manifest_entry;
pub mod model;
pub mod natural_order;
pub mod parser;
pub mod step_fields;
pub mod task_json;
pub mod task_steps;
pub mod tree;

use std::path::Path;

pub use error::BundleError;
pub use installed::{
    as_folder, core_bundles, installed, resolve_installed, InstalledBundle, Location, Target,
};
pub use model::{Artifact, Bundle, Eval, Task};

/// Parses the bundle folder at `folder`, with ids rooted at its canonical path (relative to the home
/// folder `home` when inside it).
pub fn parse(folder: &Path, home: Option<&Path>) -> Result<Bundle, BundleError> {
    installed::parse_folder(folder, home)
}
