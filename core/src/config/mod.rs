//! `.agentenv/config.toml`: finding and parsing it, `env:`/`secret:` references, each plugin's
//! `[plugins.<package>]` settings, which store each kind uses, the shapes of the registration tables, and
//! the read-only views `config show`, `config explain` and `config check` print (and a user-level
//! config file they say is not read, `user_file`).
//!
//! What other areas call:
//! - [`ConfigDocument::load_from`] once per invocation (the session: one file read, one parse); `doc.error` is the
//!   [`ConfigProblem`] (`config-not-found` / `config-unreadable`) a report shows, `doc.require()` the
//!   [`ConfigError`] a command that needs the config fails with.
//! - [`plugin_settings`] for `initialize` and `host.settings`, with [`configured_store::LazySecrets`]
//!   for `secret:`.
//! - [`selection`] (which store a kind uses, config unresolved), [`configured_store::store_spec`]
//!   (resolved, for `stores::build_store`), [`configured_store::build_configured`] and
//!   [`configured_store::configured_secrets`].
//! - [`impls`] and [`provider_entries`] for the registration tables' shapes.
//! - [`check_all`] / [`check::preflight`] before a run starts any step.
//! - [`sandbox_chain::no_provider_here`]: why `--sandbox` or `[sandbox] default` picks no provider.
//!
//! How `[stores.object]` becomes a store, in order (the other kinds go the same way):
//! 1. `store_selection`: which class the kind uses (`AGENT_ENV_OBJECT_STORE` > `[stores.object]` > the
//!    built-in default), every layer kept for `config show`; the `config` table still unresolved.
//! 2. `configured_store`: the table's `env:`/`secret:` references resolved (secrets through the configured
//!    secret store), giving a store spec.
//! 3. `stores::from_spec`: the class named (a built-in one, a hosted one in `stores::hosted`, whose table
//!    `stores::config_table` checks, or a plugin's `<package>:<Class>`, opened in its plugin by
//!    `stores::plugin_stores`) and built.
//! 4. `configured_store_set`: the four kinds as one `stores::StoreSet`, each built on first use, which a
//!    session (and each run) holds; `store_builder` is the seam `config check` and a run's preflight
//!    build stores through.

pub mod check;
pub mod config_file;
pub mod configured_store;
pub mod configured_store_set;
pub mod document;
pub mod error;
pub mod explain;
pub mod explorer;
pub mod file_modes;
pub mod grant_bind;
pub mod literal_secrets;
pub mod locate;
pub mod mask;
pub mod mask_text;
pub mod plugins;
mod reference_syntax;
pub mod references;
pub mod registrations;
pub mod sandbox_chain;
pub mod schema;
pub mod secret_names;
pub mod sections;
pub mod shared_stores;
pub mod shared_variables;
pub mod show;
pub mod sources;
pub mod store_builder;
pub mod store_identity;
pub mod store_keys;
pub mod store_selection;
pub mod tables;
pub mod user_file;
pub mod warnings;

pub use check::check_all;
pub use configured_store_set::{
    configured_stores, configured_stores_opening_plugins, OpenPluginStores,
};
pub use document::{ConfigDocument, ConfigProblem};
pub use error::ConfigError;
pub use locate::ConfigSource;
pub use plugins::{installed_packages, plugin_settings, InstalledPackage};
pub use references::SecretLookup;
pub use registrations::{impls, provider_entries, split_impl, ProviderEntry, ProviderKind};
pub use store_builder::StoreBuilder;
pub use store_selection::{selection, Layer, LayerKind, StoreSelection};
