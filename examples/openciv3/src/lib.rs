//! The OpenCiv3 agent-env plugin as a library: the content-addressed object store, the plugin (store
//! class, task steps, `openciv3` command) that the binary serves, and the `gc` command.

pub mod cas;
pub mod gc_command;
pub mod plugin;
