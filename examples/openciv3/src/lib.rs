//! The OpenCiv3 agent-env plugin as a library: the content-addressed object store that the plugin binary
//! serves over the pipe, shared with the tests and the `gc` command.

pub mod cas;
pub mod gc_command;
