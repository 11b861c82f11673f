//! Running the plugin: the run-by-hand guard, moving stdout aside, the protocol loop, exit.

use std::fs::File;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use agent_env_protocol::peer::{Peer, PeerConfig};
use agent_env_protocol::version::{COOKIE_VALUE, COOKIE_VAR, PRINT_MANIFEST_ARG, RPC_FDS_VAR};

use crate::plugin::Plugin;

/// Exit status when run by hand (without agent-env's cookie) or misused.
pub const EXIT_NOT_STARTED_BY_AGENT_ENV: i32 = 2;

/// Once `shutdown` comes or stdin ends, how long the calls still running (all cancelled at once:
/// [`StepContext::is_cancelled`](crate::StepContext::is_cancelled)) have to return, and after
/// `shutdown` how long the host has to close stdin, before the plugin drops its stores and exits 0.
/// The same in every SDK (docs/protocol.md §3), and inside the 2 s the host waits for the exit.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

impl Plugin {
    /// Serves the protocol until the host shuts the plugin down or goes away, then exits the process
    /// with 0: the calls still running when `shutdown` comes or stdin ends are cancelled and get
    /// [`SHUTDOWN_GRACE`] to return, then the open stores are dropped.
    pub fn serve(self) -> ! {
        let code = self.run();
        std::process::exit(code)
    }

    /// As [`Plugin::serve`], but returns the exit code instead of exiting.
    pub fn run(self) -> i32 {
        let args: Vec<String> = std::env::args().skip(1).collect();
        if args.len() == 1 && args[0] == PRINT_MANIFEST_ARG {
            return self.print_manifest();
        }
        if std::env::var(COOKIE_VAR).ok().as_deref() != Some(COOKIE_VALUE) {
            eprintln!(
                "{name} {version} is an agent-env plugin; agent-env starts it (try agent-env plugin show {name})",
                name = self.name,
                version = self.version
            );
            return EXIT_NOT_STARTED_BY_AGENT_ENV;
        }
        let streams = match std::env::var(RPC_FDS_VAR) {
            Ok(fds) => command_mode_streams(&fds),
            Err(_) => take_stdio(),
        };
        let (reader, writer) = match streams {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{}: cannot set up the protocol streams: {e}", self.name);
                return 1;
            }
        };
        let config = PeerConfig {
            name: self.name.clone(),
            ..PeerConfig::default()
        };
        let dispatcher = self.into_dispatcher();
        let peer = Peer::start(reader, writer, dispatcher.clone(), config);
        let done = dispatcher.wait_done();
        // The plugin's side of the shutdown (docs/protocol.md §3): the calls still running are
        // cancelled, `shutdown` is answered at once, and they and the end of stdin are waited for
        // until the grace ends.
        let deadline = Instant::now() + SHUTDOWN_GRACE;
        dispatcher.stop_all();
        if done.shutdown && !done.closed {
            // The answer to shutdown is on its way; the host closes stdin next.
            peer.wait_closed(Some(deadline.saturating_duration_since(Instant::now())));
        }
        dispatcher.wait_idle(deadline);
        dispatcher.close_stores();
        0
    }

    fn print_manifest(&self) -> i32 {
        match &self.manifest {
            Some(toml) => {
                print!("{toml}");
                0
            }
            None => {
                eprintln!(
                    "{} {} has no built-in manifest; install it with its agent-env-plugin.toml",
                    self.name, self.version
                );
                EXIT_NOT_STARTED_BY_AGENT_ENV
            }
        }
    }
}

fn dup_cloexec(fd: RawFd) -> io::Result<File> {
    // SAFETY: fcntl on an fd of this process; the new fd is owned by the File.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` is a fresh fd nobody else owns.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(new) }))
}

/// Takes stdin and stdout for the protocol (as private, close-on-exec copies) and points fd 0 at
/// /dev/null and fd 1 at stderr, so neither a stray print nor a child process can touch the protocol.
fn take_stdio() -> io::Result<(File, File)> {
    let reader = dup_cloexec(0)?;
    let writer = dup_cloexec(1)?;
    let null = File::open("/dev/null")?;
    // SAFETY: dup2 onto the standard fds of this process.
    unsafe {
        if libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), 0) < 0 || libc::dup2(2, 1) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok((reader, writer))
}

/// Command mode: the protocol on the fds named by `AGENT_ENV_RPC_FDS` (`read,write`).
fn command_mode_streams(fds: &str) -> io::Result<(File, File)> {
    let parsed = fds.split_once(',').and_then(|(r, w)| {
        Some((
            r.trim().parse::<RawFd>().ok()?,
            w.trim().parse::<RawFd>().ok()?,
        ))
    });
    let Some((read_fd, write_fd)) = parsed else {
        return Err(io::Error::other(format!(
            "{RPC_FDS_VAR} is '{fds}'; expected two fds such as 3,4"
        )));
    };
    // Private close-on-exec copies, so the command's own child processes do not inherit them.
    let reader = dup_cloexec(read_fd)?;
    let writer = dup_cloexec(write_fd)?;
    // SAFETY: closing the originals, which this process owns and no longer uses.
    unsafe {
        libc::close(read_fd);
        libc::close(write_fd);
    }
    Ok((reader, writer))
}
