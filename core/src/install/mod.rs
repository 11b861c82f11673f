//! `agent-env plugin add | remove`: install a plugin through the installer its source needs (a copy of a
//! folder, pip into a venv agent-env manages, `cargo install`, `go install`), check it in a fresh process,
//! and put the plugins directory back exactly as it was when anything goes wrong.
//!
//! Nothing here runs implicitly: only the two subcommands call it. Each ends in a [`ChangeReport`]
//! (how the change ended, the problems it found) and picks no exit code: the CLI does.

pub mod add;
pub mod blockers;
mod cargo_tracking;
pub mod check;
pub mod error;
pub mod folder_name;
mod index_probe;
mod inside_exec;
pub mod interrupt;
pub mod lock;
mod outside_exec;
pub mod plan;
pub mod remove;
pub mod report;
mod sdk_advice;
pub mod snapshot;
pub mod source;
pub mod touched;

pub use error::InstallError;
pub use report::{ChangeOutcome, ChangeReport};

use std::path::PathBuf;

use crate::discovery::SearchPath;
use crate::output::Output;
use snapshot::Snapshot;

/// What `add` and `remove` take from the invocation: its folders, where discovery looks (read afresh
/// before and after a change, since the change is what moves it), the config file, and where lines go.
pub struct Context<'a> {
    /// The plugins directory the change is made in.
    pub plugins_dir: PathBuf,
    /// The folder of the change lock.
    pub locks_dir: PathBuf,
    /// agent-env's state root (the local document store is read for stored uses of a package).
    pub state_root: PathBuf,
    /// `$HOME`, for `~/` in a spec.
    pub home: Option<PathBuf>,
    /// Where discovery looks.
    pub search: SearchPath,
    /// The config file in effect, when there is one (its uses of a package block removing it).
    pub config_path: Option<PathBuf>,
    /// The configured document store when it is remote; read for stored uses only when asked.
    pub remote_documents: Option<RemoteDocuments>,
    /// Where the plan, the progress and the problems are written.
    pub out: &'a dyn Output,
    /// `--wait`: a change another process is making is waited for, not a failure.
    pub wait_for_others: bool,
}

impl Context<'_> {
    /// Takes the change lock of the plugins directory (see [`lock`]); refused when the plugins
    /// directory is a file, which nothing can be installed in or removed from.
    pub(crate) fn lock_for_change(&self) -> Result<lock::ChangeLock, InstallError> {
        if let Some(why) = crate::discovery::plugins_dir_not_a_folder(&self.plugins_dir) {
            return Err(InstallError::PluginsDirNotAFolder(why));
        }
        let waiting = |path: &std::path::Path, holder: Option<u32>| {
            self.out
                .waiting(&crate::install::lock::waiting_for(path, holder));
        };
        lock::acquire(
            &self.plugins_dir,
            &self.locks_dir,
            self.wait_for_others
                .then_some(&waiting as crate::install::lock::Waiting<'_>),
        )
    }
}

/// A document store that is not on this machine, as `remove --check-usage` reads it.
pub struct RemoteDocuments {
    /// Its impl, as the config names it.
    pub impl_name: String,
    /// The session's stores; the document store is built only when it is read.
    pub stores: std::sync::Arc<crate::stores::StoreSet>,
}

/// Why the plugins directory is put back: a signal, or a problem the change found.
#[derive(Clone, Copy)]
enum Rollback {
    /// By the signal of this number.
    Interrupted(i32),
    Problem,
}

/// Says why, puts the plugins directory back as `before` found it, and tells how the change ended.
fn restore(
    before: &Snapshot,
    why: Rollback,
    out: &dyn Output,
) -> Result<ChangeOutcome, InstallError> {
    let (said, outcome) = match why {
        Rollback::Interrupted(signal) => (
            "Interrupted; restoring the environment as it was.",
            ChangeOutcome::Interrupted(signal),
        ),
        Rollback::Problem => (
            "Restoring the environment as it was.",
            ChangeOutcome::RolledBack,
        ),
    };
    out.line(said);
    before.restore()?;
    out.line("Restored.");
    Ok(outcome)
}

/// The folder under the plugins directory holding the Python venv agent-env manages.
pub const PYTHON_ENV: &str = ".python";
/// The `cargo install --root` under the plugins directory.
pub const CARGO_ROOT: &str = ".cargo";

/// Package names that are agent-env itself; `add` refuses them before anything runs.
pub const CORE_NAMES: [&str; 4] = [
    "agentenv-framework",
    "agentenv-framework-protocol",
    "agentenv-protocol",
    "agent-env",
];

/// Whether `name` (any spelling) is agent-env itself.
pub fn is_core(name: &str) -> bool {
    let c = agent_env_protocol::names::canonical_name(name);
    CORE_NAMES.contains(&c.as_str())
}

/// Asks `Proceed?` on the terminal (default No). With no terminal, refuses: there is no one to ask.
/// A signal `interrupts` counts while the answer is awaited (Ctrl-C at the question) ends the wait:
/// [`InstallError::InterruptedAtQuestion`], nothing having been changed.
pub fn confirm(
    yes: bool,
    out: &dyn Output,
    interrupts: &interrupt::Interrupts,
) -> Result<bool, InstallError> {
    use std::io::IsTerminal;
    if yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        return Err(InstallError::NoTerminal);
    }
    out.prompt("Proceed? [y/N] ");
    let Some(line) = answer(interrupts)? else {
        return Ok(false);
    };
    Ok(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// How often the wait for an answer looks at whether a signal came (one that reaches another thread
/// does not wake it).
const ANSWER_WAIT_SLICE_MS: libc::c_int = 100;

/// The line typed at the terminal (stdin), read as it comes without holding a wait a signal cannot
/// end; `None` when stdin ends or cannot be read (no answer: No), or [`InstallError::InterruptedAtQuestion`]
/// once `interrupts` counts a signal.
fn answer(interrupts: &interrupt::Interrupts) -> Result<Option<String>, InstallError> {
    let mut line = Vec::new();
    loop {
        if interrupts.interrupted() {
            return Err(InstallError::InterruptedAtQuestion(interrupts.signal()));
        }
        let mut stdin = libc::pollfd {
            fd: libc::STDIN_FILENO,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll reads and writes the one pollfd it is handed, which lives across the call.
        let ready = unsafe { libc::poll(&mut stdin, 1, ANSWER_WAIT_SLICE_MS) };
        if ready == 0
            || (ready < 0
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted)
        {
            // A timeout, or a signal that ended the wait: look again.
            continue;
        }
        if ready < 0 {
            return Ok(None);
        }
        // The terminal closed (its window, an ssh connection): the kernel sends SIGHUP with it, which
        // may land only after this read sees the end; the question ends as that signal ends it.
        let hung_up = stdin.revents & libc::POLLHUP != 0;
        let mut buf = [0u8; 256];
        // SAFETY: read writes at most `buf.len()` bytes into `buf`, which lives across the call.
        let n = unsafe { libc::read(libc::STDIN_FILENO, buf.as_mut_ptr().cast(), buf.len()) };
        match n {
            0 if hung_up => return Err(InstallError::InterruptedAtQuestion(libc::SIGHUP)),
            0 => return Ok(None),
            n if n < 0 => {
                let error = std::io::Error::last_os_error();
                if error.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                // A terminal that hung up answers reads with EIO.
                if hung_up || error.raw_os_error() == Some(libc::EIO) {
                    return Err(InstallError::InterruptedAtQuestion(libc::SIGHUP));
                }
                return Ok(None);
            }
            n => {
                // n > 0 and at most buf.len(), as read returns.
                let n = usize::try_from(n).unwrap_or(0);
                line.extend_from_slice(&buf[..n]);
                if let Some(end) = line.iter().position(|b| *b == b'\n') {
                    line.truncate(end);
                    return Ok(Some(String::from_utf8_lossy(&line).into_owned()));
                }
            }
        }
    }
}
