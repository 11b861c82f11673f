//! What a killed run's plugins left running: the processes still in a process group one of its
//! plugins led. The kernel ends each plugin with agent-env (its parent-death signal), but the
//! children a plugin started keep its group and run on under init; the sweep stops them.
//!
//! A group's id is its plugin's pid, which the kernel may give to another process once the plugin
//! and all of its group are gone. So a group is stopped only while it is still the one the journal
//! noted: on the boot the plugin started in; its pid either unused, or still the plugin's own (the
//! same start time); and every process in it started no earlier than the plugin did. The kernel
//! gives no process a pid that names a group still holding a process, so a group that passes is the
//! plugin's.

use crate::run::process_identity::ProcessIdentity;

/// One process as `/proc/<pid>/stat` shows it: its process group, its start time (clock ticks from
/// the boot) and whether it has ended (a zombie).
struct Seen {
    pid: u32,
    group: u32,
    started: u64,
    ended: bool,
}

/// SIGKILLs the processes still in the process groups the plugins `plugins` led, each group only
/// while it is still theirs (see the module's docs); how many processes it stopped. Only this
/// user's processes can be signalled; without `/proc` nothing is found.
pub(super) fn stop_left(plugins: &[ProcessIdentity]) -> usize {
    if plugins.is_empty() {
        return 0;
    }
    let table = read_table();
    let mut done: Vec<u32> = Vec::new();
    let mut stopped = 0;
    for plugin in plugins {
        let group = plugin.pid();
        if group <= 1 || done.contains(&group) || !plugin.on_this_boot() {
            continue;
        }
        done.push(group);
        // Its pid taken by another process: the plugin and its whole group are gone.
        if table
            .iter()
            .any(|p| p.pid == group && p.started != plugin.started())
        {
            continue;
        }
        let members: Vec<&Seen> = table
            .iter()
            .filter(|p| p.group == group && !p.ended)
            .collect();
        if members.is_empty() || members.iter().any(|p| p.started < plugin.started()) {
            continue;
        }
        let Ok(id) = libc::pid_t::try_from(group) else {
            continue;
        };
        // SAFETY: kill(2) on a process group just checked to be the plugin's; no memory effects.
        if unsafe { libc::kill(-id, libc::SIGKILL) } == 0 {
            stopped += members.len();
        }
    }
    stopped
}

/// Every process `/proc` shows now.
fn read_table() -> Vec<Seen> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(seen)
        .collect()
}

/// Reads `/proc/<pid>/stat`. The command name (field 2, in parentheses) may hold spaces and
/// parentheses of its own, so the fields are counted from after its last `)`.
fn seen(pid: u32) -> Option<Seen> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Field 3 (the state) is the first after the name: field 5 (the group) is the third, field 22
    // (the start time) the twentieth.
    let state = *fields.first()?;
    Some(Seen {
        pid,
        group: fields.get(2)?.parse().ok()?,
        started: fields.get(19)?.parse().ok()?,
        ended: state == "Z" || state == "X",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    fn wait_gone(child: &mut std::process::Child) -> bool {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    /// A group whose leader has gone, held by the child it left: stopped while it is the noted
    /// plugin's; left alone when the noted start is later than its members' (a group that is not
    /// the plugin's) or when the pid is now another process's.
    #[test]
    fn a_group_is_stopped_only_while_it_is_the_noted_plugins() {
        // The leader: this test's own child in a group of its own, so it can be reaped here.
        let mut leader = Command::new("sleep")
            .arg("300")
            .process_group(0)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let noted = ProcessIdentity::of(leader.id()).expect("/proc on this machine");
        let mut member = Command::new("sleep")
            .arg("300")
            .process_group(i32::try_from(leader.id()).unwrap())
            .spawn()
            .unwrap();
        // A plugin noted as started long after these two.
        let later = ProcessIdentity::from_fields(&format!(
            "{}\t{}\t{}",
            noted.pid(),
            noted.started() + 1_000_000,
            noted.to_fields().rsplit('\t').next().unwrap()
        ))
        .unwrap();
        // Another process with its pid (another start): not touched.
        assert_eq!(stop_left(std::slice::from_ref(&later)), 0);
        leader.kill().unwrap();
        leader.wait().unwrap();
        // Members older than the noted plugin: not its group.
        assert_eq!(stop_left(std::slice::from_ref(&later)), 0);
        assert!(member.try_wait().unwrap().is_none());
        // Its group, its leader gone: the member is stopped.
        assert_eq!(stop_left(&[noted.clone(), noted]), 1);
        assert!(
            wait_gone(&mut member),
            "the group's member outlived the sweep"
        );
    }
}
