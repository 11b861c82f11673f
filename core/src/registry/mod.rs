//! The registries of the ten contribution groups, built from discovered manifests, the plugins' handshakes
//! and the config, with the original's precedence: built-in name, then incompatible core, then conflict,
//! then load (spawn and handshake), then validate, then config.
//!
//! [`Registry::build`] records a [`ClaimOutcome`] for every claim (what `plugin list` reports) and
//! keeps the names that took effect, which [`Registry::resolve`] answers for.
//!
//! - [`outcome`]: what became of each claim; `resolve`: the built registries and their answers.
//! - `precedence`: the build itself, claim by claim in precedence order; `bundle_claims` checks the
//!   bundles plugins install, `config_merge` lets config release or refuse names, `type_aliases`
//!   maps the config's legacy artifact type names.
//! - [`load`] and [`host_prober`]: starting plugins to read their handshakes; [`validate`]: what a
//!   handshake must satisfy ([`crate::compat`] checks a manifest's requirements, before any of this).
//! - [`unused_here`]: the groups whose contributions load but that nothing in this agent-env uses yet.

use std::path::PathBuf;

use crate::discovery::Discovery;

mod bundle_claims;
pub mod config_input;
mod config_merge;
pub mod host_prober;
pub mod load;
pub mod outcome;
mod precedence;
mod resolve;
mod type_aliases;
pub mod unused_here;
pub mod validate;

#[cfg(test)]
mod tests;

pub use crate::compat;
pub use config_input::ConfigState;
pub use load::{Launch, LoadFailure, Probe, Prober, ProcessDiagnosis};
pub use outcome::{ClaimOutcome, ClaimRecord};
pub use precedence::{root_flag, Loading};
pub use resolve::{claim_label, launch_of, Registry, RegistryError, Resolved};

impl Registry {
    /// Builds every registry; `home` is the home folder the bundle claims' messages show as `~`.
    pub fn build(
        discovery: Discovery,
        config: ConfigState,
        loading: Loading<'_>,
        home: Option<PathBuf>,
    ) -> Registry {
        precedence::build(discovery, config, loading, home)
    }
}
