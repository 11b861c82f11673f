//! The protocol crate's integration tests: the shared test vectors (`vectors`) and the JSON Schemas'
//! examples held to the crate's types and manifest parser (`schema`).

mod schema;
mod vectors;
