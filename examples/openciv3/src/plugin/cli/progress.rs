//! A progress bar for a file another process reads (the host's object store reading a tarball by path).
//!
//! The plugin hands the host a path and waits; the bytes are read by agent-env or by the store's own
//! plugin process, never by us. On Linux we can still see how far the reader is: its open descriptor on
//! the file has an offset in `/proc/<pid>/fdinfo/<fd>`. We look among our parent (agent-env) and its
//! children. Elsewhere, or when no reader is found, the line shows the elapsed time instead.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::gc_command::human_bytes;

/// Files at least this large get a bar.
pub const BAR_THRESHOLD: u64 = 8 * 1024 * 1024;
const TICK: Duration = Duration::from_millis(200);
const WIDTH: usize = 30;
/// An offset this much below the last one means the reader started over.
const CHUNK_SLACK: u64 = 4 * 1024 * 1024;

/// A bar drawn on stderr until dropped.
pub struct Progress {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts drawing when stderr is a terminal and the file is large; otherwise draws nothing.
    pub fn start(path: &Path, size: u64, label: &str) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        // SAFETY: isatty only inspects the descriptor number.
        let terminal = unsafe { libc::isatty(2) } == 1;
        let thread = (terminal && size >= BAR_THRESHOLD).then(|| {
            let stop = stop.clone();
            let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            let label = label.to_string();
            std::thread::spawn(move || draw_until(&stop, &path, size, &label))
        });
        Progress { stop, thread }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn draw_until(stop: &AtomicBool, path: &Path, size: u64, label: &str) {
    let started = Instant::now();
    let mut stderr = std::io::stderr();
    // A store may read the file more than once (the CAS store hashes it, then copies it).
    let (mut pass, mut last) = (1u32, 0u64);
    while !stop.load(Ordering::SeqCst) {
        let line = match reader_offset(path) {
            Some(offset) => {
                if offset + CHUNK_SLACK < last {
                    pass += 1;
                }
                last = offset;
                let label = if pass > 1 {
                    format!("{label} (pass {pass})")
                } else {
                    label.to_string()
                };
                bar(offset.min(size), size, &label)
            }
            None => format!(
                "{label}: {} … {}s",
                human_bytes(size),
                started.elapsed().as_secs()
            ),
        };
        let _ = write!(stderr, "\r\x1b[2K{line}");
        let _ = stderr.flush();
        std::thread::sleep(TICK);
    }
    let _ = write!(stderr, "\r\x1b[2K");
    let _ = stderr.flush();
}

/// `label [#########               ]  31%  41.6 MB / 134.2 MB`.
pub fn bar(done: u64, total: u64, label: &str) -> String {
    let fraction = if total == 0 {
        1.0
    } else {
        done as f64 / total as f64
    };
    let filled = ((fraction * WIDTH as f64).round() as usize).min(WIDTH);
    format!(
        "{label} [{}{}] {:>3}%  {} / {}",
        "#".repeat(filled),
        " ".repeat(WIDTH - filled),
        (fraction * 100.0).floor() as u64,
        human_bytes(done),
        human_bytes(total)
    )
}

#[cfg(target_os = "linux")]
fn reader_offset(path: &Path) -> Option<u64> {
    let parent = std::os::unix::process::parent_id();
    let me = std::process::id();
    let entries = std::fs::read_dir("/proc").ok()?;
    let mut best = None;
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me || (pid != parent && parent_of(pid) != Some(parent)) {
            continue;
        }
        if let Some(offset) = offset_in(pid, path) {
            best = Some(best.map_or(offset, |b: u64| b.max(offset)));
        }
    }
    best
}

#[cfg(not(target_os = "linux"))]
fn reader_offset(_path: &Path) -> Option<u64> {
    None
}

#[cfg(target_os = "linux")]
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses; the fields after its closing ')' are plain.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(target_os = "linux")]
fn offset_in(pid: u32, path: &Path) -> Option<u64> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    for fd in fds.flatten() {
        let Ok(target) = std::fs::read_link(fd.path()) else {
            continue;
        };
        if target == path {
            let info = std::fs::read_to_string(format!(
                "/proc/{pid}/fdinfo/{}",
                fd.file_name().to_string_lossy()
            ))
            .ok()?;
            return info
                .lines()
                .find_map(|l| l.strip_prefix("pos:"))
                .and_then(|p| p.trim().parse().ok());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_fills_with_the_fraction_done() {
        assert_eq!(
            bar(0, 100, "x"),
            format!("x [{}]   0%  0 B / 100 B", " ".repeat(30))
        );
        assert_eq!(
            bar(50, 100, "x"),
            format!(
                "x [{}{}]  50%  50 B / 100 B",
                "#".repeat(15),
                " ".repeat(15)
            )
        );
        assert!(bar(134_200_000, 134_200_000, "x").contains("100%  134.2 MB / 134.2 MB"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_readers_offset_is_seen_through_proc() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, vec![0u8; 4096]).unwrap();
        let path = std::fs::canonicalize(&path).unwrap();
        let mut file = std::fs::File::open(&path).unwrap();
        std::io::Read::read_exact(&mut file, &mut [0u8; 1000]).unwrap();
        assert_eq!(offset_in(std::process::id(), &path), Some(1000));
    }
}
