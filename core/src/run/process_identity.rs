//! Which process a run is, told apart from any other that later has its pid: its pid, when it
//! started (field 22 of `/proc/<pid>/stat`, in clock ticks since the machine booted) and the boot it
//! started in (`/proc/sys/kernel/random/boot_id`). A run journal records it, so that a journal whose
//! lock says nothing of its run (a copy of the state folder, taken while the run went on, holds a
//! new file no process has locked) is still known to be a live run's while that process lives.

use std::path::Path;

/// Where the kernel says which boot this is: a new random id each time the machine starts.
const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";

/// One process on one boot of one machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessIdentity {
    pid: u32,
    /// Clock ticks from the boot to the process's start.
    started: u64,
    boot: String,
}

/// What can be told of a recorded process now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessState {
    /// It still runs (the same process, not another with its pid).
    Alive,
    /// It ended, or the machine has restarted since.
    Gone,
    /// This machine shows no `/proc` to tell by.
    Unknown,
}

impl ProcessIdentity {
    /// This process, when `/proc` shows it.
    pub fn of_this_process() -> Option<ProcessIdentity> {
        let pid = std::process::id();
        let started = read_start(pid).ok()?.started;
        let boot = read_boot_id()?;
        Some(ProcessIdentity { pid, started, boot })
    }

    /// The process `pid`, when `/proc` shows it (a zombie included: it tells when it started).
    pub fn of(pid: u32) -> Option<ProcessIdentity> {
        let started = read_start(pid).ok()?.started;
        let boot = read_boot_id()?;
        Some(ProcessIdentity { pid, started, boot })
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// When it started, in clock ticks from the boot.
    pub fn started(&self) -> u64 {
        self.started
    }

    /// Whether it started in the boot the machine is in now (false when that cannot be told).
    pub fn on_this_boot(&self) -> bool {
        read_boot_id().is_some_and(|boot| boot == self.boot)
    }

    /// The identity as a journal line holds it: `<pid>\t<start>\t<boot id>`.
    pub fn to_fields(&self) -> String {
        format!("{}\t{}\t{}", self.pid, self.started, self.boot)
    }

    /// Reads what [`ProcessIdentity::to_fields`] wrote; `None` for anything else.
    pub fn from_fields(fields: &str) -> Option<ProcessIdentity> {
        let mut parts = fields.split('\t');
        let pid = parts.next()?.parse().ok()?;
        let started = parts.next()?.parse().ok()?;
        let boot = parts.next()?.trim().to_string();
        (parts.next().is_none() && !boot.is_empty()).then_some(ProcessIdentity {
            pid,
            started,
            boot,
        })
    }

    /// Whether the process still runs.
    pub fn state(&self) -> ProcessState {
        let Some(boot) = read_boot_id() else {
            return ProcessState::Unknown;
        };
        if boot != self.boot {
            return ProcessState::Gone;
        }
        match read_start(self.pid) {
            Ok(seen) if seen.started == self.started && !seen.ended => ProcessState::Alive,
            Ok(_) => ProcessState::Gone,
            // No such process, as a `/proc` that shows this one says.
            Err(_) if Path::new("/proc/self/stat").exists() => ProcessState::Gone,
            Err(_) => ProcessState::Unknown,
        }
    }
}

/// What `/proc/<pid>/stat` says of a process's life.
struct Start {
    started: u64,
    /// A zombie: it has ended (its files, and so its locks, are let go) but is not yet reaped.
    ended: bool,
}

/// Reads `/proc/<pid>/stat`. The command name (field 2, in parentheses) may hold spaces and
/// parentheses of its own, so the fields are counted from after its last `)`.
fn read_start(pid: u32) -> std::io::Result<Start> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let unreadable = || std::io::Error::new(std::io::ErrorKind::InvalidData, "unreadable stat");
    let rest = stat.rsplit_once(')').ok_or_else(unreadable)?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Field 3 (the state) is the first after the name, so field 22 is the twentieth.
    let state = fields.first().ok_or_else(unreadable)?;
    let started = fields
        .get(19)
        .and_then(|f| f.parse().ok())
        .ok_or_else(unreadable)?;
    Ok(Start {
        started,
        ended: *state == "Z" || *state == "X",
    })
}

fn read_boot_id() -> Option<String> {
    let id = std::fs::read_to_string(BOOT_ID).ok()?;
    let id = id.trim();
    (!id.is_empty()).then(|| id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_another_start_or_boot_is_not() {
        let me = ProcessIdentity::of_this_process().expect("/proc on this machine");
        assert_eq!(me.state(), ProcessState::Alive);
        let read = ProcessIdentity::from_fields(&me.to_fields()).unwrap();
        assert_eq!(read, me);
        // Its pid, taken by a process started at another time: not the one recorded.
        let reused = ProcessIdentity {
            started: me.started + 1,
            ..me.clone()
        };
        assert_eq!(reused.state(), ProcessState::Gone);
        let other_boot = ProcessIdentity {
            boot: "another-boot".into(),
            ..me.clone()
        };
        assert_eq!(other_boot.state(), ProcessState::Gone);
    }

    #[test]
    fn a_process_that_ended_is_gone() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let started = read_start(pid).unwrap().started;
        child.wait().unwrap();
        let ended = ProcessIdentity {
            pid,
            started,
            boot: read_boot_id().unwrap(),
        };
        assert_eq!(ended.state(), ProcessState::Gone);
    }

    #[test]
    fn only_whole_fields_are_read() {
        assert!(ProcessIdentity::from_fields("12\t34\tboot").is_some());
        for bad in [
            "",
            "12",
            "12\t34",
            "x\t34\tboot",
            "12\t34\t",
            "12\t34\tb\textra",
        ] {
            assert_eq!(ProcessIdentity::from_fields(bad), None, "{bad:?}");
        }
    }
}
