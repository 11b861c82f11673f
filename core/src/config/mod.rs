//! `.agentenv/config.toml`: finding and parsing it, `env:`/`secret:` references, each plugin's
//! `[plugins.<package>]` settings, which store each kind uses, the shapes of the registration tables, and
//! the read-only views `config show`, `config explain` and `config check` print.
//!
//! What other areas call:
//! - [`ConfigDocument::load`] once per command (one file read, one parse); `doc.error` is the
//!   [`ConfigProblem`] (`config-not-found` / `config-unreadable`) a report shows, `doc.require()` the
//!   [`ConfigError`] a command that needs the config fails with.
//! - [`plugin_settings`] for `initialize` and `host.settings`, with [`build::LazySecrets`] for `secret:`.
//! - [`selection`] (which store a kind uses, config unresolved), [`build::store_spec`] (resolved, for
//!   `stores::build_store`), [`build::build_configured`] and [`build::configured_secrets`].
//! - [`impls`] and [`provider_entries`] for the registration tables' shapes.
//! - [`check_all`] / [`check::preflight`] before a run starts any step.

pub mod build;
pub mod check;
pub mod document;
pub mod error;
pub mod explain;
pub mod locate;
pub mod mask;
pub mod mask_text;
pub mod plugins;
pub mod references;
pub mod registrations;
pub mod schema;
pub mod sections;
pub mod show;
pub mod similar;
pub mod sources;
pub mod stores;
pub mod tables;
pub mod warnings;

pub use check::{check_all, StoreBuilder};
pub use document::{ConfigDocument, ConfigProblem};
pub use error::ConfigError;
pub use locate::ConfigSource;
pub use plugins::{plugin_settings, InstalledPackage};
pub use references::SecretLookup;
pub use registrations::{impls, provider_entries, split_impl, ProviderEntry, ProviderKind};
pub use stores::{selection, Layer, LayerKind, StoreSelection};
