//! The processes task commands started, found by the folder their environment marks them as
//! started in ([`COMMAND_MARKER`], which a command's children inherit, whatever process group or
//! session they move to). A command's process group is killed when it ends; what left the group
//! (`setsid`, a daemon) is found here: when a command runs past its limit or its run is cancelled,
//! and when a later run cleans up after a killed one.

use std::path::{Path, PathBuf};

/// The variable that marks a task command, and every process it starts, with the folder it ran in: what
/// the sweep after a killed run looks for to stop the processes that run left (and only those).
pub const COMMAND_MARKER: &str = "AGENT_ENV_TASK_COMMAND_DIR";

/// The processes task commands started, as `/proc` shows them: each one's pid and the folder its
/// environment marks it as started in. Read once (a sweep reads it only when it removes a sandbox);
/// only this user's processes can be read, and without `/proc` there are none.
#[derive(Default)]
pub(crate) struct MarkedProcesses(std::cell::OnceCell<Vec<(libc::pid_t, PathBuf)>>);

impl MarkedProcesses {
    /// SIGKILLs the processes task commands started in `folder` (a sandbox) or below it. A process
    /// that only works in the folder (a person's shell looking into it) is left alone.
    pub(crate) fn kill_in(&self, folder: &Path) {
        for (pid, dir) in self.0.get_or_init(read_marked) {
            if dir.starts_with(folder) {
                // SAFETY: kill(2) on a pid read from /proc; it has no memory effects.
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                }
            }
        }
    }
}

fn read_marked() -> Vec<(libc::pid_t, PathBuf)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let own = std::process::id();
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            if pid == own {
                return None;
            }
            let dir = marker_of(&entry.path().join("environ"))?;
            Some((libc::pid_t::try_from(pid).ok()?, dir))
        })
        .collect()
}

/// The folder the environment in the file `environ` (`/proc/<pid>/environ`) marks its process as
/// started in by a task command, if it does.
fn marker_of(environ: &Path) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = std::fs::read(environ).ok()?;
    let prefix = format!("{COMMAND_MARKER}=");
    bytes
        .split(|b| *b == 0)
        .find_map(|var| var.strip_prefix(prefix.as_bytes()))
        .map(|dir| PathBuf::from(std::ffi::OsStr::from_bytes(dir)))
}
