//! The explorer's connections: how many it holds at once and how long each may keep a slot while
//! sending nothing useful ([`limits`]), and the accept loop that serves the app under those limits
//! and drains on stop ([`accept`]).
//!
//! A client that opens connections and sends half a request head, or leaves connections idle, would
//! otherwise hold a task and a file descriptor each for ever, until the process had none left for
//! real requests.

pub mod accept;
pub mod limits;

pub use accept::serve_connections;
pub use limits::{ConnectionLimits, LimitsError};
