//! What the sweep's and the journals' tests share.

use std::path::{Path, PathBuf};

use super::layout::{group_of, journals, SUFFIX};

/// `look()` again until `settled` holds (for at most 5 s), and its last answer. A journal's lock
/// this process let go may be held a moment longer: a child another test forked to run a command
/// keeps a copy of the open file, and so of its lock, until it execs.
pub(super) fn once_let_go<T>(look: impl Fn() -> T, settled: impl Fn(&T) -> bool) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let seen = look();
        if settled(&seen) || std::time::Instant::now() > deadline {
            return seen;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The one journal of the run group `group`.
pub(super) fn only_journal_of(locks: &Path, group: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(journals(locks))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.strip_suffix(SUFFIX)
                .is_some_and(|stem| group_of(stem) == group)
        })
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}
