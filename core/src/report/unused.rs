//! Contributions that took effect but that no run here uses: a plugin's env types, sandbox providers,
//! state providers and environment providers (`registry::unused_here`). They keep the status the
//! original's rules give (`active`); `plugin list`, `check` and `show` add a warning for each, so the
//! report claims no effect a run cannot have.

use crate::registry::outcome::Status;
use crate::registry::unused_here::unused_contribution_warning;
use crate::registry::Registry;

/// One sentence per active contribution in a group nothing here uses, plugin by plugin in discovery
/// order; only `package`'s when one is given (canonical name).
pub fn warnings(registry: &Registry, package: Option<&str>) -> Vec<String> {
    registry
        .claims
        .iter()
        .filter(|claim| claim.outcome.status == Status::Active)
        .filter_map(|claim| {
            let manifest = &registry.discovery.plugins.get(claim.plugin)?.manifest;
            if package.is_some_and(|wanted| manifest.canonical_name() != wanted) {
                return None;
            }
            unused_contribution_warning(&manifest.name, claim.group, &claim.name)
        })
        .collect()
}
