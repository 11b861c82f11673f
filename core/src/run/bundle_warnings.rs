//! What a bundle run warns of before it starts, whoever starts it (`agent-env run` or the explorer):
//! one list, so both say the same.

use super::materialize::state_folder;
use crate::session::Session;

/// The warnings a bundle run shows before its first task, in order:
/// - each `[stores.<kind>]` section the run does not read that names a plugin's store no installed
///   plugin provides: it stops nothing here, but `config check` and the runs that read the section
///   fail on it;
/// - what the @local stores the run writes have to warn of (a `local.db` cut to 0 bytes);
/// - HOME or an XDG variable set to a relative path that the run's state folder was looked up
///   through (ignored, as the spec says), HOME whether or not the state folder is under the home
///   folder (the run reads its bundle argument against it): before the run, so that a person learns
///   where its state goes while it runs;
/// - HOME unset or empty, so that the state folder is under the home folder the user database
///   gives, which is not there (a container's `nobody`);
/// - a run as root in a state folder of another user's, who will not be able to write what the run
///   makes there.
pub fn before_run(session: &Session) -> Vec<String> {
    let config = session.config();
    let unread_stores = match config.path {
        Some(_) => crate::config::check::unread_plugin_store_warnings(
            config,
            &session.manifests(),
            crate::config::check::BUNDLE_RUN_STORES,
        ),
        None => Vec::new(),
    };
    let state_root = session.paths().state_root();
    let local = super::local_stores::warnings(&state_root);
    // The run reads its bundle argument against the home folder (`~`, a folder's id root) first
    // thing: looked up now, so that a HOME it ignores is said with the state folder's variables.
    let _ = session.paths().home_dir();
    let relative_vars = session.take_ignored_relative_vars();
    let home = state_folder::home_not_there_warning(session.env(), &state_root);
    let others = state_folder::others_folder_warning(&state_root);
    unread_stores
        .into_iter()
        .chain(local)
        .chain(relative_vars)
        .chain(home)
        .chain(others)
        .collect()
}
