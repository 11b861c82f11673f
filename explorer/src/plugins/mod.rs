//! Explorer plugins as child processes: each declares its routes (`explorer.router`), the server
//! matches requests against them before its own routes and forwards each match (`explorer.request`).
//!
//! - [`routes`]: a declared route and matching a request against it;
//! - [`mounted`]: which explorer plugins took effect and the routes each serves;
//! - [`bridge`]: their processes, forwarding one request, stopping idle ones;
//! - [`forward`]: the middleware in front of the core routes.

pub mod bridge;
pub mod forward;
pub mod mounted;
pub mod routes;

pub use bridge::{ExplorerPlugins, ForwardError};
pub use forward::PluginRouting;
