//! How a run's journal lies on the disk: its folder under the locks folder, its file's name (the run
//! group, and what makes it one run's), and the lines it holds, each told by how it starts.

use std::path::{Path, PathBuf};

/// A journal's file name ends so.
pub(super) const SUFFIX: &str = ".journal";
/// A journal's line for a sandbox deployed.
pub(super) const SANDBOX_LINE: &str = "sandbox\t";
/// A journal's line for an instance whose end was not written.
pub(super) const UNRECORDED_LINE: &str = "unrecorded\t";
/// A journal's line holding the final document of an instance whose end was not written, as JSON.
pub(super) const FINAL_LINE: &str = "final\t";
/// A journal's last line when its run ended (and kept it for an unwritten end).
pub(super) const ENDED_LINE: &str = "ended";
/// A journal's first line: the document store its run's instances go to.
pub(super) const STORE_LINE: &str = "instances\t";
/// A journal's line naming the configured store its run's instances go to: its fingerprint, a tab,
/// and its name as a person reads it ([`StoreIdentity`]).
///
/// [`StoreIdentity`]: crate::config::store_identity::StoreIdentity
pub(super) const STORE_IDENTITY_LINE: &str = "store\t";
/// A journal's line for the sandbox root its run deployed under (whole).
pub(super) const ROOT_LINE: &str = "root\t";
/// A journal's line for the process its run is ([`ProcessIdentity`]): while that process lives, the
/// run is live, whatever the journal's lock says (a copy of the journal has no lock).
///
/// [`ProcessIdentity`]: crate::run::process_identity::ProcessIdentity
pub(super) const PROCESS_LINE: &str = "process\t";

/// A journal's line for a process group a plugin leads, started while its run lived: the plugin's
/// process ([`ProcessIdentity`], whose pid is the group's id). When the run is killed, the kernel
/// ends the plugin, not the children it started, which keep its group.
///
/// [`ProcessIdentity`]: crate::run::process_identity::ProcessIdentity
pub(super) const PLUGIN_LINE: &str = "plugin\t";

/// What separates a journal's run group from the part that makes it one run's: several runs may share
/// a group (the explorer's runs of a group), each with a journal of its own.
pub(super) const RUN_MARK: char = '@';

/// The run group a journal's file name (without [`SUFFIX`]) is of: `<group>@<run>`, or `<group>` as
/// journals were named before.
pub(super) fn group_of(stem: &str) -> &str {
    stem.rsplit_once(RUN_MARK).map_or(stem, |(group, _)| group)
}

/// The run group of the journal named `file_name` in the journals folder; `None` for a file that is
/// not a journal (or one still being made).
pub(super) fn journal_group(file_name: &str) -> Option<&str> {
    file_name
        .strip_suffix(SUFFIX)
        .filter(|stem| !stem.starts_with('.'))
        .map(group_of)
}

/// The folder of the journals under the locks folder.
pub(super) fn journals(locks_dir: &Path) -> PathBuf {
    locks_dir.join("runs")
}
