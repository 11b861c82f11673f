//! The agent-env plugin wire contract.
//!
//! Everything the host (`agent-env`) and a plugin must agree on lives here: the protocol version, the
//! JSON-RPC message shapes, method names with their params and results, error codes, the manifest schema,
//! and the stdio peer both sides use to speak it. `docs/protocol.md` is the prose version of this crate.

#![warn(missing_docs)]

pub mod codes;
pub mod explorer;
mod json_out;
pub mod manifest;
pub mod message;
pub mod methods;
pub mod names;
pub mod peer;
pub mod stray_output;
pub mod version;

pub use codes::ErrorKind;
pub use message::{Id, Message, RpcError};
pub use version::{ProtocolRange, PROTOCOL_VERSION};
