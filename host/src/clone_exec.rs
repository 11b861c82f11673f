//! Starting a child the way `posix_spawn` does (Linux): `clone(CLONE_VM | CLONE_VFORK)`, then the few
//! steps posix_spawn cannot take (the parent-death signal and its check) and `execve`.
//!
//! std's `Command` forks as soon as a `pre_exec` hook is set, and a fork copies the page tables of
//! the whole multi-threaded host, after which every write by any of its threads to a shared page is
//! a copy-on-write fault. Measured, that was about 0.7 ms of CPU for each plugin started (half the
//! host's own CPU in `plugin list` with 20 Python plugins). Here the child borrows the parent's memory
//! until it execs, as posix_spawn's does, and the parent thread waits for that.
//!
//! Everything the child touches is prepared before the clone: the child only makes system calls
//! (no allocation, no lock, no Rust panic) and reports a failure through [`ChildArgs`], which it
//! shares with the parent.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use crate::fd_numbers::{self, MAX_FDS};

/// The child's stack: it only makes system calls before its exec.
const STACK_BYTES: usize = 64 * 1024;
/// Signals are numbered 1 to 64 on Linux.
const LAST_SIGNAL: i32 = 64;

/// A child to start: the program, its argv and environment, and where its fds go.
pub(crate) struct ExecPlan {
    program: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    /// (an fd of ours, the number it gets in the child).
    fds: Vec<(RawFd, RawFd)>,
    /// Whether the child leads a process group of its own.
    new_group: bool,
    /// The folder the child starts in; the caller's when `None`.
    cwd: Option<CString>,
}

/// Which step failed in the child, for the error message.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(i32)]
enum Stage {
    None = 0,
    DeathSignal,
    HostGone,
    ProcessGroup,
    Fds,
    Folder,
    Exec,
}

/// What the child reads and writes: prepared by the parent, shared through `CLONE_VM`.
#[repr(C)]
struct ChildArgs {
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    fds: [(RawFd, RawFd); MAX_FDS],
    fd_count: usize,
    new_group: bool,
    /// The folder to enter, or null.
    cwd: *const libc::c_char,
    parent: libc::pid_t,
    /// Set by the child when a step fails: which, and its errno.
    failed_at: Stage,
    errno: i32,
}

impl ExecPlan {
    /// `program` run with `args` (after its `argv[0]`, which is `program` itself) in exactly `env`.
    pub(crate) fn new(
        program: &Path,
        args: &[String],
        env: Vec<(OsString, OsString)>,
    ) -> io::Result<ExecPlan> {
        let program = c_string(program.as_os_str().to_os_string())?;
        let mut argv = vec![program.clone()];
        for arg in args {
            argv.push(c_string(OsString::from(arg))?);
        }
        let mut envp = Vec::with_capacity(env.len());
        for (key, value) in env {
            let mut pair = key;
            pair.push("=");
            pair.push(value);
            envp.push(c_string(pair)?);
        }
        Ok(ExecPlan {
            program,
            argv,
            envp,
            fds: Vec::new(),
            new_group: false,
            cwd: None,
        })
    }

    /// Gives the child `name` as its `argv[0]` instead of the program's path.
    pub(crate) fn arg0(&mut self, name: &OsStr) -> io::Result<&mut Self> {
        self.argv[0] = c_string(name.to_os_string())?;
        Ok(self)
    }

    /// Starts the child in `folder`.
    pub(crate) fn current_dir(&mut self, folder: &Path) -> io::Result<&mut Self> {
        self.cwd = Some(c_string(folder.as_os_str().to_os_string())?);
        Ok(self)
    }

    /// Gives the child `ours` as its fd number `theirs`.
    pub(crate) fn fd(&mut self, ours: RawFd, theirs: RawFd) -> &mut Self {
        self.fds.push((ours, theirs));
        self
    }

    /// Makes the child the leader of a new process group.
    pub(crate) fn new_group(&mut self) -> &mut Self {
        self.new_group = true;
        self
    }

    /// Starts the child and returns its pid once it has exec'd. The child gets `SIGKILL` when the
    /// calling thread ends (`PR_SET_PDEATHSIG`), so call this from a thread that lives as long as the
    /// host. The caller reaps the child.
    pub(crate) fn spawn(&self) -> io::Result<u32> {
        if self.fds.len() > MAX_FDS {
            return Err(io::Error::other(format!(
                "at most {MAX_FDS} fds can be passed to a child process"
            )));
        }
        let argv = null_terminated(&self.argv);
        let envp = null_terminated(&self.envp);
        let mut fds = [(-1, -1); MAX_FDS];
        fds[..self.fds.len()].copy_from_slice(&self.fds);
        let mut args = ChildArgs {
            program: self.program.as_ptr(),
            argv: argv.as_ptr(),
            envp: envp.as_ptr(),
            fds,
            fd_count: self.fds.len(),
            new_group: self.new_group,
            cwd: self.cwd.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
            // SAFETY: getpid has no preconditions.
            parent: unsafe { libc::getpid() },
            failed_at: Stage::None,
            errno: 0,
        };
        let mut stack = vec![0u8; STACK_BYTES];
        // The stack grows down from its end, which clone wants 16-byte aligned.
        let top = (stack.as_mut_ptr() as usize + STACK_BYTES) & !15;
        let pid = with_signals_blocked(|| {
            // SAFETY: `child_main` only makes system calls on `args`, which outlives the call:
            // CLONE_VFORK suspends this thread until the child has exec'd or exited, and the child
            // runs on `stack`, which is not used by anything else meanwhile.
            let pid = unsafe {
                libc::clone(
                    child_main,
                    top as *mut libc::c_void,
                    libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                    std::ptr::addr_of_mut!(args).cast(),
                )
            };
            (pid, io::Error::last_os_error())
        });
        drop(stack);
        let (pid, clone_error) = pid;
        if pid < 0 {
            return Err(clone_error);
        }
        // SAFETY: the child wrote these before it exec'd or exited, and is gone from our memory now.
        let (failed_at, errno) = unsafe {
            (
                std::ptr::read_volatile(std::ptr::addr_of!(args.failed_at)),
                std::ptr::read_volatile(std::ptr::addr_of!(args.errno)),
            )
        };
        if failed_at == Stage::None {
            return Ok(pid as u32);
        }
        // It exited without exec'ing: reap it here, nobody else knows of it.
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        let cause = io::Error::from_raw_os_error(errno);
        Err(match failed_at {
            Stage::HostGone => io::Error::other("agent-env exited while starting the process"),
            Stage::DeathSignal => io::Error::other(format!(
                "cannot set the process's parent-death signal: {cause}"
            )),
            Stage::ProcessGroup => io::Error::other(format!(
                "cannot give the process a group of its own: {cause}"
            )),
            Stage::Fds => io::Error::other(format!("cannot hand the process its pipes: {cause}")),
            Stage::Folder => io::Error::new(
                cause.kind(),
                format!("cannot start the process in its folder: {cause}"),
            ),
            Stage::Exec | Stage::None => cause,
        })
    }
}

fn c_string(text: OsString) -> io::Result<CString> {
    CString::new(text.into_vec()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "an argument or environment variable contains a NUL byte",
        )
    })
}

fn null_terminated(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// Runs `f` with every signal blocked in this thread, so that no handler of ours runs in the child
/// while it shares our memory.
fn with_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: plain signal-mask calls on locals.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut before);
        let out = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
        out
    }
}

/// The child, between clone and exec. System calls only.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's `ChildArgs`, alive and untouched by the parent until we exec or
    // exit; every call below is a plain system call.
    unsafe {
        let args = &mut *arg.cast::<ChildArgs>();
        // A handler of ours must not run here (it would run on the parent's memory): each signal
        // with one goes back to its default before signals are unblocked. SIGPIPE, which the Rust
        // runtime ignores, goes back to its default too, as std's Command does.
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        for sig in 1..=LAST_SIGNAL {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut current) != 0 {
                continue;
            }
            let ignored = current.sa_sigaction == libc::SIG_IGN;
            if current.sa_sigaction == libc::SIG_DFL || (ignored && sig != libc::SIGPIPE) {
                continue;
            }
            libc::sigaction(sig, &default, std::ptr::null_mut());
        }
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            fail(args, Stage::DeathSignal);
        }
        if libc::getppid() != args.parent {
            // The host died before the death signal was set.
            fail(args, Stage::HostGone);
        }
        if args.new_group && libc::setpgid(0, 0) != 0 {
            fail(args, Stage::ProcessGroup);
        }
        if !fd_numbers::place(&args.fds[..args.fd_count]) {
            fail(args, Stage::Fds);
        }
        if !args.cwd.is_null() && libc::chdir(args.cwd) != 0 {
            fail(args, Stage::Folder);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::execve(args.program, args.argv, args.envp);
        fail(args, Stage::Exec)
    }
}

/// Records why the child could not go on and ends it (it never returns).
unsafe fn fail(args: &mut ChildArgs, stage: Stage) -> ! {
    // SAFETY: errno is this thread's; the parent reads `args` only after we exit.
    unsafe {
        args.errno = *libc::__errno_location();
        std::ptr::write_volatile(std::ptr::addr_of_mut!(args.failed_at), stage);
        libc::_exit(127)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::{AsRawFd, OwnedFd};

    /// Runs `sh -c script` in `env` with its stdout on a pipe (and on the other numbers `extra_fds`
    /// names), after `configure`; returns its pid, what it printed and its exit code.
    fn run_sh(
        script: &str,
        env: Vec<(OsString, OsString)>,
        extra_fds: &[RawFd],
        configure: impl FnOnce(&mut ExecPlan),
    ) -> (u32, String, i32) {
        let (mut read, write) = std::io::pipe().unwrap();
        let mut plan =
            ExecPlan::new(Path::new("/bin/sh"), &["-c".into(), script.into()], env).unwrap();
        let write: OwnedFd = write.into();
        for number in [1].iter().chain(extra_fds) {
            plan.fd(write.as_raw_fd(), *number);
        }
        configure(&mut plan);
        let pid = plan.spawn().unwrap();
        drop(write);
        let mut out = String::new();
        read.read_to_string(&mut out).unwrap();
        let mut status = 0;
        // SAFETY: our own child.
        unsafe { libc::waitpid(pid as i32, &mut status, 0) };
        (pid, out, libc::WEXITSTATUS(status))
    }

    #[test]
    fn the_child_runs_with_exactly_the_given_environment_and_fds() {
        let env = vec![(OsString::from("ONLY"), OsString::from("this one"))];
        let script = "echo \"$ONLY|$HOME\"; echo to-four >&4";
        let (_, out, code) = run_sh(script, env, &[4], |_| {});
        assert_eq!(code, 0);
        assert_eq!(out, "this one|\nto-four\n");
    }

    #[test]
    fn a_missing_program_is_an_error() {
        let plan = ExecPlan::new(Path::new("/nonexistent/plugin"), &[], Vec::new()).unwrap();
        let err = plan.spawn().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
    }

    #[test]
    fn the_child_can_lead_a_process_group_of_its_own() {
        // The fifth field of /proc/PID/stat is the process group.
        let script = "set -- $(cut -d' ' -f5 /proc/$$/stat); echo \"$$ $1\"";
        let (pid, out, code) = run_sh(script, Vec::new(), &[], |plan| {
            plan.new_group();
        });
        assert_eq!(code, 0);
        let mut fields = out.split_whitespace();
        let (own, group) = (fields.next().unwrap(), fields.next().unwrap());
        assert_eq!(own, group, "the child is not its group's leader: {out}");
        assert_eq!(own, pid.to_string());
    }

    #[test]
    fn the_child_starts_with_no_signal_blocked_and_sigpipe_not_ignored() {
        // The Rust runtime ignores SIGPIPE in this process, and the spawn blocks every signal around
        // the clone: neither may reach the program started.
        let script = "exec grep -E '^(SigBlk|SigIgn):' /proc/self/status";
        let (_, out, code) = run_sh(script, Vec::new(), &[], |_| {});
        assert_eq!(code, 0, "{out}");
        let mask = |name: &str| {
            let line = out.lines().find(|l| l.starts_with(name)).unwrap();
            u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
        };
        assert_eq!(mask("SigBlk:"), 0, "{out}");
        let sigpipe_bit = 1u64 << (libc::SIGPIPE - 1);
        assert_eq!(
            mask("SigIgn:") & sigpipe_bit,
            0,
            "SIGPIPE is ignored: {out}"
        );
    }

    #[test]
    fn a_nul_byte_in_an_argument_is_refused_before_anything_starts() {
        let err = ExecPlan::new(Path::new("/bin/true"), &["a\0b".into()], Vec::new())
            .err()
            .unwrap();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
