//! `agent-env up`: the explorer. A web UI and a REST API over the stores and the runs, served on
//! 127.0.0.1 from this one binary (assets embedded, nothing fetched), with explorer plugins as child
//! processes.
//!
//! - [`server`]: binding, serving, stopping; [`connections`]: the accept loop and its limits (a
//!   slow request head, idle connections, how many at once); [`guard`]: the host, cross-site and
//!   header rules.
//! - [`api`]: the routes under `/api/v1` and `/openapi.json`, declared once for router and document.
//! - [`data`]: what the API reads from the stores; [`runs`]: the runs it starts, through the same
//!   engine as `agent-env run`.
//! - [`ui`]: the pages.
//! - [`plugins`]: explorer plugins, their routes matched before the explorer's own.
//! - [`http`]: errors, query strings, pagination, percent-encoding.

pub mod api;
pub mod connections;
pub mod data;
pub mod error;
pub mod guard;
pub mod http;
pub mod plugins;
pub mod runs;
pub mod server;
pub mod state;
pub mod ui;

pub use error::UpError;
pub use server::{serve, UpOptions};
