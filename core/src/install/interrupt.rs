//! Ctrl-C, SIGTERM and SIGHUP during a change: the first one is noted (the installer finishes, then the change is
//! rolled back); a second one stops the installer at once.

use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::error::InstallError;
use crate::output::Output;

/// Counts SIGINT, SIGTERM and SIGHUP from the moment it is installed.
#[derive(Clone)]
pub struct Interrupts {
    count: Arc<AtomicUsize>,
}

impl Interrupts {
    /// Installs the handlers (they replace the default "die at once").
    pub fn install() -> Interrupts {
        let count = Arc::new(AtomicUsize::new(0));
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            let c = Arc::clone(&count);
            // SAFETY: the handler only bumps an atomic counter, which is async-signal-safe.
            let _ = unsafe {
                signal_hook::low_level::register(signal, move || {
                    c.fetch_add(1, Ordering::SeqCst);
                })
            };
        }
        Interrupts { count }
    }

    /// Counts nothing: no handler is installed (for tests).
    #[cfg(test)]
    pub fn none() -> Interrupts {
        Interrupts {
            count: Arc::new(AtomicUsize::new(0)),
        }
    }

    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    pub fn interrupted(&self) -> bool {
        self.count() > 0
    }
}

/// Runs `cmd` to the end with SIGINT ignored in the child (so a Ctrl-C at the terminal lets it finish);
/// a second interrupt kills it. The child keeps the terminal, so its own prompts work; what it writes
/// to stdout goes to agent-env's stderr, since stdout is the command's own (one document under
/// `--json`, which pip's progress lines would break).
pub fn run_to_end(
    mut cmd: Command,
    interrupts: &Interrupts,
    out: &dyn Output,
) -> Result<ExitStatus, InstallError> {
    use std::os::fd::AsFd;
    use std::os::unix::process::CommandExt;
    let program = cmd.get_program().to_string_lossy().into_owned();
    if let Ok(stderr) = std::io::stderr().as_fd().try_clone_to_owned() {
        cmd.stdout(std::process::Stdio::from(stderr));
    }
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut child: Child = cmd
        .spawn()
        .map_err(|source| InstallError::Spawn { program, source })?;
    let mut told = false;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Ok(status);
        }
        let n = interrupts.count();
        if n == 1 && !told {
            out.note("Interrupted; letting the installer finish before restoring (Ctrl-C again stops it now).");
            told = true;
        }
        if n >= 2 {
            let _ = child.kill();
            return child.wait().map_err(|source| InstallError::Spawn {
                program: cmd.get_program().to_string_lossy().into_owned(),
                source,
            });
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}
