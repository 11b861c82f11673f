//! Watching the child's exit by wait status, and signalling it without racing the reaper.
//!
//! The wait status, not end of file on stdout, says a plugin has ended: a grandchild that inherited
//! stdout can keep the pipe open long after the plugin died. One thread per child blocks in
//! `waitid(WNOWAIT)`, then reaps under a lock; signals are sent under the same lock and only while
//! the child is unreaped, so a recycled pid is never signalled.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use serde::Serialize;

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// It exited with this code.
    Exited(i32),
    /// This signal ended it.
    Signaled(i32),
}

impl Ended {
    /// How it ended, as the end of a sentence: "exited with code 3".
    pub fn describe(&self) -> String {
        match self {
            Ended::Exited(code) => format!("exited with code {code}"),
            Ended::Signaled(sig) => format!("was killed by signal {sig} ({})", signal_name(*sig)),
        }
    }

    /// The exit code, if it exited.
    pub fn exit_code(&self) -> Option<i32> {
        match self {
            Ended::Exited(code) => Some(*code),
            Ended::Signaled(_) => None,
        }
    }

    /// The signal, if one ended it.
    pub fn signal(&self) -> Option<i32> {
        match self {
            Ended::Signaled(sig) => Some(*sig),
            Ended::Exited(_) => None,
        }
    }
}

/// The usual name of a signal number.
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => "unknown signal",
    }
}

struct State {
    ended: Option<Ended>,
}

/// No thread could be started to watch a child's exit; the child was killed.
#[derive(Debug, thiserror::Error)]
#[error("cannot start a thread to watch its exit ({0}); it was stopped")]
pub struct NoReaper(#[source] std::io::Error);

/// The exit of one child.
pub struct ExitWatch {
    pid: i32,
    own_group: bool,
    /// The child leads its group, and the group was seen empty once the child was reaped: its id
    /// may since have gone to another group, which is not signalled.
    group_gone: AtomicBool,
    state: Mutex<State>,
    cv: Condvar,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ExitWatch {
    /// Starts watching `pid` (our unreaped child); `on_exit` runs once, on the watcher thread.
    ///
    /// If no watcher thread can be started, the child is killed and reaped here and the error
    /// returned: a plugin whose exit nobody would see is not kept.
    pub fn start(
        pid: u32,
        own_group: bool,
        name: &str,
        on_exit: impl FnOnce(Ended) + Send + 'static,
    ) -> Result<Arc<ExitWatch>, NoReaper> {
        let watch = Arc::new(ExitWatch {
            pid: pid as i32,
            own_group,
            group_gone: AtomicBool::new(false),
            state: Mutex::new(State { ended: None }),
            cv: Condvar::new(),
        });
        let watcher = watch.clone();
        let run = move || {
            let ended = watcher.wait_and_reap();
            on_exit(ended);
        };
        match thread::Builder::new()
            .name(format!("{name}-reaper"))
            .spawn(run)
        {
            Ok(_) => {
                if own_group {
                    crate::live_groups::joined(&watch);
                }
                Ok(watch)
            }
            Err(e) => {
                watch.signal(libc::SIGKILL);
                watch.wait_and_reap();
                Err(NoReaper(e))
            }
        }
    }

    fn wait_and_reap(&self) -> Ended {
        loop {
            // SAFETY: waitid on our own child with a zeroed siginfo buffer.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            let r = unsafe {
                libc::waitid(
                    libc::P_PID,
                    self.pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOWAIT,
                )
            };
            if r == 0 {
                break;
            }
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break;
            }
        }
        let mut state = lock(&self.state);
        let ended = reap(self.pid).unwrap_or(Ended::Exited(-1));
        // Reaped alone, its group is empty: nothing of it is left to keep the group's id.
        // SAFETY: kill with signal 0 sends nothing.
        if self.own_group && unsafe { libc::kill(-self.pid, 0) } != 0 {
            self.group_gone.store(true, Ordering::SeqCst);
        }
        state.ended = Some(ended);
        self.cv.notify_all();
        ended
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// How it ended, if it has.
    pub fn ended(&self) -> Option<Ended> {
        lock(&self.state).ended
    }

    /// Waits up to `timeout` for the child to end.
    pub fn wait_timeout(&self, timeout: Duration) -> Option<Ended> {
        let deadline = Instant::now() + timeout;
        let mut state = lock(&self.state);
        loop {
            if let Some(ended) = state.ended {
                return Some(ended);
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            state = self
                .cv
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Sends `sig` to the child's process group (or to the child alone in command mode), only while
    /// the child is unreaped. Returns whether it was sent.
    pub fn signal(&self, sig: i32) -> bool {
        let state = lock(&self.state);
        if state.ended.is_some() {
            return false;
        }
        let target = if self.own_group { -self.pid } else { self.pid };
        // SAFETY: the pid is our unreaped child (the lock keeps the reaper out), so it is not recycled.
        unsafe { libc::kill(target, sig) == 0 }
    }

    /// After the child itself is reaped: kills what is left of its process group (grandchildren)
    /// and reaps those that were handed to us, waiting at most `timeout`.
    pub fn kill_leftovers(&self, timeout: Duration) {
        if !self.own_group || self.ended().is_none() {
            return;
        }
        let group = self.pid;
        let deadline = Instant::now() + timeout;
        // SAFETY: kill/waitpid on a process group we created; the group id cannot be reused while
        // any member (even a zombie) exists, and we stop as soon as none does.
        unsafe {
            if libc::kill(-group, 0) != 0 {
                self.group_gone.store(true, Ordering::SeqCst);
                return;
            }
            libc::kill(-group, libc::SIGKILL);
            loop {
                let mut status = 0;
                while libc::waitpid(-group, &mut status, libc::WNOHANG) > 0 {}
                if libc::kill(-group, 0) != 0 {
                    self.group_gone.store(true, Ordering::SeqCst);
                    return;
                }
                if Instant::now() >= deadline {
                    return;
                }
                thread::sleep(Duration::from_millis(2));
            }
        }
    }
}

impl ExitWatch {
    /// SIGKILLs the child's whole process group at once, waiting for nothing: while the child is
    /// unreaped, and after, while its group was not seen empty (grandchildren keep its id, and
    /// agent-env, their subreaper, reaps them only in [`ExitWatch::kill_leftovers`]). Nothing for a
    /// child in agent-env's own group (command mode). Returns whether it sent the signal.
    pub(crate) fn kill_group_now(&self) -> bool {
        if !self.own_group {
            return false;
        }
        let state = lock(&self.state);
        if state.ended.is_some() && self.group_gone.load(Ordering::SeqCst) {
            return false;
        }
        // SAFETY: the group is the child's (unreaped, the lock keeping the reaper out), or one its
        // members still hold; kill(2) has no memory effects.
        unsafe { libc::kill(-self.pid, libc::SIGKILL) == 0 }
    }
}

impl crate::live_groups::WatchedGroup for ExitWatch {
    fn leader(&self) -> i32 {
        self.pid
    }

    fn has_ended(&self) -> bool {
        self.ended().is_some()
    }

    fn kill_group_now(&self) -> bool {
        ExitWatch::kill_group_now(self)
    }
}

impl Drop for ExitWatch {
    fn drop(&mut self) {
        if self.own_group {
            crate::live_groups::left(self as *const ExitWatch as *const ());
        }
    }
}

fn reap(pid: i32) -> Option<Ended> {
    let mut status = 0;
    loop {
        // SAFETY: waitpid on our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            break;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return None;
    }
    if libc::WIFEXITED(status) {
        Some(Ended::Exited(libc::WEXITSTATUS(status)))
    } else if libc::WIFSIGNALED(status) {
        Some(Ended::Signaled(libc::WTERMSIG(status)))
    } else {
        None
    }
}

#[cfg(test)]
mod live_group_tests {
    use super::*;
    use crate::live_groups::{is_listed, watch_plugin_groups};
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    fn gone(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
    }

    /// A plugin-like child leading its own group, whose own child stays in the group: a watcher hears
    /// of the group at once (it is already running), and the group's kill takes both. (The kill of
    /// every group is left to the black-box tests: here it would reach other tests' children.)
    #[test]
    // The child is reaped by its exit watch, as a plugin is.
    #[allow(clippy::zombie_processes)]
    fn a_watcher_hears_of_a_running_group_and_its_kill_takes_the_whole_group() {
        let mut child = Command::new("/bin/sh")
            .args(["-c", "sleep 300 & echo $!; exec sleep 300"])
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        let watch = ExitWatch::start(pid, true, "test", |_| {}).unwrap();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let told = heard.clone();
        let watched = watch_plugin_groups(move |pid| told.lock().unwrap().push(pid));
        assert!(heard.lock().unwrap().contains(&pid));
        assert!(is_listed(pid as i32));
        assert!(watch.kill_group_now());
        assert!(watch.wait_timeout(Duration::from_secs(60)).is_some());
        let deadline = Instant::now() + Duration::from_secs(60);
        while !gone(grandchild) {
            assert!(
                Instant::now() < deadline,
                "the plugin's child outlived the kill"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(watched);
        drop(watch);
        // The reaper lets its hold on the watch go just after the exit it saw.
        while is_listed(pid as i32) {
            assert!(Instant::now() < deadline, "a watch that went stays listed");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
