//! The integration tests of `agent-env-host`, one test binary: the library against the fixture
//! plugins of `tests/fixture-plugins`, each a real child process that works or misbehaves on purpose.

mod support;

mod host_basics;
mod host_calls;
mod host_death;
mod host_faults;
mod host_routing;
mod host_sdk;
