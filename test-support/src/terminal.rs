//! Running a command with its stdout on a pseudo-terminal, for tests of what a person at a terminal
//! sees (escaped control characters, binary refused) rather than what a pipe gets.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

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
    let (leader, follower) =
        unsafe { (OwnedFd::from_raw_fd(leader), OwnedFd::from_raw_fd(follower)) };
    let mut child = cmd
        .stdout(Stdio::from(follower))
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the command");
    // The command holds the parent's copy of the follower: dropped, the child's is the last.
    drop(cmd);
    let mut terminal = std::fs::File::from(leader);
    let reader = std::thread::spawn(move || {
        let mut shown = Vec::new();
        let mut buf = [0u8; 65536];
        // The read fails (EIO) once the child's end is closed.
        while let Ok(n) = terminal.read(&mut buf) {
            if n == 0 {
                break;
            }
            shown.extend_from_slice(&buf[..n]);
        }
        shown
    });
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    let code = child
        .wait()
        .expect("wait for the command")
        .code()
        .unwrap_or(-1);
    let shown = reader.join().expect("the terminal's reader");
    OnATerminal {
        code,
        shown: String::from_utf8_lossy(&shown).replace("\r\n", "\n"),
        stderr,
    }
}
