//! What approving a package would change in its pins: each file whose pin is not what it was (another
//! sha256, pinned for the first time, or no longer pinned), said with the old and new sha256 so the
//! user sees what they approve before `plugin approve` pins it. Pins are matched by their file's path
//! as pins spell it (`discovery::pins::pin_path`): an older agent-env wrote
//! `…/plugins/../../../bin/x` for the `…/bin/x` pinned now, the same file.

use std::path::PathBuf;

use agent_env_host::pins::Pin;

use crate::discovery::pins::pin_path::normalised;

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

impl PinChange {
    /// A file not pinned before: agent-env pins more of a package's files than the agent-env that
    /// pinned it did (or the package starts from a new one), which is not a change to a pinned file.
    pub fn is_newly_pinned(&self) -> bool {
        self.was.is_none() && self.now.is_some()
    }

    /// A file pinned before whose sha256 is another now: what its user changed.
    pub fn is_changed(&self) -> bool {
        self.was.is_some() && self.now.is_some()
    }
}

/// The files whose pin differs between `before` and `after`, in `after`'s order, then those pinned
/// before and not now; a file is the same whichever way its path was spelled.
pub(super) fn pin_changes(before: &[Pin], after: &[Pin]) -> Vec<PinChange> {
    let before: Vec<(PathBuf, &Pin)> = before.iter().map(|p| (normalised(&p.path), p)).collect();
    let after: Vec<(PathBuf, &Pin)> = after.iter().map(|p| (normalised(&p.path), p)).collect();
    let was = |path: &PathBuf| before.iter().find(|(p, _)| p == path).map(|(_, pin)| *pin);
    let mut changes: Vec<PinChange> = after
        .iter()
        .filter(|(path, now)| was(path).is_none_or(|w| w.sha256 != now.sha256))
        .map(|(path, now)| PinChange {
            path: now.path.clone(),
            was: was(path).map(|w| w.sha256.clone()),
            now: Some(now.sha256.clone()),
        })
        .collect();
    changes.extend(
        before
            .iter()
            .filter(|(path, _)| !after.iter().any(|(now, _)| now == path))
            .map(|(_, w)| w)
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

    #[test]
    fn a_file_pinned_under_a_path_with_dot_dot_is_the_same_file_unchanged() {
        let before = [pin("/p/share/agent-env/plugins/../../../bin/x", "aaaa")];
        let after = [pin("/p/bin/x", "aaaa"), pin("/p/m.toml", "mmmm")];
        let changes = pin_changes(&before, &after);
        let lines: Vec<String> = changes.iter().map(change_line).collect();
        assert_eq!(lines, ["  /p/m.toml: not pinned before, now mmmm"]);
        assert!(changes[0].is_newly_pinned() && !changes[0].is_changed());
    }
}
