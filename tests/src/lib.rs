//! Helpers of the cross-language suite (`tests/cross_language.rs`): [`setup`] builds and installs the
//! three example plugins once per test process (the `agent-env` binary and the OpenCiv3 plugin with
//! cargo, the Go plugin with `go build`, the Python SDK and grader with pip into a venv), and
//! [`sandbox`] gives each test a temp HOME, state, plugins directory and `PATH` with all of them
//! installed, and runs `agent-env` there.

pub mod sandbox;
pub mod setup;
