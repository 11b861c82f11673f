//! Starting a program whose output the caller reads itself: stdin from `/dev/null`, stdout and
//! stderr on pipes, in a given folder, as the leader of a process group of its own, with exactly the
//! environment given. A task's command (`bash_cmd_succeeds`) starts this way.
//!
//! On Linux the program starts as a plugin does (`clone_exec.rs`: the caller's memory is borrowed
//! until the exec, never copied), whatever std's `Command` would choose: in a statically linked
//! agent-env, std cannot find `posix_spawn`'s helpers and forks the whole process for every command
//! instead. Elsewhere std's `Command` starts it. The child gets `SIGKILL` if the thread that started
//! it ends first, so wait for it on that thread.

use std::ffi::OsString;
use std::io::{self, PipeReader};
use std::path::PathBuf;
use std::process::ExitStatus;

/// A program to start; see the module's docs for what else it gets.
pub struct PipedCommand {
    /// The program's path, found already (no `PATH` search happens here).
    pub program: PathBuf,
    /// Its `argv[0]`.
    pub arg0: String,
    /// Its arguments after `argv[0]`.
    pub args: Vec<String>,
    /// Its whole environment.
    pub env: Vec<(OsString, OsString)>,
    /// The folder it starts in.
    pub cwd: PathBuf,
}

/// A started program: its pid (also its process group's id) and the read ends of its output.
pub struct PipedChild {
    pub pid: u32,
    pub stdout: PipeReader,
    pub stderr: PipeReader,
}

impl PipedCommand {
    /// Starts the program; `Err` when it could not be started (not found, not executable, no such
    /// folder), with the system's reason.
    pub fn start(self) -> io::Result<PipedChild> {
        let (stdout, stdout_writer) = io::pipe()?;
        let (stderr, stderr_writer) = io::pipe()?;
        let nothing = std::fs::File::open("/dev/null")?;
        let pid = self.start_with(nothing, stdout_writer, stderr_writer)?;
        Ok(PipedChild {
            pid,
            stdout,
            stderr,
        })
    }

    /// Starts the program with these three as its stdin, stdout and stderr; its pid.
    fn start_with(
        self,
        stdin: std::fs::File,
        stdout: io::PipeWriter,
        stderr: io::PipeWriter,
    ) -> io::Result<u32> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let mut plan = crate::clone_exec::ExecPlan::new(&self.program, &self.args, self.env)?;
            plan.arg0(self.arg0.as_ref())?.current_dir(&self.cwd)?;
            plan.fd(stdin.as_raw_fd(), 0)
                .fd(stdout.as_raw_fd(), 1)
                .fd(stderr.as_raw_fd(), 2)
                .new_group();
            // Our copies of the child's ends close when this returns, so the pipes end with it.
            plan.spawn()
        }
        #[cfg(not(target_os = "linux"))]
        {
            use std::os::unix::process::CommandExt;
            let child = std::process::Command::new(&self.program)
                .arg0(&self.arg0)
                .args(&self.args)
                .env_clear()
                .envs(self.env)
                .current_dir(&self.cwd)
                .stdin(stdin)
                .stdout(stdout)
                .stderr(stderr)
                .process_group(0)
                .spawn()?;
            // Dropping a `Child` neither waits for nor kills it: `PipedChild::wait` reaps it by pid.
            Ok(child.id())
        }
    }
}

impl PipedChild {
    /// Waits for the program to end and reaps it.
    pub fn wait(&self) -> io::Result<ExitStatus> {
        use std::os::unix::process::ExitStatusExt;
        let mut status = 0;
        loop {
            // SAFETY: waiting for our own child, into a local.
            let reaped = unsafe { libc::waitpid(self.pid as libc::pid_t, &mut status, 0) };
            if reaped >= 0 {
                return Ok(ExitStatus::from_raw(status));
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;

    /// `sh -c SCRIPT` in `cwd`, with only `ONLY=this` in its environment.
    fn sh(script: &str, cwd: &std::path::Path) -> PipedCommand {
        PipedCommand {
            program: PathBuf::from("/bin/sh"),
            arg0: "sh".into(),
            args: vec!["-c".into(), script.into()],
            env: vec![("ONLY".into(), "this".into())],
            cwd: cwd.to_path_buf(),
        }
    }

    #[test]
    fn the_program_runs_in_its_folder_with_its_environment_and_both_outputs_apart() {
        let folder = tempfile::tempdir().unwrap();
        let script = "echo \"$ONLY|$HOME|$(pwd)|$0\"; echo oops >&2; read x; exit 3";
        let mut child = sh(script, folder.path()).start().unwrap();
        let (mut out, mut err) = (String::new(), String::new());
        child.stdout.read_to_string(&mut out).unwrap();
        child.stderr.read_to_string(&mut err).unwrap();
        let status = child.wait().unwrap();
        let folder = std::fs::canonicalize(folder.path()).unwrap();
        assert_eq!(out, format!("this||{}|sh\n", folder.display()));
        assert_eq!(err, "oops\n");
        assert_eq!(status.code(), Some(3));
    }

    #[test]
    fn the_program_leads_its_own_group_and_a_signal_shows_in_its_status() {
        let folder = tempfile::tempdir().unwrap();
        let script = "set -- $(cut -d' ' -f5 /proc/$$/stat); echo \"$$ $1\"; kill -TERM $$";
        let mut child = sh(script, folder.path()).start().unwrap();
        let mut out = String::new();
        child.stdout.read_to_string(&mut out).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(out, format!("{0} {0}\n", child.pid));
        assert_eq!(status.signal(), Some(libc::SIGTERM));
    }

    #[test]
    fn a_folder_that_does_not_exist_is_an_error_with_the_systems_reason() {
        let folder = tempfile::tempdir().unwrap();
        let gone = folder.path().join("gone");
        let err = sh("exit 0", &gone).start().err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
    }
}
