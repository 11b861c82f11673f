//! The protocol crate's integration tests: the shared test vectors (`vectors`) and the JSON Schemas'
//! examples held to the crate's types and manifest parser (`schema`).

// Tests stop at the first thing that is not as expected: unwrapping is how they say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod schema;
mod vectors;
