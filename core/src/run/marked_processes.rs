//! The processes task commands started, as a run names them: what finds and stops them lives with
//! the sandboxes they were started in ([`crate::sandbox::marked_processes`]), whose teardown stops
//! them too.

pub(crate) use crate::sandbox::marked_processes::{MarkedProcesses, COMMAND_MARKER};
