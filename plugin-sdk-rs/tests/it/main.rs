//! The SDK's integration tests: its example plugins, built by cargo, driven over their stdin and stdout
//! as agent-env drives them.

mod greet_example;
mod typed_step_example;
