//! Starting the child: resolving the executable, the environment, the process group, parent-death
//! signal, and (in command mode) the protocol fds 3 and 4.
//!
//! `PR_SET_PDEATHSIG` fires when the parent *thread* ends, not the parent process, so every child is
//! started from one long-lived spawner thread instead of the caller's (which may be a short-lived
//! worker). On Linux the child is started the way posix_spawn starts one (`clone_exec.rs`), since
//! std's `Command` would fork the whole host to set the death signal; the cost is measured by
//! `agent-env-bench host`.

use std::io;

use crate::config::HostConfig;
use std::ffi::OsString;
use std::io::{PipeReader, PipeWriter};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::PermissionsExt;
#[cfg(not(target_os = "linux"))]
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
#[cfg(not(target_os = "linux"))]
use std::process::Command;
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

/// Where a command-mode plugin speaks the protocol, as messages about one that did not answer say it.
pub fn command_mode_contract() -> String {
    let (reads, writes) = COMMAND_MODE_FDS;
    format!(
        "in command mode (a CLI command) a plugin speaks the protocol on file descriptors {reads} and {writes} \
         ({RPC_FDS_VAR}={reads},{writes}), not on stdin and stdout, which are the terminal's: every SDK does \
         this by itself; a hand-written plugin must read requests from fd {reads} and write answers to fd {writes}"
    )
}

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

/// The `PATH` a bare executable name was looked for on.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchedPath {
    /// `PATH`'s folders, as the variable writes them.
    Folders(String),
    /// `PATH` is not set, so no folder was searched.
    Unset,
}

/// Why an executable cannot be used when a folder on its path may not be searched.
pub(crate) const FOLDER_NOT_SEARCHABLE: &str =
    "a folder on its path may not be searched by this user (permission denied)";

/// Where [`resolve_executable`] looked for `program`: for a bare name, this process's `PATH`;
/// `None` for a path.
pub(crate) fn searched_path(program: &str) -> Option<SearchedPath> {
    if program.is_empty() || program.contains('/') {
        return None;
    }
    Some(match std::env::var_os("PATH") {
        Some(path) => SearchedPath::Folders(path.to_string_lossy().into_owned()),
        None => SearchedPath::Unset,
    })
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
    let not_executable = |reason: &str| ResolveError::NotExecutable {
        path: path.clone(),
        reason: reason.into(),
    };
    // Only a file that is not there is "not found": a folder on the way that may not be searched
    // (or a loop of links) is the folder's to fix, not the manifest's.
    let meta = match std::fs::metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(ResolveError::NotFound(program.into()))
        }
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Err(not_executable(FOLDER_NOT_SEARCHABLE))
        }
        Err(e) => return Err(not_executable(&format!("it cannot be looked at: {e}"))),
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
    /// Normal mode: our ends of the child's stdin, stdout and stderr.
    Stdio {
        stdin: PipeWriter,
        stdout: PipeReader,
        stderr: PipeReader,
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

/// Where a command-mode child's stdin, stdout and stderr go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Terminal {
    /// agent-env's own: the child shares the terminal and agent-env's process group (a command run
    /// by a user).
    Shared,
    /// None: stdin reads `/dev/null`, stdout and stderr are pipes for the caller to read, and the
    /// child leads a process group of its own (a command-mode start being checked).
    Withheld,
}

/// A command-mode child started with [`Terminal::Withheld`]: the pipes its stdout and stderr write to.
pub struct WithheldTerminal {
    pub stdout: PipeReader,
    pub stderr: PipeReader,
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
    launch_with(spec, executable, config, Terminal::Shared).map(|(launched, _)| launched)
}

/// Starts the command-mode child for `spec` as [`launch`] does, but away from the terminal
/// ([`Terminal::Withheld`]): what it writes to stdout and stderr is the caller's to read.
pub fn launch_off_terminal(
    spec: &SpawnSpec,
    executable: &Path,
    config: &HostConfig,
) -> Result<(Launched, WithheldTerminal), LaunchError> {
    let (launched, withheld) = launch_with(spec, executable, config, Terminal::Withheld)?;
    match withheld {
        Some(withheld) => Ok((launched, withheld)),
        None => Err(LaunchError::Io(io::Error::other(
            "the plugin was not started in command mode",
        ))),
    }
}

fn launch_with(
    spec: &SpawnSpec,
    executable: &Path,
    config: &HostConfig,
    terminal: Terminal,
) -> Result<(Launched, Option<WithheldTerminal>), LaunchError> {
    // The child's ends: given to it at their numbers, and closed here once it has started (or it
    // would never see the end of its input).
    let mut child_ends: Vec<(OwnedFd, RawFd)> = Vec::new();
    let mut withheld = None;
    if spec.command_mode && terminal == Terminal::Withheld {
        let null = std::fs::File::open("/dev/null").map_err(LaunchError::Io)?;
        let (stdout, child_stdout) = io::pipe().map_err(LaunchError::Io)?;
        let (stderr, child_stderr) = io::pipe().map_err(LaunchError::Io)?;
        child_ends.push((null.into(), 0));
        child_ends.push((child_stdout.into(), 1));
        child_ends.push((child_stderr.into(), 2));
        withheld = Some(WithheldTerminal { stdout, stderr });
    }
    let io = if spec.command_mode {
        let (child_reads, to_child) = io::pipe().map_err(LaunchError::Io)?;
        let (from_child, child_writes) = io::pipe().map_err(LaunchError::Io)?;
        widen_pipe(to_child.as_raw_fd());
        widen_pipe(from_child.as_raw_fd());
        child_ends.push((child_reads.into(), COMMAND_MODE_FDS.0));
        child_ends.push((child_writes.into(), COMMAND_MODE_FDS.1));
        ChildIo::Fds {
            to_child,
            from_child,
        }
    } else {
        let (child_stdin, stdin) = io::pipe().map_err(LaunchError::Io)?;
        let (stdout, child_stdout) = io::pipe().map_err(LaunchError::Io)?;
        let (stderr, child_stderr) = io::pipe().map_err(LaunchError::Io)?;
        widen_pipe(stdin.as_raw_fd());
        widen_pipe(stdout.as_raw_fd());
        child_ends.push((child_stdin.into(), 0));
        child_ends.push((child_stdout.into(), 1));
        child_ends.push((child_stderr.into(), 2));
        ChildIo::Stdio {
            stdin,
            stdout,
            stderr,
        }
    };
    // Normal mode: its own group, so a terminal Ctrl-C reaches agent-env, which shuts plugins down
    // cleanly, and signals to the group reach grandchildren too. Command mode stays in ours so that
    // the plugin can use the terminal, unless it is kept from the terminal.
    let own_group = !spec.command_mode || withheld.is_some();
    let fds: Vec<(RawFd, RawFd)> = child_ends
        .iter()
        .map(|(fd, number)| (fd.as_raw_fd(), *number))
        .collect();
    let start = Start::new(
        executable,
        spec.argv.get(1..).unwrap_or_default(),
        child_environment(spec, config),
        &fds,
        own_group,
    )
    .map_err(LaunchError::Io)?;
    let keep = child_ends.into_iter().map(|(fd, _)| fd).collect();
    let pid = spawn_on_spawner_thread(start, keep, config.start_timeout)?;
    Ok((Launched { pid, io, own_group }, withheld))
}

/// The child's whole environment: what the environment policy lets through, then the protocol's own
/// variables.
fn child_environment(spec: &SpawnSpec, config: &HostConfig) -> Vec<(OsString, OsString)> {
    let parent: Vec<(OsString, OsString)> = match &config.parent_env {
        Some(vars) => vars.clone(),
        None => std::env::vars_os().collect(),
    };
    let ours = [
        COOKIE_VAR,
        PROTOCOL_VERSIONS_VAR,
        HOST_VERSION_VAR,
        PACKAGE_VAR,
        RPC_FDS_VAR,
    ];
    let mut env = crate::env_policy::plugin_env(parent, &spec.env, &spec.argv);
    env.retain(|(key, _)| !ours.iter().any(|var| key == var));
    env.push((COOKIE_VAR.into(), COOKIE_VALUE.into()));
    env.push((
        PROTOCOL_VERSIONS_VAR.into(),
        ProtocolRange::ours().to_env().into(),
    ));
    env.push((HOST_VERSION_VAR.into(), config.host_version.clone().into()));
    env.push((PACKAGE_VAR.into(), spec.package.clone().into()));
    if spec.command_mode {
        env.push((
            RPC_FDS_VAR.into(),
            format!("{},{}", COMMAND_MODE_FDS.0, COMMAND_MODE_FDS.1).into(),
        ));
    }
    env
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

/// A child ready to start on the spawner thread.
struct Start {
    #[cfg(target_os = "linux")]
    plan: crate::clone_exec::ExecPlan,
    #[cfg(not(target_os = "linux"))]
    command: Command,
}

impl Start {
    fn new(
        executable: &Path,
        args: &[String],
        env: Vec<(OsString, OsString)>,
        fds: &[(RawFd, RawFd)],
        own_group: bool,
    ) -> io::Result<Start> {
        #[cfg(target_os = "linux")]
        {
            let mut plan = crate::clone_exec::ExecPlan::new(executable, args, env)?;
            for (ours, theirs) in fds {
                plan.fd(*ours, *theirs);
            }
            if own_group {
                plan.new_group();
            }
            Ok(Start { plan })
        }
        #[cfg(not(target_os = "linux"))]
        {
            if fds.len() > crate::fd_numbers::MAX_FDS {
                return Err(io::Error::other(format!(
                    "at most {} fds can be passed to a plugin",
                    crate::fd_numbers::MAX_FDS
                )));
            }
            let mut command = Command::new(executable);
            command.args(args).env_clear().envs(env);
            if own_group {
                command.process_group(0);
            }
            install_fd_hook(&mut command, fds.to_vec());
            Ok(Start { command })
        }
    }

    /// Starts the child; its pid.
    fn spawn(self) -> io::Result<u32> {
        #[cfg(target_os = "linux")]
        {
            self.plan.spawn()
        }
        #[cfg(not(target_os = "linux"))]
        {
            let mut command = self.command;
            command.spawn().map(|child| child.id())
        }
    }
}

/// Without Linux's parent-death signal: only the fds to put at their numbers, before exec.
#[cfg(not(target_os = "linux"))]
fn install_fd_hook(command: &mut Command, fds: Vec<(RawFd, RawFd)>) {
    let hook = move || -> io::Result<()> {
        // SAFETY: this runs in the forked child before exec, where our ends of the pipes are open.
        if unsafe { crate::fd_numbers::place(&fds) } {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    // SAFETY: the hook only makes async-signal-safe calls and allocates nothing.
    unsafe {
        command.pre_exec(hook);
    }
}

struct SpawnJob {
    start: Start,
    keep: Vec<OwnedFd>,
    reply: SyncSender<io::Result<u32>>,
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
                    for job in rx {
                        let result = job.start.spawn();
                        // Our copies of the child's ends must close now, or the child never sees EOF.
                        drop(job.keep);
                        let _ = job.reply.send(result);
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

fn spawn_on_spawner_thread(
    start: Start,
    keep: Vec<OwnedFd>,
    timeout: Duration,
) -> Result<u32, LaunchError> {
    let Some(spawner) = spawner() else {
        // No spawner thread: spawn here (the parent-death signal is then tied to this thread).
        let child = start.spawn().map_err(LaunchError::Io);
        drop(keep);
        return child;
    };
    let (reply, answer) = mpsc::sync_channel(1);
    let sent = spawner
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .send(SpawnJob { start, keep, reply });
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
                    if let Ok(Ok(pid)) = answer.recv() {
                        // SAFETY: our own unreaped child: its pid cannot have been reused.
                        unsafe {
                            libc::kill(pid as libc::pid_t, libc::SIGKILL);
                            libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), 0);
                        }
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
