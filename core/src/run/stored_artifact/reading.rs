//! `agent-env artifact get ID`: where a version of an artifact is read from. A bare id names a stored
//! artifact, which `artifact put` wrote to the configured stores; an `@local` id names an artifact of
//! a bundle's `artifacts/` folder as a bundle run recorded it, in this machine's local stores
//! ([`local_stores`]), whose object store holds its files. `--verify` reads the files from the object
//! store of the same pair, the one they were written to.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::bundle::ids::{folder_id_root, DERIVED_SEPARATOR, LOCAL_PREFIX};
use crate::run::local_stores::{self, LocalVersion};
use crate::run::stored_task::{self, ARTIFACTS};
use crate::run::RunError;
use crate::session::Session;
use crate::stores::{Document, DocumentStore, Filter, ObjectStore};

/// How many of a bundle's recorded artifacts a message names before it says how many more there are.
const NAMED_AT_MOST: usize = 5;

/// Whether `id` names an artifact a bundle run recorded (an `@local` id), read from the local stores.
pub fn recorded_by_a_bundle(id: &str) -> bool {
    id.starts_with(LOCAL_PREFIX)
}

/// The artifact `id` at `version`, or its latest: a bundle's from the local document store, a stored
/// one from the configured document store.
pub fn get_artifact(
    session: &Session,
    id: &str,
    version: Option<i64>,
) -> Result<Document, RunError> {
    if !recorded_by_a_bundle(id) {
        return stored_task::get_document(session, ARTIFACTS, id, version);
    }
    let recorded_id = as_recorded(id, session.paths().home_dir().as_deref());
    let id = recorded_id.as_str();
    let documents = local_stores::open(&session.paths().state_root()).documents;
    let found =
        local_stores::read_version(documents.as_ref(), ARTIFACTS, id, version).map_err(|e| {
            RunError::NotStored(format!(
                "can't read the artifact '{id}' from the local document store: {e}"
            ))
        })?;
    let newest = match found {
        LocalVersion::Found(doc) => return Ok(doc),
        LocalVersion::Missing { newest } => newest,
    };
    Err(RunError::NotStored(match (version, newest) {
        (Some(asked), Some(newest)) => format!(
            "no artifact '{id}' v{asked} in the local document store, where bundle runs record their artifacts; its newest version is v{newest}"
        ),
        _ => not_recorded(documents.as_ref(), id, version),
    }))
}

/// The @local id `id` as bundle runs record it: less a trailing `/`, and, spelled by an absolute
/// path under the home folder `home`, as `@local/~/…` (the id such a folder's bundle has, as
/// [`folder_id_root`] gives it).
fn as_recorded(id: &str, home: Option<&Path>) -> String {
    let id = id.trim_end_matches('/');
    let Some(bare) = id.strip_prefix(LOCAL_PREFIX) else {
        return id.to_string();
    };
    let path = Path::new("/").join(bare);
    // The home folder as given, and as its canonical path (folder ids are made from canonical ones).
    let homes = home
        .filter(|h| h.components().count() > 1)
        .into_iter()
        .flat_map(|h| [Some(h.to_path_buf()), h.canonicalize().ok()])
        .flatten();
    for home in homes {
        if path.starts_with(&home) {
            if let Some(under_home) = folder_id_root(&path, Some(&home)) {
                return under_home;
            }
        }
    }
    id.to_string()
}

/// The object store the files of the artifact `id` were written to: the local one for a bundle's, the
/// configured one for a stored artifact's.
pub fn object_store_of(session: &Session, id: &str) -> Result<Arc<dyn ObjectStore>, RunError> {
    match recorded_by_a_bundle(id) {
        true => Ok(local_stores::open(&session.paths().state_root()).objects),
        false => Ok(stored_task::configured_stores(session)?.objects),
    }
}

/// What is said of the @local id `id` no bundle run recorded: the artifacts its bundle's runs did
/// record, when there are any (the id was mistyped), else how to record it.
fn not_recorded(documents: &dyn DocumentStore, id: &str, version: Option<i64>) -> String {
    let which = version.map_or(String::new(), |v| format!(" v{v}"));
    let said = format!(
        "no artifact '{id}'{which} in the local document store, where bundle runs record their artifacts"
    );
    let root = bundle_root(id);
    let run = run_command(root);
    let recorded = recorded_of_bundle(documents, root);
    if recorded.is_empty() {
        return format!(
            "{said}; no run of its bundle has recorded an artifact on this machine: {}, which records each artifact of the bundle's artifacts/ folder",
            match &run {
                Some(run) => format!("run it with {run}"),
                None => "run the bundle it came from with agent-env run FOLDER".to_string(),
            }
        );
    }
    let shown: Vec<String> = recorded
        .iter()
        .take(NAMED_AT_MOST)
        .map(|id| crate::quote::id(id))
        .collect();
    let more = match recorded.len().saturating_sub(NAMED_AT_MOST) {
        0 => String::new(),
        more => format!(" and {more} more"),
    };
    let (these, ids) = match recorded.len() {
        1 => ("an artifact", "that id"),
        _ => ("the artifacts", "one of those ids"),
    };
    let again = run.map_or(String::new(), |run| format!(" ({run})"));
    format!(
        "{said}; the runs of its bundle recorded {these} {}{more}: give {ids}, or add the artifact's folder to the bundle's artifacts/ and run the bundle again{again}",
        shown.join(", "),
    )
}

/// The id root of the bundle an @local id's entity came from: the id less its last name (a trailing
/// `/` is no name).
fn bundle_root(id: &str) -> &str {
    id.trim_end_matches('/')
        .rsplit_once('/')
        .map_or("", |(root, _)| root)
}

/// The ids of the artifacts the runs of the bundle `root` recorded, sorted, less the file artifacts a
/// universe's files are recorded as (their ids are derived from the universe's).
fn recorded_of_bundle(documents: &dyn DocumentStore, root: &str) -> Vec<String> {
    if root.is_empty() {
        return Vec::new();
    }
    let found = documents
        .latest_per_id(
            ARTIFACTS,
            &Filter::eq("bundle", root),
            "id",
            "version",
            None,
            None,
            0,
        )
        .unwrap_or_default();
    let mut ids: Vec<String> = found
        .iter()
        .filter_map(|doc| doc.get("id").and_then(Value::as_str))
        .filter(|id| !id.contains(DERIVED_SEPARATOR))
        .map(str::to_string)
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// The command that runs the bundle whose id root is `root`: `~/…` under the home folder, a folder
/// by its absolute path when it is here, an installed bundle as `<package>/<bundle>`; quoted for
/// pasting into a shell, with `~/` outside the quotes, where the shell expands it. `None` when the
/// bundle is not to be found from its id (a folder no longer here).
fn run_command(root: &str) -> Option<String> {
    let bare = root.strip_prefix(LOCAL_PREFIX)?;
    if let Some(under_home) = bare.strip_prefix("~/") {
        return Some(format!(
            "agent-env run ~/{}",
            crate::quote::word(under_home)
        ));
    }
    let folder = std::path::Path::new("/").join(bare);
    if !bare.is_empty() && folder.is_dir() {
        return Some(format!(
            "agent-env run {}",
            crate::quote::word(&folder.to_string_lossy())
        ));
    }
    match bare.split_once('/') {
        Some((_, name)) if !name.contains('/') => {
            Some(format!("agent-env run {}", crate::quote::word(bare)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_is_run_by_where_it_is() {
        assert_eq!(
            run_command("@local/~/my bundles/mb").as_deref(),
            Some("agent-env run ~/'my bundles/mb'")
        );
        assert_eq!(
            run_command("@local/agentenv-framework/hello").as_deref(),
            Some("agent-env run agentenv-framework/hello")
        );
        let here = tempfile::tempdir().unwrap();
        let root = format!("@local{}", here.path().display());
        assert_eq!(
            run_command(&root),
            Some(format!("agent-env run {}", here.path().display()))
        );
        assert_eq!(run_command("@local/no/such/folder/here"), None);
        assert_eq!(run_command("@local"), None);
    }

    #[test]
    fn the_root_is_the_id_less_its_last_name() {
        assert_eq!(bundle_root("@local/tmp/mb/data"), "@local/tmp/mb");
        assert_eq!(bundle_root("data"), "");
        assert_eq!(bundle_root("@local/~/hb/greeting/"), "@local/~/hb");
    }

    #[test]
    fn an_absolute_spelling_under_home_is_read_as_its_tilde_id() {
        let home = Some(Path::new("/home/me"));
        assert_eq!(
            as_recorded("@local/home/me/hb/greeting", home),
            "@local/~/hb/greeting"
        );
        assert_eq!(
            as_recorded("@local/~/hb/greeting/", home),
            "@local/~/hb/greeting"
        );
        assert_eq!(
            as_recorded("@local/srv/hb/greeting", home),
            "@local/srv/hb/greeting"
        );
        assert_eq!(
            as_recorded("@local/home/meow/x", home),
            "@local/home/meow/x"
        );
        assert_eq!(
            as_recorded("@local/pkg/b/a", Some(Path::new("/"))),
            "@local/pkg/b/a"
        );
    }
}
