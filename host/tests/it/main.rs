//! The integration tests of `agent-env-host`, one test binary: the library against the fixture
//! plugins of `tests/fixture-plugins`, each a real child process that works or misbehaves on purpose.

// Tests stop at the first thing that is not as expected: unwrapping is how they say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod host_basics;
mod host_calls;
mod host_death;
mod host_faults;
mod host_routing;
mod host_sdk;
mod host_stops;
