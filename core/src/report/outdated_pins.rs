//! Packages an older agent-env pinned (`discovery::pins::outdated`): their pins leave out files
//! agent-env pins now (a Python plugin's manifest and code), so a change to those goes unnoticed.
//! Such a package still starts; `plugin list`, `show` and `check` warn of it with a sentence coded
//! `pins-outdated`, which names the files left out and the `plugin approve` that pins them.

use std::path::Path;

use crate::registry::Registry;

/// The code the warning ends with.
pub const PINS_OUTDATED: &str = "pins-outdated";

/// How many of the files left out a warning names; the rest are counted.
const NAMED_FILES: usize = 5;

/// One sentence per package in `plugins_dir` whose pins leave out files agent-env pins now, in
/// discovery order; only `package`'s when one is given (canonical name).
pub fn warnings(registry: &Registry, plugins_dir: &Path, package: Option<&str>) -> Vec<String> {
    let manifests = registry
        .discovery
        .plugins
        .iter()
        .map(|plugin| &plugin.manifest)
        .filter(|manifest| package.is_none_or(|wanted| manifest.canonical_name() == wanted));
    crate::discovery::pins::outdated::outdated_packages(plugins_dir, manifests)
        .iter()
        .map(|outdated| {
            let manifest = outdated.manifest;
            let count = outdated.unpinned.len();
            let mut files: Vec<String> = outdated
                .unpinned
                .iter()
                .take(NAMED_FILES)
                .map(|file| crate::printable::printable(&file.display().to_string()).into_owned())
                .collect();
            if count > NAMED_FILES {
                files.push(format!("{} more", count - NAMED_FILES));
            }
            format!(
                "{} {} was pinned by an older agent-env, which pinned fewer of its files: {count} {} it starts from {} not pinned, so a change to {} goes unnoticed ({}); run `agent-env plugin approve {}` to pin {} as {} now [{PINS_OUTDATED}]",
                manifest.name,
                manifest.version,
                if count == 1 { "file" } else { "files" },
                if count == 1 { "is" } else { "are" },
                if count == 1 { "it" } else { "them" },
                files.join(", "),
                crate::quote::word(&manifest.name),
                if count == 1 { "it" } else { "them" },
                if count == 1 { "it is" } else { "they are" },
            )
        })
        .collect()
}
