//! Ctrl-C, SIGTERM, SIGHUP and Ctrl-\ (SIGQUIT) during a change: the first one is noted (the installer finishes, then the change is
//! rolled back); a second one stops the installer at once.

use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::error::InstallError;
use crate::output::Output;

/// Counts SIGINT, SIGTERM, SIGHUP and SIGQUIT from the moment it is installed, and notes which came first.
#[derive(Clone)]
pub struct Interrupts {
    count: Arc<AtomicUsize>,
    /// The number of the first signal counted; 0 before one comes.
    first: Arc<AtomicI32>,
}

impl Interrupts {
    /// Installs the handlers (they replace the default "die at once").
    pub fn install() -> Interrupts {
        let count = Arc::new(AtomicUsize::new(0));
        let first = Arc::new(AtomicI32::new(0));
        use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
            let c = Arc::clone(&count);
            let f = Arc::clone(&first);
            // SAFETY: the handler only touches atomics, which is async-signal-safe.
            let _ = unsafe {
                signal_hook::low_level::register(signal, move || {
                    let _ = f.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
                    c.fetch_add(1, Ordering::SeqCst);
                })
            };
        }
        Interrupts { count, first }
    }

    /// Counts nothing: no handler is installed (for tests).
    #[cfg(test)]
    pub fn none() -> Interrupts {
        Interrupts {
            count: Arc::new(AtomicUsize::new(0)),
            first: Arc::new(AtomicI32::new(0)),
        }
    }

    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    pub fn interrupted(&self) -> bool {
        self.count() > 0
    }

    /// The number of the first signal counted (SIGINT before one comes): a change it stopped exits
    /// with 128 + this, as every command a signal stops does.
    pub fn signal(&self) -> i32 {
        match self.first.load(Ordering::SeqCst) {
            0 => signal_hook::consts::SIGINT,
            n => n,
        }
    }
}

/// How an installer ended, and the end of what it wrote (for advice that depends on why it failed).
pub struct Finished {
    pub status: ExitStatus,
    /// The last [`SAID_KEPT`] bytes it wrote to stdout and stderr, as text.
    pub said: String,
}

/// How much of an installer's output [`run_to_end`] keeps for advice.
const SAID_KEPT: usize = 16 * 1024;

/// Runs `cmd` to the end with SIGINT ignored in the child (so a Ctrl-C at the terminal lets it finish);
/// a second interrupt kills it. The child keeps the terminal's stdin, so its own prompts work; what it
/// writes to stdout and stderr goes on to agent-env's stderr as it comes (stdout is the command's own:
/// one document under `--json`, which pip's progress lines would break), and its end is kept.
pub fn run_to_end(
    mut cmd: Command,
    interrupts: &Interrupts,
    out: &dyn Output,
) -> Result<Finished, InstallError> {
    use std::os::unix::process::CommandExt;
    let program = cmd.get_program().to_string_lossy().into_owned();
    let spawn_error = |source| InstallError::Spawn {
        program: program.clone(),
        source,
    };
    let (reader, writer) = std::io::pipe().map_err(spawn_error)?;
    cmd.stdout(writer.try_clone().map_err(spawn_error)?);
    cmd.stderr(writer);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let spawned = cmd.spawn();
    // The command holds the pipe's write ends: dropped, the pipe ends when the installer does.
    drop(cmd);
    let mut child: Child = spawned.map_err(spawn_error)?;
    let said = tee_to_stderr(reader);
    let mut told = false;
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        let n = interrupts.count();
        if n == 1 && !told {
            out.note("Interrupted; letting the installer finish before restoring (Ctrl-C again stops it now).");
            told = true;
        }
        if n >= 2 {
            let _ = child.kill();
            break child.wait().map_err(spawn_error)?;
        }
        std::thread::sleep(Duration::from_millis(25));
    };
    // What it wrote last, once the pipe ends (a process it left running may hold the pipe: then
    // what was read so far).
    let said = said
        .recv_timeout(Duration::from_secs(2))
        .unwrap_or_default();
    Ok(Finished { status, said })
}

/// Writes the whole lines of `pending` to `out`, masked, and keeps the rest for the next read: all
/// of it at the `end`, or when it has grown past a line's reasonable length.
fn pass_on_lines(pending: &mut Vec<u8>, end: bool, out: &mut impl std::io::Write) {
    let whole = match pending.iter().rposition(|&b| b == b'\n' || b == b'\r') {
        _ if end || pending.len() > LINE_HELD => pending.len(),
        Some(last) => last + 1,
        None => return,
    };
    let text = String::from_utf8_lossy(&pending[..whole]);
    let _ = out.write_all(masked(&text).as_bytes());
    pending.drain(..whole);
}

/// `text` with every secret the invocation knows masked, and the credentials of every URL in it
/// (a spec's `NAME @ https://user:token@host/...`, which pip's `Collecting` line repeats) however short.
fn masked(text: &str) -> String {
    crate::redaction::redact(&crate::redaction::mask_url_credentials(text)).into_owned()
}

/// How long a line without its end is held back for the rest of it.
const LINE_HELD: usize = 64 * 1024;

/// Copies what `reader` gives to agent-env's stderr as it comes, a line at a time (a progress
/// bar's `\r` ends one too) with every secret the invocation knows masked (a password in
/// `--index-url` that an installer prints), on a thread; the channel gets the end of it once the
/// pipe ends.
fn tee_to_stderr(mut reader: std::io::PipeReader) -> std::sync::mpsc::Receiver<String> {
    use std::io::Read;
    let (send, receive) = std::sync::mpsc::channel();
    let copied = std::thread::Builder::new()
        .name("installer-output".into())
        .spawn(move || {
            let mut kept: Vec<u8> = Vec::new();
            let mut buffer = [0u8; 8192];
            let mut pending: Vec<u8> = Vec::new();
            loop {
                match reader.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => {
                        pending.extend_from_slice(&buffer[..n]);
                        pass_on_lines(&mut pending, false, &mut std::io::stderr());
                        kept.extend_from_slice(&buffer[..n]);
                        if kept.len() > 2 * SAID_KEPT {
                            kept.drain(..kept.len() - SAID_KEPT);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            pass_on_lines(&mut pending, true, &mut std::io::stderr());
            let start = kept.len().saturating_sub(SAID_KEPT);
            let said = String::from_utf8_lossy(&kept[start..]);
            let _ = send.send(masked(&said));
        });
    // Without the thread, nothing is shown; the installer's end status still counts.
    if copied.is_err() {
        let (_, empty) = std::sync::mpsc::channel();
        return empty;
    }
    receive
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installer_lines_are_passed_on_whole_and_masked() {
        crate::redaction::remember("hunter2-index-pass");
        let mut out = Vec::new();
        // The secret arrives split over two reads: the line is held until its end comes.
        let mut pending = b"Looking in indexes: https://me:hunter2-in".to_vec();
        pass_on_lines(&mut pending, false, &mut out);
        assert!(out.is_empty());
        pending.extend_from_slice(b"dex-pass@pypi.example/simple\nCollecting x");
        pass_on_lines(&mut pending, false, &mut out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            "Looking in indexes: https://me:***@pypi.example/simple\n"
        );
        assert_eq!(pending, b"Collecting x");
        pass_on_lines(&mut pending, true, &mut out);
        assert!(String::from_utf8_lossy(&out).ends_with("\nCollecting x"));
        assert!(pending.is_empty());
    }
}
