//! The integration tests of the OpenCiv3 plugin, one test binary: the CAS store across processes
//! (`concurrency`, `gc`), the plugin through the core's host (`pipe`, `setup_command`), and the
//! `agent-env` binary against the installed plugin (`cli_blackbox`). The hand-ported object kit
//! (`tests/object_kit.rs`) is still a binary of its own.

// Tests stop at the first thing that is not as expected: unwrapping is how they say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod cli_blackbox;
mod concurrency;
mod gc;
mod pipe;
mod setup_command;
