//! Packages whose manifest provides nothing: no contribution in any group and no store. `plugin add`
//! refuses such a package; one put in the plugins directory (or on `PATH`) by hand is shown by
//! `plugin list`, `show` and `check` with a warning coded `provides-nothing`, which says what to do,
//! rather than as a package that is `ok`.

use std::collections::BTreeSet;

use crate::registry::Registry;

/// The code the warning ends with.
pub const PROVIDES_NOTHING: &str = "provides-nothing";

/// One sentence per package that provides nothing, in discovery order; only `package`'s when one is
/// given (canonical name).
pub fn warnings(registry: &Registry, package: Option<&str>) -> Vec<String> {
    let claiming: BTreeSet<usize> = registry.claims.iter().map(|c| c.plugin).collect();
    registry
        .discovery
        .plugins
        .iter()
        .enumerate()
        .filter(|(i, plugin)| !claiming.contains(i) && plugin.manifest.stores.is_empty())
        .map(|(_, plugin)| &plugin.manifest)
        .filter(|manifest| package.is_none_or(|wanted| manifest.canonical_name() == wanted))
        .map(|manifest| {
            format!(
                "{} {} declares no contributions and no stores, so it is not an agent-env plugin and nothing here uses \
                 it: declare what it provides under [provides.<group>] in its manifest ({}), or remove it \
                 [{PROVIDES_NOTHING}]",
                manifest.name,
                manifest.version,
                manifest.path.display()
            )
        })
        .collect()
}
