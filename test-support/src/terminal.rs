//! Running a command on a pseudo-terminal, for tests of what a person at a terminal sees (escaped
//! control characters, binary refused, a progress bar drawn in place) rather than what a pipe gets.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// What a command run on a terminal did.
pub struct OnATerminal {
    /// Its exit code (-1 when a signal ended it).
    pub code: i32,
    /// What the terminal showed, as text, each `\r\n` the terminal made of a new line back to `\n`.
    pub shown: String,
    /// Its stderr (a pipe).
    pub stderr: String,
}

/// Runs `cmd` with its stdout on a new pseudo-terminal and its stderr on a pipe, until it exits.
pub fn on_a_terminal(mut cmd: Command) -> OnATerminal {
    let (leader, follower) = open_pty();
    cmd.stdout(Stdio::from(follower)).stderr(Stdio::piped());
    let (mut child, screen) = start(cmd, leader);
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    let code = exit_code(&mut child);
    OnATerminal {
        code,
        shown: screen.finish().replace("\r\n", "\n"),
        stderr,
    }
}

/// Runs `cmd` with its stdout and stderr on one new pseudo-terminal, as a person at a terminal runs
/// it, until it exits: its exit code and every byte the terminal got, escape codes and `\r` as they
/// came.
pub fn on_a_whole_terminal(mut cmd: Command) -> (i32, String) {
    let (leader, follower) = open_pty();
    let stderr = follower.try_clone().expect("a second fd on the terminal");
    cmd.stdout(Stdio::from(follower))
        .stderr(Stdio::from(stderr));
    let (mut child, screen) = start(cmd, leader);
    let code = exit_code(&mut child);
    (code, screen.finish())
}

/// Starts `cmd` with its stderr on a new pseudo-terminal and its stdout discarded, for a test that
/// acts while it runs (a signal once a progress bar is up): the child, and the screen it writes to.
pub fn stderr_on_a_terminal(mut cmd: Command) -> (Child, Screen) {
    let (leader, follower) = open_pty();
    cmd.stdout(Stdio::null()).stderr(Stdio::from(follower));
    start(cmd, leader)
}

/// Starts `cmd` with its stdin, stdout and stderr on one new pseudo-terminal, as a person at a
/// terminal runs it, for a test that acts while it runs (a signal once a question is asked): the
/// child, and the screen it writes to. Nothing is typed: a read of stdin waits.
pub fn all_on_a_terminal(mut cmd: Command) -> (Child, Screen) {
    let (leader, follower) = open_pty();
    let stdout = follower.try_clone().expect("a second fd on the terminal");
    let stderr = follower.try_clone().expect("a third fd on the terminal");
    cmd.stdin(Stdio::from(follower))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr));
    start(cmd, leader)
}

/// The leader side of a pseudo-terminal, read on a thread of its own as the command writes.
pub struct Screen {
    shown: Arc<Mutex<Vec<u8>>>,
    reader: JoinHandle<()>,
}

impl Screen {
    /// What the terminal got so far, raw.
    pub fn so_far(&self) -> String {
        String::from_utf8_lossy(&self.shown.lock().expect("the screen")).into_owned()
    }

    /// Everything the terminal got, once the command's end of it is closed.
    pub fn finish(self) -> String {
        let Screen { shown, reader } = self;
        reader.join().expect("the terminal's reader");
        let bytes = shown.lock().expect("the screen");
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// A new pseudo-terminal: its leader and follower.
fn open_pty() -> (OwnedFd, OwnedFd) {
    let (mut leader, mut follower) = (0, 0);
    // SAFETY: openpty writes the two fds it opens; the name, termios and window size may be null.
    let opened = unsafe {
        libc::openpty(
            &mut leader,
            &mut follower,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(opened, 0, "no pseudo-terminal");
    // SAFETY: both fds were just opened, and nothing else owns them.
    unsafe { (OwnedFd::from_raw_fd(leader), OwnedFd::from_raw_fd(follower)) }
}

/// Spawns `cmd`, whose streams were pointed at the follower, and reads the `leader`.
fn start(mut cmd: Command, leader: OwnedFd) -> (Child, Screen) {
    let child = cmd.spawn().expect("start the command");
    // The command holds the parent's copies of the follower: dropped, the child's are the last.
    drop(cmd);
    let shown = Arc::new(Mutex::new(Vec::new()));
    let mut terminal = std::fs::File::from(leader);
    let reader = {
        let shown = shown.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            // The read fails (EIO) once the child's end is closed.
            while let Ok(n) = terminal.read(&mut buf) {
                if n == 0 {
                    break;
                }
                shown
                    .lock()
                    .expect("the screen")
                    .extend_from_slice(&buf[..n]);
            }
        })
    };
    (child, Screen { shown, reader })
}

fn exit_code(child: &mut Child) -> i32 {
    child
        .wait()
        .expect("wait for the command")
        .code()
        .unwrap_or(-1)
}
