//! The processes task commands started, found by the folder their environment marks them as
//! started in ([`COMMAND_MARKER`], which a command's children inherit, whatever process group or
//! session they move to). A command's process group is killed when it ends; what left the group
//! (`setsid`, a daemon) is found here: when a command runs past its limit or its run is cancelled,
//! when its sandbox is torn down, and when a later run cleans up after a killed one.
//!
//! Reading every process's environment costs a few milliseconds on a busy machine, too much for
//! each of a hundred short tasks. The kernel hands out process ids in turn, so what started after a
//! moment ([`PidMark`]) has an id after the last one handed out then: a sandbox's teardown looks
//! only at those (the ids a short task's life spans are few), and at every process when the mark
//! is old enough for the ids to have come round again, or the kernel does not say.
//!
//! A process caught in the middle of an `exec` shows an empty environment for a moment (the kernel
//! fills it in after the new program is mapped); a teardown looks again, briefly, at a live
//! process that shows one, so such a process is not missed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The variable that marks a task command, and every process it starts, with the folder it ran in: what
/// the sweep after a killed run looks for to stop the processes that run left (and only those).
pub const COMMAND_MARKER: &str = "AGENT_ENV_TASK_COMMAND_DIR";

/// Where the kernel says which process id it handed out last (in this process's pid namespace).
const LAST_PID: &str = "/proc/sys/kernel/ns_last_pid";

/// Past this many ids, `/proc` is listed rather than each id looked up.
const LOOKUPS_AT_MOST: i64 = 512;

/// A mark older than this may have seen the ids come round: every process is looked at.
const MARK_TRUSTED_FOR: Duration = Duration::from_secs(10);

/// How many times a teardown looks, at most: again after it killed something (which may have
/// started more meanwhile) or saw a process whose environment it could not read yet.
const PASSES: usize = 8;

/// How long a teardown waits before it looks again at a process caught in an `exec`.
const EXEC_PAUSE: Duration = Duration::from_millis(5);

/// The last process id the kernel had handed out at some moment, and when: the processes started
/// since have ids after it.
#[derive(Debug, Clone, Copy)]
pub struct PidMark {
    last: Option<libc::pid_t>,
    at: Instant,
}

impl PidMark {
    /// The mark of now.
    pub fn now() -> PidMark {
        PidMark {
            last: last_pid(),
            at: Instant::now(),
        }
    }

    /// The mark of the moment before the process `first` started (as good as [`PidMark::now`] read
    /// just before it, without reading anything): it and what started after it.
    pub fn before(first: libc::pid_t) -> PidMark {
        PidMark {
            last: Some(first.saturating_sub(1)),
            at: Instant::now(),
        }
    }

    /// A mark that holds no id: every process is looked at.
    pub fn none() -> PidMark {
        PidMark {
            last: None,
            at: Instant::now(),
        }
    }
}

fn last_pid() -> Option<libc::pid_t> {
    std::fs::read_to_string(LAST_PID).ok()?.trim().parse().ok()
}

/// The processes task commands started, as `/proc` shows them: each one's pid and the folder its
/// environment marks it as started in. Read once (a sweep reads it only when it removes a sandbox);
/// only this user's processes can be read, and without `/proc` there are none.
#[derive(Default)]
pub(crate) struct MarkedProcesses(std::cell::OnceCell<Vec<(libc::pid_t, PathBuf)>>);

impl MarkedProcesses {
    /// SIGKILLs the processes task commands started in `folder` (a sandbox) or below it. A process
    /// that only works in the folder (a person's shell looking into it) is left alone.
    pub(crate) fn kill_in(&self, folder: &Path) {
        let folder = std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf());
        let marked = self.0.get_or_init(|| {
            candidates(&PidMark::none())
                .into_iter()
                .filter_map(|pid| match look_at(pid) {
                    Seen::Marked(dir) => Some((pid, dir)),
                    _ => None,
                })
                .collect()
        });
        for (pid, dir) in marked {
            if dir.starts_with(&folder) {
                kill(*pid);
            }
        }
    }
}

/// Stops the processes task commands started in `folder` (a sandbox, or a folder in one) or below
/// it since `since`: SIGKILL to each, looking again while the last look killed something or saw a
/// process in the middle of an `exec` (at most [`PASSES`] looks). Returns how many it killed.
pub fn stop_in(folder: &Path, since: &PidMark) -> usize {
    let folder = std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf());
    let mut killed: Vec<libc::pid_t> = Vec::new();
    for _ in 0..PASSES {
        let mut unsure = false;
        let before = killed.len();
        for pid in candidates(since) {
            match look_at(pid) {
                Seen::Marked(dir) if dir.starts_with(&folder) && !killed.contains(&pid) => {
                    kill(pid);
                    killed.push(pid);
                }
                Seen::Execing => unsure = true,
                _ => {}
            }
        }
        if killed.len() == before && !unsure {
            break;
        }
        if unsure {
            std::thread::sleep(EXEC_PAUSE);
        }
    }
    killed.len()
}

fn kill(pid: libc::pid_t) {
    // SAFETY: kill(2) on a pid read from /proc; it has no memory effects.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

/// The process ids that may have started since `since`: each id handed out after it when they are
/// few, else the processes `/proc` lists (those after the mark, while it is young enough to say).
fn candidates(since: &PidMark) -> Vec<libc::pid_t> {
    let own = libc::pid_t::try_from(std::process::id()).unwrap_or(0);
    let range = since
        .last
        .filter(|_| since.at.elapsed() < MARK_TRUSTED_FOR)
        .zip(last_pid());
    let after = |pid: libc::pid_t| match range {
        Some((from, to)) if from <= to => pid > from && pid <= to,
        // The ids came round past the largest one.
        Some((from, to)) => pid > from || pid <= to,
        None => true,
    };
    match range {
        Some((from, to)) if from <= to && i64::from(to) - i64::from(from) <= LOOKUPS_AT_MOST => {
            (from + 1..=to).filter(|pid| *pid != own).collect()
        }
        _ => listed()
            .into_iter()
            .filter(|pid| *pid != own && after(*pid))
            .collect(),
    }
}

/// Every process id `/proc` lists.
fn listed() -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .collect()
}

/// What one look at a process found.
enum Seen {
    /// A task command started it, in this folder.
    Marked(PathBuf),
    /// Live, but its environment is empty: in the middle of an `exec`, most likely.
    Execing,
    /// Gone, not this user's, a kernel thread, or started by no task command.
    Other,
}

fn look_at(pid: libc::pid_t) -> Seen {
    let Ok(bytes) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return Seen::Other;
    };
    if !bytes.is_empty() {
        return marker_in(&bytes).map_or(Seen::Other, Seen::Marked);
    }
    // A zombie's environment reads empty too, and a kernel thread's always does.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) if is_live_user_process(pid, &stat) => Seen::Execing,
        _ => Seen::Other,
    }
}

/// Whether `/proc/<pid>/stat` says a process that is neither ended (a zombie) nor a kernel thread
/// (`kthreadd`, id 2, or one of its children).
fn is_live_user_process(pid: libc::pid_t, stat: &str) -> bool {
    // `pid (comm) state ppid …`; the name may hold spaces and parentheses, so read after the last `)`.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return false;
    };
    let mut fields = rest.split_whitespace();
    let state = fields.next().unwrap_or("Z");
    let parent = fields.next().and_then(|p| p.parse::<libc::pid_t>().ok());
    !matches!(state, "Z" | "X" | "x") && pid != 2 && parent != Some(2)
}

/// The folder the environment `bytes` (as `/proc/<pid>/environ` holds it) marks its process as
/// started in by a task command, if it does.
fn marker_in(bytes: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let prefix = format!("{COMMAND_MARKER}=");
    bytes
        .split(|b| *b == 0)
        .find_map(|var| var.strip_prefix(prefix.as_bytes()))
        .map(|dir| PathBuf::from(std::ffi::OsStr::from_bytes(dir)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_is_read_from_an_environment_block() {
        let block = b"A=1\0AGENT_ENV_TASK_COMMAND_DIR=/s/box\0B=2\0";
        assert_eq!(marker_in(block), Some(PathBuf::from("/s/box")));
        assert_eq!(marker_in(b"A=1\0B=2\0"), None);
    }

    #[test]
    fn zombies_and_kernel_threads_are_not_waited_for() {
        assert!(is_live_user_process(700, "700 (sleep) S 1 700 700 0"));
        assert!(is_live_user_process(701, "701 (a) b (c)) R 650 1 1 0"));
        assert!(!is_live_user_process(702, "702 (sleep) Z 1 700 700 0"));
        assert!(!is_live_user_process(703, "703 (kworker/0:1) I 2 0 0 0"));
        assert!(!is_live_user_process(2, "2 (kthreadd) S 0 0 0 0"));
    }

    #[test]
    fn a_mark_covers_the_processes_started_after_it() {
        let mark = PidMark::now();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = libc::pid_t::try_from(child.id()).unwrap();
        assert!(candidates(&mark).contains(&pid), "{pid} not looked at");
        assert!(candidates(&PidMark::none()).contains(&pid));
        // A mark made from the process's own id covers it (and what it starts).
        assert!(candidates(&PidMark::before(pid)).contains(&pid));
        if mark.last.is_some() {
            assert!(
                !candidates(&PidMark::now()).contains(&pid),
                "started before the mark"
            );
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn stop_in_kills_only_what_was_started_in_the_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let inside = tmp.path().join("box");
        let outside = tmp.path().join("other");
        std::fs::create_dir_all(inside.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let mark = PidMark::now();
        let start = |marked_as: &Path| {
            std::process::Command::new("sleep")
                .arg("30")
                .env(COMMAND_MARKER, marked_as)
                .spawn()
                .unwrap()
        };
        let mut ours = start(&inside.join("sub"));
        let mut theirs = start(&outside);
        // Wait until the kernel shows each one's environment (set as the exec completes).
        for child in [&ours, &theirs] {
            let environ = format!("/proc/{}/environ", child.id());
            while !std::fs::read(&environ).is_ok_and(|b| marker_in(&b).is_some()) {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        assert_eq!(stop_in(&inside, &mark), 1);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(ours.wait().unwrap().signal(), Some(libc::SIGKILL));
        assert!(
            theirs.try_wait().unwrap().is_none(),
            "not started in the box"
        );
        theirs.kill().unwrap();
        theirs.wait().unwrap();
    }
}
