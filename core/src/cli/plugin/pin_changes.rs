//! What approving a package would change in its pins: each file whose pin is not what it was (another
//! sha256, pinned for the first time, or no longer pinned), said with the old and new sha256 so the
//! user sees what they approve before `plugin approve` pins it.

use std::path::PathBuf;

use agent_env_host::pins::Pin;

/// How many hex digits of a sha256 a line shows.
const SHORT_SHA: usize = 12;

/// One file whose pin approving changes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(super) struct PinChange {
    pub path: PathBuf,
    /// The sha256 approved before; none when the file was not pinned.
    pub was: Option<String>,
    /// The sha256 it is pinned with now; none when it is no longer pinned.
    pub now: Option<String>,
}

/// The files whose pin differs between `before` and `after`, in `after`'s order, then those pinned
/// before and not now.
pub(super) fn pin_changes(before: &[Pin], after: &[Pin]) -> Vec<PinChange> {
    let was = |path: &PathBuf| before.iter().find(|p| &p.path == path);
    let mut changes: Vec<PinChange> = after
        .iter()
        .filter(|now| was(&now.path).is_none_or(|w| w.sha256 != now.sha256))
        .map(|now| PinChange {
            path: now.path.clone(),
            was: was(&now.path).map(|w| w.sha256.clone()),
            now: Some(now.sha256.clone()),
        })
        .collect();
    changes.extend(
        before
            .iter()
            .filter(|w| !after.iter().any(|now| now.path == w.path))
            .map(|w| PinChange {
                path: w.path.clone(),
                was: Some(w.sha256.clone()),
                now: None,
            }),
    );
    changes
}

/// One change as a line: `  PATH: sha256 OLD, now NEW` (short sha256s).
pub(super) fn change_line(change: &PinChange) -> String {
    let short = |sum: &str| sum.chars().take(SHORT_SHA).collect::<String>();
    let path = crate::printable::printable(&change.path.display().to_string()).into_owned();
    match (&change.was, &change.now) {
        (Some(was), Some(now)) => format!("  {path}: sha256 {}, now {}", short(was), short(now)),
        (None, Some(now)) => format!("  {path}: not pinned before, now {}", short(now)),
        (Some(was), None) => format!("  {path}: sha256 {}, no longer pinned", short(was)),
        (None, None) => format!("  {path}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(path: &str, sha: &str) -> Pin {
        Pin {
            path: path.into(),
            sha256: sha.into(),
            size: 0,
            ino: 0,
            ctime_ns: 0,
        }
    }

    #[test]
    fn a_changed_a_new_and_a_dropped_file_are_each_said_with_their_sha256s() {
        let before = [
            pin("/p/a", "aaaaaaaaaaaaaaaa"),
            pin("/p/m", "mmmm"),
            pin("/p/old", "0123456789abcdef"),
        ];
        let after = [
            pin("/p/a", "bbbbbbbbbbbbbbbb"),
            pin("/p/m", "mmmm"),
            pin("/p/new", "cccc"),
        ];
        let lines: Vec<String> = pin_changes(&before, &after)
            .iter()
            .map(change_line)
            .collect();
        assert_eq!(
            lines,
            [
                "  /p/a: sha256 aaaaaaaaaaaa, now bbbbbbbbbbbb",
                "  /p/new: not pinned before, now cccc",
                "  /p/old: sha256 0123456789ab, no longer pinned",
            ]
        );
        assert!(pin_changes(&after, &after).is_empty());
    }
}
