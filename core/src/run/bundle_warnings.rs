//! What a run warns of before it starts, whoever starts it: a bundle run's list ([`before_run`],
//! `agent-env run` or the explorer) and a stored task's ([`before_stored_task_run`], `agent-env task
//! run`), which share what they say of the state folder, so all say the same.

use super::materialize::state_folder;
use crate::session::Session;

/// The warnings a bundle run shows before its first task, in order:
/// - each `[stores.<kind>]` section the run does not read that names a plugin's store no installed
///   plugin provides: it stops nothing here, but `config check` and the runs that read the section
///   fail on it;
/// - what the @local stores the run writes have to warn of (a `local.db` cut to 0 bytes);
/// - what every run says of its state folder ([`of_state_folder`]), HOME set to a relative path
///   among it whether or not the state folder is under the home folder: the run reads its bundle
///   argument against the home folder.
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
    let local = super::local_stores::warnings(&session.paths().state_root());
    look_up_home(session);
    unread_stores
        .into_iter()
        .chain(local)
        .chain(of_state_folder(session))
        .collect()
}

/// The warnings a stored task's run (`task run`) shows before it starts: what every run says of its
/// state folder ([`of_state_folder`]). The rest of [`before_run`]'s list is of a bundle run's own:
/// a stored task's run reads the stores the configuration selects, and not the @local ones.
pub fn before_stored_task_run(session: &Session) -> Vec<String> {
    look_up_home(session);
    of_state_folder(session)
}

/// Looks the home folder up before a run starts, so that a HOME it ignores is said with the state
/// folder's variables (before the run, in its log) rather than once it has ended: every run uses
/// it, whatever its state folder (a bundle run reads its bundle argument against it, `~` and a
/// folder's id root, and local sandboxes are made under `~/.agent-env-sandboxes`).
fn look_up_home(session: &Session) {
    let _ = session.paths().home_dir();
}

/// What a run says of the state folder it keeps its locks and log in, before it starts, in order:
/// - HOME or an XDG variable set to a relative path that the state folder was looked up through
///   (ignored, as the spec says): before the run, so that a person learns where its state goes
///   while it runs;
/// - HOME unset or empty, so that the state folder is under the home folder the user database
///   gives, which is not there (a container's `nobody`);
/// - a run as root in a state folder of another user's, who will not be able to write what the run
///   makes there.
fn of_state_folder(session: &Session) -> Vec<String> {
    let state_root = session.paths().state_root();
    let relative_vars = session.take_ignored_relative_vars();
    let home = state_folder::home_not_there_warning(session.env(), &state_root);
    let others = state_folder::others_folder_warning(&state_root);
    relative_vars
        .into_iter()
        .chain(home)
        .chain(others)
        .collect()
}
