//! Starting the child: resolving the executable, the environment, the process group, parent-death
//! signal, and (in command mode) the protocol fds 3 and 4.
//!
//! `PR_SET_PDEATHSIG` fires when the parent *thread* ends, not the parent process, so every child is
//! forked from one long-lived spawner thread instead of the caller's (which may be a short-lived
//! worker). Setting `pre_exec` makes std use fork+exec instead of posix_spawn; the cost is measured
//! by `agent-env-bench host`.

use std::io;

use crate::config::HostConfig;
use std::io::{PipeReader, PipeWriter};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{self, Sender, SyncSender};
use std::sync::{Mutex, OnceLock};
use std::thread;
use std::time::Duration;

use agent_env_protocol::version::{
    ProtocolRange, COOKIE_VALUE, COOKIE_VAR, HOST_VERSION_VAR, PACKAGE_VAR, PROTOCOL_VERSIONS_VAR,
    RPC_FDS_VAR,
};

use super::spec::SpawnSpec;

/// The fds a command-mode plugin reads and writes the protocol on.
pub const COMMAND_MODE_FDS: (i32, i32) = (3, 4);

/// Why the executable cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveError {
    /// Nothing at the path, or the name is not on `PATH`.
    NotFound(String),
    /// The file exists but cannot be run, for `reason`.
    NotExecutable {
        /// The file.
        path: PathBuf,
        /// Why not, e.g. "it is a directory".
        reason: String,
    },
}

/// Finds the file `program` names: a path (anything with a `/`) as is, a bare name on `PATH`.
pub fn resolve_executable(program: &str) -> Result<PathBuf, ResolveError> {
    if program.is_empty() {
        return Err(ResolveError::NotFound("(empty exec)".into()));
    }
    if !program.contains('/') {
        return which::which(program).map_err(|_| ResolveError::NotFound(program.into()));
    }
    let path = PathBuf::from(program);
    let meta = std::fs::metadata(&path).map_err(|_| ResolveError::NotFound(program.into()))?;
    let not_executable = |reason: &str| ResolveError::NotExecutable {
        path: path.clone(),
        reason: reason.into(),
    };
    if meta.is_dir() {
        return Err(not_executable("it is a directory"));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(not_executable("it has no execute permission"));
    }
    Ok(path)
}

/// The child's end of the protocol.
pub enum ChildIo {
    /// Normal mode: the child's stdin, stdout and stderr.
    Stdio {
        stdin: ChildStdin,
        stdout: ChildStdout,
        stderr: ChildStderr,
    },
    /// Command mode: our ends of the pipes on the child's fds 3 (it reads) and 4 (it writes).
    Fds {
        to_child: PipeWriter,
        from_child: PipeReader,
    },
}

/// A started child.
pub struct Launched {
    pub pid: u32,
    pub io: ChildIo,
    /// Whether the child leads its own process group (normal mode).
    pub own_group: bool,
}

/// Why the child did not start.
#[derive(Debug)]
pub enum LaunchError {
    Io(io::Error),
    /// The spawner did not answer within the start timeout.
    Timeout(Duration),
}

/// Starts the child for `spec`, running `executable` with `spec.argv[1..]` and telling it that its
/// host is at `host_version`.
pub fn launch(
    spec: &SpawnSpec,
    executable: &Path,
    config: &HostConfig,
) -> Result<Launched, LaunchError> {
    let (host_version, timeout) = (config.host_version.as_str(), config.start_timeout);
    let mut cmd = Command::new(executable);
    let parent: Vec<(std::ffi::OsString, std::ffi::OsString)> = match &config.parent_env {
        Some(vars) => vars.clone(),
        None => std::env::vars_os().collect(),
    };
    // Only what the environment policy lets through, then the protocol's own variables.
    cmd.args(spec.argv.iter().skip(1))
        .env_clear()
        .envs(crate::env_policy::child_env(parent, &spec.env))
        .env(COOKIE_VAR, COOKIE_VALUE)
        .env(PROTOCOL_VERSIONS_VAR, ProtocolRange::ours().to_env())
        .env(HOST_VERSION_VAR, host_version)
        .env(PACKAGE_VAR, &spec.package);
    let mut keep_until_spawned: Vec<OwnedFd> = Vec::new();
    let mut our_ends = None;
    let mut remap = None;
    if spec.command_mode {
        let (child_reads, to_child) = io::pipe().map_err(LaunchError::Io)?;
        let (from_child, child_writes) = io::pipe().map_err(LaunchError::Io)?;
        remap = Some((child_reads.as_raw_fd(), child_writes.as_raw_fd()));
        keep_until_spawned.push(child_reads.into());
        keep_until_spawned.push(child_writes.into());
        widen_pipe(to_child.as_raw_fd());
        widen_pipe(from_child.as_raw_fd());
        our_ends = Some((to_child, from_child));
        cmd.env(
            RPC_FDS_VAR,
            format!("{},{}", COMMAND_MODE_FDS.0, COMMAND_MODE_FDS.1),
        );
    } else {
        cmd.env_remove(RPC_FDS_VAR)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own group: a terminal Ctrl-C reaches agent-env, which shuts plugins down cleanly,
            // and signals to the group reach grandchildren too. Command mode stays in ours so that
            // the plugin can use the terminal.
            .process_group(0);
    }
    install_pre_exec(&mut cmd, remap);
    let mut child = spawn_on_spawner_thread(cmd, keep_until_spawned, timeout)?;
    let pid = child.id();
    if let (Some(stdin), Some(stdout)) = (&child.stdin, &child.stdout) {
        widen_pipe(stdin.as_raw_fd());
        widen_pipe(stdout.as_raw_fd());
    }
    let io = match our_ends {
        Some((to_child, from_child)) => ChildIo::Fds {
            to_child,
            from_child,
        },
        None => match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
            (Some(stdin), Some(stdout), Some(stderr)) => ChildIo::Stdio {
                stdin,
                stdout,
                stderr,
            },
            _ => {
                return Err(LaunchError::Io(io::Error::other(
                    "the child's pipes are missing",
                )))
            }
        },
    };
    Ok(Launched {
        pid,
        io,
        own_group: !spec.command_mode,
    })
}

/// Raises a pipe's capacity to 1 MiB (Linux), so a large message crosses in far fewer wake-ups.
/// Best effort: the system limit (`/proc/sys/fs/pipe-max-size`) may be lower.
fn widen_pipe(fd: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: fcntl on a pipe fd we own.
    unsafe {
        libc::fcntl(fd, libc::F_SETPIPE_SZ, 1024 * 1024);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

fn install_pre_exec(cmd: &mut Command, remap: Option<(i32, i32)>) {
    // SAFETY: getpid is async-signal-safe and runs here, in the parent.
    let parent = unsafe { libc::getpid() };
    let hook = move || -> io::Result<()> {
        // Only async-signal-safe calls below: this runs in the forked child before exec.
        #[cfg(target_os = "linux")]
        // SAFETY: prctl and getppid are async-signal-safe.
        unsafe {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                // The host died between fork and prctl.
                return Err(io::Error::other(
                    "agent-env exited while starting the plugin",
                ));
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = parent;
        if let Some((read_fd, write_fd)) = remap {
            // SAFETY: fcntl and dup2 are async-signal-safe; the fds are valid in the child.
            unsafe {
                // Move both out of the way first: a source may already sit on 3 or 4.
                let r = libc::fcntl(read_fd, libc::F_DUPFD_CLOEXEC, 10);
                let w = libc::fcntl(write_fd, libc::F_DUPFD_CLOEXEC, 10);
                if r < 0
                    || w < 0
                    || libc::dup2(r, COMMAND_MODE_FDS.0) < 0
                    || libc::dup2(w, COMMAND_MODE_FDS.1) < 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        Ok(())
    };
    // SAFETY: the hook only makes async-signal-safe calls and allocates nothing.
    unsafe {
        cmd.pre_exec(hook);
    }
}

struct SpawnJob {
    cmd: Command,
    keep: Vec<OwnedFd>,
    reply: SyncSender<io::Result<Child>>,
}

fn spawner() -> Option<&'static Mutex<Sender<SpawnJob>>> {
    static SPAWNER: OnceLock<Option<Mutex<Sender<SpawnJob>>>> = OnceLock::new();
    SPAWNER
        .get_or_init(|| {
            become_subreaper();
            let (tx, rx) = mpsc::channel::<SpawnJob>();
            thread::Builder::new()
                .name("agent-env-spawner".into())
                .spawn(move || {
                    for mut job in rx {
                        let result = job.cmd.spawn();
                        // Our copies of the child's ends must close now, or the child never sees EOF.
                        job.keep.clear();
                        let _ = job.reply.send(result);
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

fn spawn_on_spawner_thread(
    mut cmd: Command,
    keep: Vec<OwnedFd>,
    timeout: Duration,
) -> Result<Child, LaunchError> {
    let Some(spawner) = spawner() else {
        // No spawner thread: spawn here (the parent-death signal is then tied to this thread).
        let child = cmd.spawn().map_err(LaunchError::Io);
        drop(keep);
        return child;
    };
    let (reply, answer) = mpsc::sync_channel(1);
    let sent = spawner
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .send(SpawnJob { cmd, keep, reply });
    if sent.is_err() {
        return Err(LaunchError::Io(io::Error::other(
            "agent-env's spawner thread has stopped",
        )));
    }
    match answer.recv_timeout(timeout) {
        Ok(result) => result.map_err(LaunchError::Io),
        Err(_) => {
            // Too late for the caller; if the child does start, nobody owns it: end it here.
            let _ = thread::Builder::new()
                .name("agent-env-late-spawn".into())
                .spawn(move || {
                    if let Ok(Ok(mut child)) = answer.recv() {
                        let _ = child.kill();
                        let _ = child.wait();
                    }
                });
            Err(LaunchError::Timeout(timeout))
        }
    }
}

/// Makes agent-env the reaper of its plugins' orphaned descendants (Linux), so that a grandchild
/// left behind by a plugin is reaped by the host's shutdown instead of lingering as a zombie under
/// an init that may not reap.
fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: a plain prctl on the calling process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    }
}
