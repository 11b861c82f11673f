//! The registries of the ten contribution groups, built from discovered manifests, the plugins' handshakes
//! and the config, with the original's precedence: built-in name, then incompatible core, then conflict,
//! then load (spawn and handshake), then validate, then config.
//!
//! [`Registry::build`] records an [`Outcome`] for every claim (what `plugin list` reports) and keeps the
//! names that took effect, which [`Registry::resolve`] answers for.
//!
//! - [`outcome`]: what became of each claim; `resolve`: the built registries and their answers.
//! - `precedence`: the build itself, claim by claim in precedence order; `bundle_claims` checks the
//!   bundles plugins install, `config_merge` lets config release or refuse names.
//! - [`load`] and [`host_prober`]: starting plugins to read their handshakes; [`validate`] and
//!   [`compat`]: what a handshake and a manifest's requirements must satisfy.

use crate::discovery::{Discovery, SearchPath};

mod bundle_claims;
pub mod compat;
pub mod config_input;
mod config_merge;
pub mod host_prober;
pub mod load;
pub mod outcome;
mod precedence;
mod resolve;
pub mod validate;

#[cfg(test)]
mod tests;

pub use config_input::ConfigState;
pub use load::{Launch, LoadFailure, Probe, Prober, ProcessDiagnosis};
pub use outcome::{ClaimRecord, Outcome};
pub use precedence::{root_flag, Loading};
pub use resolve::{claim_label, launch_of, Registry, RegistryError, Resolved};

impl Registry {
    /// For the report: discovers plugins from the environment, reads the config, and (when `load`)
    /// starts every plugin through the host, in parallel, to check its handshake.
    pub fn from_env(load: bool) -> Registry {
        Registry::from_discovery(crate::discovery::discover(&SearchPath::from_env()), load)
    }

    /// Like [`Registry::from_env`], from manifests this invocation has already discovered.
    pub fn from_discovery(discovery: Discovery, load: bool) -> Registry {
        let config = ConfigState::from_env();
        if load {
            let prober = host_prober::HostProber::new();
            Registry::build(discovery, config, Loading::All(&prober))
        } else {
            Registry::build(discovery, config, Loading::None)
        }
    }

    /// For a run: like [`Registry::from_env`], but starts only the plugins that config names in an
    /// impl; every other plugin name resolves from its manifest and its process starts on first use.
    pub fn for_run() -> Registry {
        let discovery = crate::discovery::discover(&SearchPath::from_env());
        let config = ConfigState::from_env();
        let prober = host_prober::HostProber::new();
        Registry::build(discovery, config, Loading::ConfigNamed(&prober))
    }

    /// Builds every registry.
    pub fn build(discovery: Discovery, config: ConfigState, loading: Loading<'_>) -> Registry {
        precedence::build(discovery, config, loading)
    }
}
