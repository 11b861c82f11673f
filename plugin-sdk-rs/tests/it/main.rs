//! The SDK's integration tests: its example plugins, built by cargo, driven over their stdin and stdout
//! as agent-env drives them.

// Tests stop at the first thing that is not as expected: unwrapping is how they say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod edge_cases_example;
mod greet_example;
mod shutdown;
mod typed_step_example;
