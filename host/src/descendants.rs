//! The plugin's descendants that left its process group: found through `/proc` before the plugin is
//! stopped, killed after it.
//!
//! Killing the plugin's process group misses a descendant that called `setsid` (or `setpgid`). Linux
//! lets an unprivileged process see the whole tree in `/proc/<pid>/stat` (the parent pid is field 4),
//! so the host takes a snapshot of every descendant of the plugin while the plugin still runs (once
//! it has exited, its orphans have been handed to agent-env, the child subreaper, and no longer say
//! whose they were). Each is remembered with its start time (field 22), so a pid that the kernel
//! reused for an unrelated process by the time of the sweep is left alone. Cgroups would also catch
//! descendants started after the snapshot, but an unprivileged user can rarely create one (it needs
//! a delegated, writable cgroup subtree), so this is what works everywhere on Linux. Where `/proc`
//! is missing (other systems) the snapshot is empty and only the process-group kill applies.

use std::fs;
use std::thread;
use std::time::{Duration, Instant};

/// A process seen in the snapshot: its pid and its start time in clock ticks after boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Descendant {
    pid: i32,
    start: u64,
}

/// The pid, parent pid and start time of `pid`, from `/proc/<pid>/stat`.
fn stat(pid: i32) -> Option<(i32, u64, char)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces and parentheses: fields restart after the last ')'.
    let rest = text.get(text.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, start, state))
}

/// The pid, parent pid and start time of every process `/proc` showed at one moment. Reading it
/// costs about 10 µs a process, so a host stopping many plugins at once reads it once for all of them
/// ([`ProcessTable::descendants_of`]) instead of once a plugin.
#[derive(Debug, Default)]
pub(crate) struct ProcessTable {
    rows: Vec<(i32, i32, u64)>,
}

impl ProcessTable {
    /// Every process `/proc` shows now (none where there is no `/proc`).
    pub(crate) fn read() -> ProcessTable {
        let Ok(dir) = fs::read_dir("/proc") else {
            return ProcessTable::default();
        };
        let rows = dir
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(|pid| stat(pid).map(|(ppid, start, _)| (pid, ppid, start)))
            .collect();
        ProcessTable { rows }
    }

    /// Every descendant of `root` in the table (not `root` itself).
    pub(crate) fn descendants_of(&self, root: i32) -> Vec<Descendant> {
        let mut found = Vec::new();
        let mut parents = vec![root];
        while let Some(parent) = parents.pop() {
            for &(pid, ppid, start) in &self.rows {
                if ppid == parent && !found.iter().any(|d: &Descendant| d.pid == pid) {
                    found.push(Descendant { pid, start });
                    parents.push(pid);
                }
            }
        }
        found
    }
}

/// Every live descendant of `root` (not `root` itself), as `/proc` shows them now.
pub(crate) fn snapshot(root: i32) -> Vec<Descendant> {
    ProcessTable::read().descendants_of(root)
}

/// The processes of `snapshot` that still run (the same process: same start time, not a zombie).
pub(crate) fn still_running(snapshot: &[Descendant]) -> Vec<i32> {
    snapshot
        .iter()
        .filter(
            |d| matches!(stat(d.pid), Some((_, start, state)) if start == d.start && state != 'Z'),
        )
        .map(|d| d.pid)
        .collect()
}

/// The live (not zombie) members of process group `group`, as `/proc` shows them now.
pub(crate) fn group_members(group: i32) -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| matches!(process_group(pid), Some((pgrp, state)) if pgrp == group && state != 'Z'))
        .collect()
}

/// The process group and state of `pid`, from `/proc/<pid>/stat` (field 5).
fn process_group(pid: i32) -> Option<(i32, char)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = text.get(text.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    Some((fields.get(2)?.parse().ok()?, state))
}

/// The command line of `pid`, for messages (`(unknown)` once it is gone).
pub(crate) fn command_line(pid: i32) -> String {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let text: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|part| !part.is_empty())
        .map(|part| String::from_utf8_lossy(part).into_owned())
        .collect();
    if text.is_empty() {
        "(unknown)".into()
    } else {
        text.join(" ")
    }
}

/// Kills every process of `snapshot` that still runs (the same process: same start time), and reaps
/// those handed to agent-env, waiting at most `timeout` for them to go.
pub(crate) fn kill_all(snapshot: &[Descendant], timeout: Duration) {
    let same = |d: &Descendant| matches!(stat(d.pid), Some((_, start, state)) if start == d.start && state != 'Z');
    let live: Vec<Descendant> = snapshot.iter().copied().filter(same).collect();
    if live.is_empty() {
        return;
    }
    for d in &live {
        // SAFETY: kill on a pid whose start time was just checked; the window for reuse between the
        // check and the signal is a few microseconds of a pid the kernel recycles last.
        unsafe {
            libc::kill(d.pid, libc::SIGKILL);
        }
    }
    let deadline = Instant::now() + timeout;
    loop {
        for d in &live {
            let mut status = 0;
            // SAFETY: waitpid with WNOHANG on a pid that is our child only if it was reparented to us.
            unsafe {
                libc::waitpid(d.pid, &mut status, libc::WNOHANG);
            }
        }
        if !live.iter().any(same) || Instant::now() >= deadline {
            return;
        }
        thread::sleep(Duration::from_millis(2));
    }
}
