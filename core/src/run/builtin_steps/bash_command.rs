//! Runs a `bash_cmd_succeeds` command: `bash -c COMMAND` in the sandbox's folder, in a process group
//! of its own, stdout drained and stderr kept, the group killed at the timeout or on cancel.
//!
//! One thread does it all: both pipes are read with poll(2) until the command's process ends (a
//! pidfd says when; what it left running in the background may hold the pipes open, and is killed
//! with its group) or the pipes close, or the deadline passes, so a criterion starts no helper
//! thread. What the command started in a session of its own (`setsid server &`) is not in its
//! group: it runs on when the command ends normally, so a later step of the task may use it, and
//! is stopped when the sandbox is torn down (or at once, when the command is cut short). The command starts as a plugin does
//! (`agent_env_host::piped_child`): agent-env's memory is never copied for it, which std's `Command`
//! would do in a statically linked agent-env, and the process started gets `SIGKILL` should
//! agent-env die first (what it starts in turn is killed with its group when the criterion ends).
//!
//! A command made only of plain words (`bash check.sh`, `pytest -q tests`) is started directly, the
//! way `bash -c` itself execs a lone simple command: the program found on PATH as bash finds it, the
//! same argv, and the variables bash would set for it (`PWD`, `SHLVL`, `_`). That spares one bash
//! start per criterion. Whatever bash would interpret goes to bash: quotes, variables, globs,
//! redirections, operators, a builtin or keyword in first place, and any command at all while
//! `BASH_ENV` is set or a function is exported in the environment. A program that cannot be started
//! directly (not found, not executable, no `#!` line) goes to bash too, which then says why or runs
//! it as a script, as it always did. With no bash on PATH such a command cannot run at all: that
//! is the machine's fault, not the sandbox's, and fails the step ([`StepError::is_environment`])
//! rather than the criterion; [`bash_on_path`] and [`surely_needs_bash`] let a dry run tell so
//! beforehand.
//!
//! The command gets the environment a plugin gets less agent-env's own `AGENT_ENV_*` variables (a
//! credential kept under that prefix for a config's `env:` reference would go with them): the
//! variables a program needs (`PATH`, `HOME`, locale, temp and XDG folders, proxies, toolchains) and
//! the ones the user lists in `AGENT_ENV_SANDBOX_ENV`; API keys and tokens in agent-env's environment
//! are withheld otherwise.

use std::ffi::{OsStr, OsString};
use std::io::{PipeReader, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_env_host::piped_child::{PipedChild, PipedCommand};

use crate::run::cancel::{kill_group, Cancel};

use crate::sandbox::marked_processes::{stop_in, PidMark, COMMAND_MARKER};

use super::StepError;

/// How a command ended.
#[derive(Debug)]
pub struct Finished {
    /// Its exit code; minus the signal's number when a signal ended it (Python's `returncode`).
    pub code: i32,
    /// What it wrote to stderr (lossy UTF-8).
    pub stderr: String,
    pub timed_out: bool,
}

/// Runs `command` in `cwd`; `Err` only when it could not run at all (no bash to run it: an
/// [`StepError::is_environment`] error) or the run was cancelled.
pub fn run(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    cancel: &Cancel,
) -> Result<Finished, StepError> {
    if cancel.is_cancelled() {
        return Err(StepError::cancelled());
    }
    let child = match direct(command, cwd).and_then(|program| program.start().ok()) {
        Some(child) => child,
        None => start_bash(command, cwd)?,
    };
    let pgid = child.pid as i32;
    // What the command starts has an id after its own (no read of the kernel's counter per command).
    let since = PidMark::before(pgid);
    if !cancel.register_group(pgid) {
        let _ = child.wait();
        return Err(StepError::cancelled());
    }
    // A limit too far away to be an instant is no limit.
    let deadline = Instant::now().checked_add(timeout);
    let (stderr, timed_out) = drain(&child, deadline, pgid);
    let status = child.wait();
    // The group may hold children the command left behind; none outlive the criterion.
    kill_group(pgid);
    cancel.unregister_group(pgid);
    // Cut short: what it started that left its group (`setsid`) goes too, found by its marker.
    // Ended on its own, that is left to the sandbox's teardown: a later step may use it.
    if timed_out || cancel.is_cancelled() {
        stop_in(&marker_dir(cwd), &since);
    }
    if cancel.is_cancelled() {
        return Err(StepError::cancelled());
    }
    let status = status.map_err(|e| StepError::runtime(format!("can't wait for bash: {e}")))?;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| -s))
        .unwrap_or(-1);
    Ok(Finished {
        code,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        timed_out,
    })
}

/// The environment every command gets (see the module's docs); agent-env never changes its own, so it
/// is worked out once.
fn sandbox_env() -> &'static [(OsString, OsString)] {
    static ENV: std::sync::OnceLock<Vec<(OsString, OsString)>> = std::sync::OnceLock::new();
    ENV.get_or_init(|| agent_env_host::env_policy::sandbox_env(std::env::vars_os()))
}

/// The variables `command` expands (`$NAME`, `${NAME…}`) that are set where agent-env runs but that a
/// task's command does not get, each once, in order: what to name when such a command fails.
pub fn withheld_variables(command: &str) -> Vec<String> {
    withheld_names(
        command,
        |name| std::env::var_os(name).is_some(),
        |name| sandbox_env().iter().any(|(k, _)| k == name),
    )
}

/// Variables bash sets for itself: a command gets them whatever its environment holds.
const SET_BY_BASH: &[&str] = &[
    "_",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "HOSTNAME",
    "HOSTTYPE",
    "OSTYPE",
    "MACHTYPE",
    "UID",
    "EUID",
    "PPID",
    "GROUPS",
    "IFS",
    "OPTIND",
    "OPTERR",
    "RANDOM",
    "SRANDOM",
    "LINENO",
    "SECONDS",
    "EPOCHSECONDS",
    "EPOCHREALTIME",
    "PS1",
    "PS2",
    "PS4",
    "PIPESTATUS",
    "FUNCNAME",
    "DIRSTACK",
    "COLUMNS",
    "LINES",
];

fn withheld_names(
    command: &str,
    set_here: impl Fn(&str) -> bool,
    passed: impl Fn(&str) -> bool,
) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in expanded_names(command) {
        let is_bash_own = SET_BY_BASH.contains(&name) || name.starts_with("BASH");
        if !is_bash_own && set_here(name) && !passed(name) && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// The variable names `command` expands, `$NAME` or `${NAME…}`, in order: outside single quotes and
/// not escaped (`$1`, `$$` and the like name no variable).
fn expanded_names(command: &str) -> Vec<&str> {
    let bytes = command.as_bytes();
    let mut names = Vec::new();
    let (mut in_single_quotes, mut in_double_quotes) = (false, false);
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if !in_single_quotes => i += 1,
            b'\'' if !in_double_quotes => in_single_quotes = !in_single_quotes,
            b'"' if !in_single_quotes => in_double_quotes = !in_double_quotes,
            b'$' if !in_single_quotes => {
                let start = (i + 1 + usize::from(bytes.get(i + 1) == Some(&b'{'))).min(bytes.len());
                let len = name_length(&bytes[start..]);
                if len > 0 {
                    names.push(&command[start..start + len]);
                    i = start + len;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    names
}

/// How many of `bytes`' first bytes make a shell variable's name (a letter or `_`, then letters,
/// digits and `_`).
fn name_length(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .enumerate()
        .take_while(|(n, b)| {
            b.is_ascii_alphabetic() || **b == b'_' || (*n > 0 && b.is_ascii_digit())
        })
        .count()
}

/// Starts `bash -c command` in `cwd`. No bash on PATH, or one that cannot be started, is an
/// [`StepError::is_environment`] error that says what to do.
fn start_bash(command: &str, cwd: &Path) -> Result<PipedChild, StepError> {
    let program = find_program("bash", cwd).ok_or_else(|| {
        StepError::environment(format!(
            "{}; install bash, or run agent-env with the folder that holds it on PATH",
            no_bash_here()
        ))
    })?;
    let bash = PipedCommand {
        program: program.clone(),
        arg0: "bash".into(),
        args: vec!["-c".into(), command.into()],
        env: with_marker(sandbox_env().to_vec(), cwd),
        cwd: cwd.to_path_buf(),
    };
    bash.start().map_err(|e| {
        StepError::environment(format!(
            "can't start bash ({}): {e}; check that it is a program this machine can run, or put another bash first on PATH",
            program.display()
        ))
    })
}

/// Whether a task's command would find bash, as far as can be told before its sandbox exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BashOnPath {
    Found,
    /// No folder of PATH holds it, and each is a full path.
    Missing,
    /// Only a relative PATH folder could hold it, which is looked up from the command's folder.
    Unsure,
}

/// Whether a task's command would find bash on the PATH it gets (see [`BashOnPath`]).
pub fn bash_on_path() -> BashOnPath {
    match on_path_everywhere("bash") {
        Some(true) => BashOnPath::Found,
        Some(false) => BashOnPath::Missing,
        None => BashOnPath::Unsure,
    }
}

/// Whether `word` is an executable file in a folder of the commands' PATH, wherever the command
/// runs: `None` when it is in none of its full-path folders but PATH has a relative one.
fn on_path_everywhere(word: &str) -> Option<bool> {
    let mut relative = false;
    for dir in std::env::split_paths(commands_path()) {
        if dir.is_absolute() {
            if is_executable_file(&dir.join(word)) {
                return Some(true);
            }
        } else {
            relative = true;
        }
    }
    (!relative).then_some(false)
}

/// The PATH a task's command searches.
fn commands_path() -> &'static OsStr {
    sandbox_env()
        .iter()
        .find_map(|(name, value)| (name == "PATH").then_some(value.as_os_str()))
        .unwrap_or(OsStr::new(PATH_WHEN_UNSET))
}

/// Says that no bash is where a task's command looks for it: `bash is not on PATH (…)`.
pub fn no_bash_here() -> String {
    let set = sandbox_env().iter().any(|(name, _)| name == "PATH");
    match set {
        true => format!(
            "bash is not on PATH ({}), and a bash_cmd_succeeds command runs in bash",
            commands_path().to_string_lossy()
        ),
        false => format!(
            "PATH is not set and bash is not in {PATH_WHEN_UNSET}, and a bash_cmd_succeeds command runs in bash"
        ),
    }
}

/// Whether `command` surely runs in bash, whatever its sandbox holds: bash would interpret it
/// (quotes, variables, operators, a builtin or keyword first), or its program is in no folder of
/// PATH. A command of plain words whose program may be found is started directly, without bash.
pub fn surely_needs_bash(command: &str) -> bool {
    let Some(words) = plain_words(command) else {
        return true;
    };
    let Some(first) = words.first() else {
        return true;
    };
    BASH_BUILTINS_AND_KEYWORDS.contains(first)
        || bash_would_read_more()
        || (!first.contains('/') && on_path_everywhere(first) == Some(false))
}

/// The folder a command started in `cwd` is marked with (and its leftovers are found by).
fn marker_dir(cwd: &Path) -> PathBuf {
    std::path::absolute(cwd).unwrap_or_else(|_| cwd.to_path_buf())
}

fn with_marker(mut env: Vec<(OsString, OsString)>, cwd: &Path) -> Vec<(OsString, OsString)> {
    let dir = marker_dir(cwd);
    env.retain(|(name, _)| name != COMMAND_MARKER);
    env.push((COMMAND_MARKER.into(), dir.into()));
    env
}

/// The command started without bash, when bash would only have exec'd it.
fn direct(command: &str, cwd: &Path) -> Option<PipedCommand> {
    let words = plain_words(command)?;
    let (first, args) = words.split_first()?;
    if BASH_BUILTINS_AND_KEYWORDS.contains(first) || bash_would_read_more() {
        return None;
    }
    let program = find_program(first, cwd)?;
    // What `bash -c` puts in the environment of the program it execs.
    let pwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let set_by_bash: [(OsString, OsString); 3] = [
        ("PWD".into(), pwd.into()),
        ("_".into(), program.clone().into()),
        ("SHLVL".into(), "0".into()),
    ];
    let mut env: Vec<(OsString, OsString)> = sandbox_env()
        .iter()
        .filter(|(name, _)| !set_by_bash.iter().any(|(set, _)| set == name))
        .cloned()
        .collect();
    env.extend(set_by_bash);
    Some(PipedCommand {
        program,
        arg0: (*first).to_string(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: with_marker(env, cwd),
        cwd: cwd.to_path_buf(),
    })
}

/// The words of `command` when bash would read it as nothing but literal words; `None` otherwise.
fn plain_words(command: &str) -> Option<Vec<&str>> {
    let literal = |c: char| c.is_ascii_alphanumeric() || "_-./,:+@%=".contains(c);
    if !command.chars().all(|c| literal(c) || c == ' ' || c == '\t') {
        return None;
    }
    let words: Vec<&str> = command
        .split([' ', '\t'])
        .filter(|w| !w.is_empty())
        .collect();
    // `NAME=value cmd` is an assignment; `=` later in a word is literal.
    if words.first()?.contains('=') {
        return None;
    }
    Some(words)
}

/// `BASH_ENV` makes a non-interactive bash read a file first; an exported function may shadow the
/// program. Read once from the environment every criterion gets.
fn bash_would_read_more() -> bool {
    static READS_MORE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *READS_MORE.get_or_init(|| {
        sandbox_env().iter().any(|(name, _)| {
            let name = name.to_string_lossy();
            name == "BASH_ENV" || name.starts_with("BASH_FUNC_")
        })
    })
}

/// Where the folders of a search are taken from when the environment has no `PATH` at all: a part
/// of what bash (and execvp(3)) search then. A program elsewhere is left to bash to find.
const PATH_WHEN_UNSET: &str = "/usr/local/bin:/usr/bin:/bin";

/// Where bash would find `word`: relative to `cwd` when it holds a slash, else the first executable
/// regular file of that name on PATH (an empty PATH entry is the current folder).
fn find_program(word: &str, cwd: &Path) -> Option<PathBuf> {
    if word.contains('/') {
        let path = cwd.join(word);
        return is_executable_file(&path).then_some(path);
    }
    std::env::split_paths(commands_path())
        .map(|dir| {
            if dir.as_os_str().is_empty() {
                cwd.join(word)
            } else {
                cwd.join(dir).join(word)
            }
        })
        .find(|candidate| is_executable_file(candidate))
}

fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Reads stdout (thrown away) and stderr (kept) until both close; at `deadline` (if any) kills the
/// group and keeps reading what is left. Returns stderr and whether the deadline passed.
fn drain(child: &PipedChild, deadline: Option<Instant>, pgid: i32) -> (Vec<u8>, bool) {
    let mut stdout: Option<&PipeReader> = Some(&child.stdout);
    let mut stderr: Option<&PipeReader> = Some(&child.stderr);
    // Readable once the command's own process has ended, though something it started in the
    // background may still hold the pipes: the command is over then, not when the pipes close.
    let mut exit_watch = exit_watch(child.pid);
    let mut exited = false;
    let mut kept = Vec::new();
    let mut timed_out = false;
    let mut buffer = [0u8; 8192];
    // The pipes closing is not the command's end when it has a pidfd: one that closed or redirected
    // both (`exec >log 2>&1`) is watched to its end or its limit all the same.
    while stdout.is_some() || stderr.is_some() || (exit_watch.is_some() && !timed_out) {
        let wait = if exited {
            // Ended: take what is already in the pipes, and wait for nothing more.
            Some(Duration::ZERO)
        } else if timed_out {
            // Killed: whatever still holds the pipes is outside the group; stop waiting soon.
            Some(Duration::from_millis(100))
        } else {
            deadline.map(|d| d.saturating_duration_since(Instant::now()))
        };
        let mut fds = Vec::with_capacity(3);
        for fd in [
            stdout.as_ref().map(|s| s.as_raw_fd()),
            stderr.as_ref().map(|s| s.as_raw_fd()),
            exit_watch.as_ref().map(|w| w.as_raw_fd()),
        ]
        .into_iter()
        .flatten()
        {
            fds.push(libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            });
        }
        // poll(2) takes milliseconds as an int; -1 waits without a limit.
        let millis = wait.map_or(-1, |w| w.as_millis().min(i32::MAX as u128) as i32);
        // SAFETY: `fds` is a live, correctly sized array of pollfd for the duration of the call.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, millis) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        if ready == 0 {
            if timed_out || exited {
                break;
            }
            // poll's own limit may come before the deadline (it counts milliseconds in an int).
            if deadline.is_some_and(|d| Instant::now() >= d) {
                timed_out = true;
                kill_group(pgid);
            }
            continue;
        }
        for pollfd in fds.iter().filter(|p| p.revents != 0) {
            if exit_watch.as_ref().map(|w| w.as_raw_fd()) == Some(pollfd.fd) {
                exited = true;
                exit_watch = None;
                continue;
            }
            let is_stdout = stdout.as_ref().map(|s| s.as_raw_fd()) == Some(pollfd.fd);
            let pipe: &mut dyn Read = match (is_stdout, &mut stdout, &mut stderr) {
                (true, Some(out), _) => out,
                (false, _, Some(err)) => err,
                _ => continue,
            };
            match pipe.read(&mut buffer) {
                Ok(0) | Err(_) => {
                    if is_stdout {
                        stdout = None;
                    } else {
                        stderr = None;
                    }
                }
                Ok(n) if !is_stdout => keep_tail(&mut kept, &buffer[..n]),
                Ok(_) => {}
            }
        }
    }
    // Without a pidfd, both pipes closed while the command runs on: its limit holds all the same.
    if !exited && !timed_out && !ended_by(child.pid, deadline) {
        timed_out = true;
        kill_group(pgid);
    }
    if kept.len() > STDERR_KEPT_BYTES {
        kept.drain(..kept.len() - STDERR_KEPT_BYTES);
    }
    (kept, timed_out)
}

/// Waits for the process `pid` to end, up to `deadline` (none: without a limit); whether it ended.
/// For a kernel without pidfds: its state is looked at every 20 ms, leaving it unreaped.
fn ended_by(pid: u32, deadline: Option<Instant>) -> bool {
    loop {
        if has_ended(pid) {
            return true;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether the child `pid` has ended, without reaping it (`waitid` with `WNOWAIT`).
fn has_ended(pid: u32) -> bool {
    let id: libc::id_t = pid;
    // SAFETY: an all-zero siginfo_t is a valid value for waitid to fill in.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid writes into `info`, which lives for the call; WNOWAIT leaves the child unreaped.
    let found = unsafe {
        libc::waitid(
            libc::P_PID,
            id,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: waitid filled `info` in; si_pid is 0 when the child has not changed state.
    found != 0 || unsafe { info.si_pid() } != 0
}

/// How much of a command's stderr is kept while it runs: its end, where a failing command says why
/// (a justification shows far less). A command that floods stderr costs no more memory than this.
const STDERR_KEPT_BYTES: usize = 16 * 1024;

/// Appends `read` to `kept`, dropping the front once it holds twice [`STDERR_KEPT_BYTES`] (so the
/// copying is paid once per that much read, not on every read).
fn keep_tail(kept: &mut Vec<u8>, read: &[u8]) {
    kept.extend_from_slice(read);
    if kept.len() > 2 * STDERR_KEPT_BYTES {
        kept.drain(..kept.len() - STDERR_KEPT_BYTES);
    }
}

/// A descriptor that becomes readable when the process `pid` ends (pidfd_open(2), Linux 5.3 and
/// later); `None` on a kernel without it, where the pipes closing is the only sign.
fn exit_watch(pid: u32) -> Option<OwnedFd> {
    let pid = libc::pid_t::try_from(pid).ok()?;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor, or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = RawFd::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    // SAFETY: the descriptor was just opened for us and nothing else owns it.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `compgen -b -k` of bash 5.2: a first word bash runs itself rather than from PATH.
const BASH_BUILTINS_AND_KEYWORDS: &[&str] = &[
    ".",
    ":",
    "[",
    "[[",
    "]]",
    "{",
    "}",
    "!",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "case",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "coproc",
    "declare",
    "dirs",
    "disown",
    "do",
    "done",
    "echo",
    "elif",
    "else",
    "enable",
    "esac",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "fi",
    "for",
    "function",
    "getopts",
    "hash",
    "help",
    "history",
    "if",
    "in",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "select",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "then",
    "time",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "until",
    "wait",
    "while",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_are_literal_words_only() {
        assert_eq!(plain_words("bash check.sh"), Some(vec!["bash", "check.sh"]));
        assert_eq!(
            plain_words("  pytest  -q tests/a_test.py "),
            Some(vec!["pytest", "-q", "tests/a_test.py"])
        );
        assert_eq!(
            plain_words("grep -q x=1 file"),
            Some(vec!["grep", "-q", "x=1", "file"])
        );
        for shell in [
            "X=1 env",
            "echo $HOME",
            "ls *.txt",
            "a && b",
            "a; b",
            "a | b",
            "cat < f",
            "echo 'q'",
            "echo \"q\"",
            "ls ~",
            "echo {a,b}",
            "a # comment",
            "a\nb",
            "echo \\x",
            "(a)",
            "echo `a`",
            "",
            "   ",
        ] {
            assert_eq!(plain_words(shell), None, "{shell:?} needs bash");
        }
    }

    #[test]
    fn withheld_variables_are_the_expanded_ones_set_here_and_not_passed() {
        let set_here =
            |name: &str| ["TOKEN", "AGENT_ENV_X", "PATH", "PWD", "OTHER"].contains(&name);
        let passed = |name: &str| name == "PATH";
        let find = |command: &str| withheld_names(command, set_here, passed);
        assert_eq!(
            find(r#"curl -H "x: $TOKEN" ${AGENT_ENV_X:-d} $PATH $PWD $UNSET $TOKEN"#),
            ["TOKEN", "AGENT_ENV_X"]
        );
        // Not expanded: single-quoted or escaped; `$1` and `$$` name no variable.
        assert!(find(r#"echo '$TOKEN' \$OTHER $1 $$"#).is_empty());
        assert_eq!(find(r#"echo "'$OTHER'""#), ["OTHER"]);
    }

    /// (Run either way, a lone program ends the same, since `bash -c` execs it in its own place: the
    /// difference is only the extra bash start, so the choice itself is what is checked.)
    #[test]
    fn a_plain_program_is_started_without_bash() {
        let tmp = tempfile::tempdir().unwrap();
        let program = direct("bash check.sh", tmp.path()).expect("started directly");
        assert_eq!(program.program, find_program("bash", tmp.path()).unwrap());
        assert_eq!(program.arg0, "bash");
        assert_eq!(program.args, ["check.sh"]);
        assert!(direct("no-such-program-here", tmp.path()).is_none());
        assert!(direct("bash check.sh && true", tmp.path()).is_none());
    }

    #[test]
    fn builtins_and_keywords_go_to_bash() {
        let cwd = std::env::temp_dir();
        for builtin in ["true", "exit 3", "test -f x", "echo hi", "cd /", "[ -f x ]"] {
            assert!(direct(builtin, &cwd).is_none(), "{builtin}");
        }
    }

    #[test]
    fn a_program_is_found_as_bash_finds_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let script = dir.join("run-me");
        std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
        let plain = dir.join("not-executable");
        std::fs::write(&plain, "exit 0\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_program("./run-me", dir), Some(dir.join("./run-me")));
        assert_eq!(find_program("./not-executable", dir), None);
        assert_eq!(find_program("./missing", dir), None);
        assert!(find_program("sh", dir).is_some(), "sh is on PATH");
    }

    #[test]
    fn direct_and_bash_runs_end_alike() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("fails.sh"), "echo out; echo oops >&2; exit 3\n").unwrap();
        std::fs::write(dir.join("env.sh"), "echo \"$PWD\" >&2\n").unwrap();
        let cancel = Cancel::new();
        let limit = Duration::from_secs(30);
        for command in ["bash fails.sh", "bash fails.sh && true"] {
            let done = run(command, dir, limit, &cancel).unwrap();
            assert_eq!(done.code, 3, "{command}");
            assert_eq!(done.stderr, "oops\n", "{command}");
            assert!(!done.timed_out);
        }
        let pwd = run("bash env.sh", dir, limit, &cancel).unwrap();
        assert_eq!(
            pwd.stderr.trim_end(),
            std::fs::canonicalize(dir).unwrap().display().to_string()
        );
        let missing = run("no-such-program-here", dir, limit, &cancel).unwrap();
        assert_eq!(
            missing.code, 127,
            "bash says it is not found: {}",
            missing.stderr
        );
        assert!(
            missing.stderr.contains("command not found"),
            "{}",
            missing.stderr
        );
    }

    #[test]
    fn a_limit_beyond_any_instant_is_no_limit() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("fails.sh"), "exit 3\n").unwrap();
        let done = run("bash fails.sh", dir, Duration::MAX, &Cancel::new()).unwrap();
        assert_eq!(done.code, 3);
        assert!(!done.timed_out);
    }

    #[test]
    fn a_flood_on_stderr_keeps_only_its_end() {
        let tmp = tempfile::tempdir().unwrap();
        // 8 MiB of stderr, then the line that says why.
        let done = run(
            "head -c 8388608 /dev/zero | tr '\\0' x >&2; echo the-end >&2; exit 1",
            tmp.path(),
            Duration::from_secs(60),
            &Cancel::new(),
        )
        .unwrap();
        assert_eq!(done.code, 1);
        assert!(
            done.stderr.len() <= STDERR_KEPT_BYTES,
            "{}",
            done.stderr.len()
        );
        assert!(
            done.stderr.ends_with("xxxthe-end\n"),
            "{:?}",
            &done.stderr[done.stderr.len() - 20..]
        );
    }

    /// The process whose pid `pid_file` holds, and whether it is gone (or a zombie) within 2 s.
    fn ends_soon(pid_file: &Path) -> (i32, bool) {
        let pid: i32 = std::fs::read_to_string(pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let gone = (0..100).any(|_| {
            // SAFETY: signal 0 only asks whether the process exists.
            let alive = unsafe { libc::kill(pid, 0) } == 0
                && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|stat| stat.contains(") Z "));
            if alive {
                std::thread::sleep(Duration::from_millis(20));
            }
            !alive
        });
        (pid, gone)
    }

    #[test]
    fn the_deadline_kills_the_group() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let cancel = Cancel::new();
        let done = run("sleep 30", dir, Duration::from_millis(200), &cancel).unwrap();
        assert!(done.timed_out);
        assert_eq!(done.code, -9);
    }

    /// A command that sends its output elsewhere (or closes it) still ends at its limit: the pipes
    /// closing early is not its end.
    #[test]
    fn the_deadline_holds_for_a_command_that_closes_its_pipes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        for command in ["exec >run.log 2>&1; sleep 30", "exec >&- 2>&-; sleep 30"] {
            let done = run(command, dir, Duration::from_millis(300), &Cancel::new()).unwrap();
            assert!(done.timed_out, "{command}: {done:?}");
            assert_eq!(done.code, -9, "{command}");
        }
        let done = run(
            "exec >&- 2>&-; exit 3",
            dir,
            Duration::from_secs(20),
            &Cancel::new(),
        )
        .unwrap();
        assert_eq!((done.code, done.timed_out), (3, false));
        // Without a pidfd, the child's state is looked at, and it is left for its wait to reap.
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let soon = Instant::now() + Duration::from_millis(100);
        assert!(!ended_by(child.id(), Some(soon)));
        child.kill().unwrap();
        assert!(ended_by(child.id(), None));
        assert!(child.wait().is_ok(), "ended_by reaped the child");
    }

    /// What a command cut short by its limit started outside its process group (`setsid`) goes
    /// with it: found by the folder its environment says it was started in.
    #[test]
    fn the_deadline_stops_what_left_the_commands_group() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let done = run(
            "setsid sleep 60 & echo $! > escaped.pid; sleep 60",
            dir,
            Duration::from_millis(500),
            &Cancel::new(),
        )
        .unwrap();
        assert!(done.timed_out, "{done:?}");
        let (pid, gone) = ends_soon(&dir.join("escaped.pid"));
        assert!(
            gone,
            "the escaped process {pid} outlived the command's limit"
        );
    }

    #[test]
    fn a_command_is_over_when_its_process_ends_whatever_it_left_running() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        // The background sleep holds both pipes open, far past the limit.
        let done = run(
            "echo kept >&2; sleep 60 & echo $! > bg.pid; exit 0",
            dir,
            Duration::from_secs(20),
            &Cancel::new(),
        )
        .unwrap();
        assert!(!done.timed_out, "{done:?}");
        assert_eq!(done.code, 0);
        assert_eq!(done.stderr, "kept\n");
        // What it left running went with its group.
        let (pid, gone) = ends_soon(&dir.join("bg.pid"));
        assert!(gone, "the background sleep {pid} still runs");
    }
}
