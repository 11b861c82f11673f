//! The protocol crate's integration tests: the shared test vectors (`vectors`), the JSON Schemas'
//! examples held to the crate's types and manifest parser (`schema`), and `execute`'s params with and
//! without the step's time (`execute_params`).

// Tests stop at the first thing that is not as expected: unwrapping is how they say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod execute_params;
mod schema;
mod vectors;
