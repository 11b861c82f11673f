//! Installed bundles: agent-env's own, built into the binary, and every `[provides.bundles]` entry of a
//! plugin manifest (found from the manifest alone, without starting the plugin); and the resolution of
//! `agent-env run TEXT` to a folder or an installed bundle.

use std::path::{Path, PathBuf};

use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::names::{canonical_name, CORE_PACKAGE};

use super::error::BundleError;
use super::ids;
use super::model::Bundle;
use super::parser::parse_tree;
use super::tree::{EmbeddedFile, Tree};
use crate::paths::tilde_in;

/// The files of the shipped `hello` bundle.
pub static HELLO_FILES: &[EmbeddedFile] = &[
    EmbeddedFile {
        path: "README.md",
        bytes: include_bytes!("../../bundles/hello/README.md"),
    },
    EmbeddedFile {
        path: "artifacts/greeting/check.sh",
        bytes: include_bytes!("../../bundles/hello/artifacts/greeting/check.sh"),
    },
    EmbeddedFile {
        path: "artifacts/greeting/hello.txt",
        bytes: include_bytes!("../../bundles/hello/artifacts/greeting/hello.txt"),
    },
    EmbeddedFile {
        path: "tasks/hello.json",
        bytes: include_bytes!("../../bundles/hello/tasks/hello.json"),
    },
];

/// Where an installed bundle's files are.
#[derive(Debug, Clone)]
pub enum Location {
    /// Built into the agent-env binary.
    Embedded(&'static [EmbeddedFile]),
    /// A folder named by a plugin manifest.
    Folder(PathBuf),
}

impl std::fmt::Debug for EmbeddedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EmbeddedFile({})", self.path)
    }
}

/// A bundle some package installs.
#[derive(Debug, Clone)]
pub struct InstalledBundle {
    pub name: String,
    /// The package's canonical name.
    pub package: String,
    pub package_version: String,
    pub location: Location,
    /// The manifest that declared it (none for agent-env's own).
    pub manifest: Option<PathBuf>,
    /// Why it can't be used, when it can't (its folder is missing, its name is bad).
    pub problem: Option<String>,
    /// Another package installs a bundle of this name, so this one runs only as `<package>/<name>`.
    pub qualified_only: bool,
}

impl InstalledBundle {
    /// `<package>/<name>`.
    pub fn qualified_name(&self) -> String {
        format!("{}/{}", self.package, self.name)
    }

    /// The name `agent-env run` takes for it.
    pub fn run_name(&self) -> String {
        if self.qualified_only {
            self.qualified_name()
        } else {
            self.name.clone()
        }
    }

    pub fn is_core(&self) -> bool {
        self.package == CORE_PACKAGE
    }

    /// The root of its ids: `@local/<package>/<name>`.
    pub fn id_root(&self) -> String {
        ids::installed_id_root(&self.package, &self.name)
    }

    /// How its folder is shown (under the home folder `home` as `~/…`).
    pub fn folder_display(&self, home: Option<&Path>) -> String {
        match &self.location {
            Location::Embedded(_) => format!(
                "built into agent-env (agent-env bundle init FOLDER --from-bundle {} writes a copy)",
                self.name
            ),
            Location::Folder(p) => tilde_in(p, home),
        }
    }

    /// The reason `plugin list` gives for a qualified-only bundle.
    pub fn qualified_only_reason(&self) -> String {
        format!(
            "another package also installs '{}', so run this one as '{}'",
            self.name,
            self.qualified_name()
        )
    }

    /// Reads and checks the bundle; `home` is the home folder its messages show as `~`. One with a
    /// problem is refused as `<package>/<name>: <problem>`.
    pub fn parse(&self, home: Option<&Path>) -> Result<Bundle, BundleError> {
        if let Some(problem) = &self.problem {
            return Err(BundleError::one(format!(
                "{}: {problem}",
                self.qualified_name()
            )));
        }
        match &self.location {
            Location::Embedded(files) => parse_tree(
                Tree::Embedded(files),
                &self.qualified_name(),
                &self.id_root(),
            ),
            Location::Folder(p) => parse_tree(Tree::Disk(p), &tilde_in(p, home), &self.id_root()),
        }
    }

    /// The tree of its files.
    pub fn tree(&self) -> Tree<'_> {
        match &self.location {
            Location::Embedded(files) => Tree::Embedded(files),
            Location::Folder(p) => Tree::Disk(p),
        }
    }
}

/// agent-env's own bundles.
pub fn core_bundles() -> Vec<InstalledBundle> {
    vec![InstalledBundle {
        name: "hello".to_string(),
        package: CORE_PACKAGE.to_string(),
        package_version: crate::VERSION.to_string(),
        location: Location::Embedded(HELLO_FILES),
        manifest: None,
        problem: None,
        qualified_only: false,
    }]
}

/// Every installed bundle: agent-env's own, then each manifest's `[provides.bundles]` in the order
/// given; a name two packages install is qualified-only except for agent-env's own. A bundle whose
/// package needs another agent-env carries that as its problem, so it is listed as invalid and never run.
pub fn installed(manifests: &[Manifest]) -> Vec<InstalledBundle> {
    let mut all = core_bundles();
    for manifest in manifests {
        let Some(bundles) = manifest.provides.get("bundles") else {
            continue;
        };
        let package = manifest.canonical_name();
        for (name, entry) in bundles {
            let folder = manifest.folder().join(&entry.class);
            let problem = if let Some(needs) = crate::compat::incompatibility(manifest) {
                Some(format!("{package} {needs}"))
            } else if name.contains('/') {
                Some(format!("the bundle name '{name}' contains '/'"))
            } else if !folder.is_dir() {
                Some(format!(
                    "{} names the folder {} for the bundle '{name}', and there is no such folder",
                    manifest.path.display(),
                    folder.display()
                ))
            } else {
                None
            };
            all.push(InstalledBundle {
                name: name.clone(),
                package: package.clone(),
                package_version: manifest.version.clone(),
                location: Location::Folder(folder),
                manifest: Some(manifest.path.clone()),
                problem,
                qualified_only: false,
            });
        }
    }
    mark_qualified_only(&mut all);
    all
}

fn mark_qualified_only(all: &mut [InstalledBundle]) {
    let names: Vec<(String, String)> = all
        .iter()
        .map(|b| (b.name.clone(), b.package.clone()))
        .collect();
    for b in all.iter_mut() {
        let shared = names.iter().any(|(n, p)| *n == b.name && *p != b.package);
        if shared && !b.is_core() {
            b.qualified_only = true;
        }
    }
}

/// What `agent-env run TEXT` names.
#[derive(Debug)]
pub enum Target<'a> {
    /// A folder (canonical path).
    Folder(PathBuf),
    Installed(&'a InstalledBundle),
}

/// The folder `agent-env run TEXT` names (canonical; `~` is the home folder `home`): text starting
/// with `.`, `/` or `~`, or naming an existing folder. `Some(Err)` says why text written as a path
/// (`./b`, `/b`, `~/b`) names none; `None` means it is a bundle's name, for [`resolve_installed`]. A
/// folder comes before any installed bundle, so the installed bundles (and the plugins' manifests they
/// come from) are read only for `None`.
pub fn as_folder(text: &str, home: Option<&Path>) -> Option<Result<PathBuf, BundleError>> {
    let looks_like_path = text.starts_with('.') || text.starts_with('/') || text.starts_with('~');
    let path = crate::paths::tilde_expanded(text, home);
    if path.is_dir() {
        // A folder whose id would not be its own is refused here, before a run or a `--bundle` filter
        // uses it.
        return Some(
            std::fs::canonicalize(&path)
                .map_err(|e| BundleError::one(format!("{text}: can't be read: {e}")))
                .and_then(|canonical| {
                    super::folder_id::id_root(&canonical, home).map(|_| canonical)
                }),
        );
    }
    if let Some(hint) = task_file_hint(text, &path) {
        return Some(Err(BundleError::one(hint)));
    }
    if looks_like_path {
        return Some(Err(BundleError::one(if path.exists() {
            format!("{text}: not a folder; a bundle is a folder")
        } else {
            format!(
                "{text}: no such folder; give a bundle's folder, or an installed bundle's name \
                 (agent-env run lists the installed bundles)"
            )
        })));
    }
    None
}

/// For `text` naming a task file of a bundle folder (`./b/tasks/build.json`): that a run takes the
/// bundle's folder and the task's name, with the command that runs it.
fn task_file_hint(text: &str, path: &Path) -> Option<String> {
    let task = path.file_name()?.to_str()?.strip_suffix(".json")?;
    let in_tasks = path.parent()?.file_name().is_some_and(|d| d == "tasks");
    if !in_tasks || task.is_empty() || !path.is_file() {
        return None;
    }
    // The bundle's folder as the text gave it: what is left of it without `tasks/<name>.json`.
    let bundle = Path::new(text)
        .parent()
        .and_then(Path::parent)
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| ".".to_string());
    Some(format!(
        "{text}: a task file, not a bundle; a run takes the bundle's folder and the task's name: {}",
        crate::quote::line(&["agent-env", "run", &bundle, "--task", task])
    ))
}

/// The installed bundle a name that [`as_folder`] found no folder for stands for: `<name>` or
/// `<package>/<name>`.
pub fn resolve_installed<'a>(
    text: &str,
    installed: &'a [InstalledBundle],
) -> Result<Target<'a>, BundleError> {
    resolve_named(text, installed, "neither a folder nor an installed bundle")
}

/// [`resolve_installed`] where only an installed bundle's name is taken (`bundle init
/// --from-bundle`): one that names none is "not an installed bundle".
pub fn resolve_installed_only<'a>(
    text: &str,
    installed: &'a [InstalledBundle],
) -> Result<Target<'a>, BundleError> {
    resolve_named(text, installed, "not an installed bundle")
}

/// The installed bundle `text` names; `unknown` says what one that names none is.
fn resolve_named<'a>(
    text: &str,
    installed: &'a [InstalledBundle],
    unknown: &str,
) -> Result<Target<'a>, BundleError> {
    if let Some((package, name)) = text.split_once('/') {
        let package = canonical_name(package);
        if let Some(b) = installed
            .iter()
            .find(|b| b.package == package && b.name == name)
        {
            return Ok(Target::Installed(b));
        }
    } else {
        let matches: Vec<&InstalledBundle> = installed.iter().filter(|b| b.name == text).collect();
        if let Some(core) = matches.iter().find(|b| b.is_core()) {
            return Ok(Target::Installed(core));
        }
        match matches.as_slice() {
            [one] => return Ok(Target::Installed(one)),
            [] => {}
            several => {
                let names: Vec<String> = several
                    .iter()
                    .map(|b| format!("'{}'", b.qualified_name()))
                    .collect();
                return Err(BundleError::one(format!(
                    "'{text}': several packages install a bundle of that name; run one of {}",
                    names.join(", ")
                )));
            }
        }
    }
    let candidates: Vec<String> = installed.iter().map(InstalledBundle::run_name).collect();
    let hint = if let Some(name) = original_only_bundle(text) {
        format!(
            ": the bundle '{name}' belonged to the Python agent-env and is not part of this one"
        )
    } else {
        match closest(text, &candidates) {
            Some(c) => format!("; did you mean '{c}'?"),
            None => String::new(),
        }
    };
    Err(BundleError::one(format!(
        "'{text}' is {unknown}{hint} (agent-env run lists the installed bundles)"
    )))
}

/// The bundles the Python agent-env installed that this one does not (it ships `hello`).
const ORIGINAL_ONLY_BUNDLES: [&str; 4] = ["agents", "drivers", "echo-mcp", "mail-mcp"];

/// The bundle of the Python agent-env that `text` names (`echo-mcp`, or `agentenv-framework/echo-mcp`)
/// and this agent-env does not ship.
fn original_only_bundle(text: &str) -> Option<&'static str> {
    let name = match text.split_once('/') {
        Some((package, name)) if canonical_name(package) == CORE_PACKAGE => name,
        Some(_) => return None,
        None => text,
    };
    ORIGINAL_ONLY_BUNDLES.into_iter().find(|b| *b == name)
}

/// The candidate most like `text`, when one is close enough to be a likely typo.
fn closest<'c>(text: &str, candidates: &'c [String]) -> Option<&'c str> {
    candidates
        .iter()
        .map(|c| (strsim::normalized_levenshtein(text, c), c))
        .filter(|(score, _)| *score >= 0.6)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.as_str())
}

/// Parses a bundle folder (canonicalized); its ids are rooted at its path, relative to the home
/// folder `home` when it lies inside it.
pub fn parse_folder(folder: &Path, home: Option<&Path>) -> Result<Bundle, BundleError> {
    let canonical = std::fs::canonicalize(folder)
        .map_err(|e| BundleError::one(format!("{}: can't be read: {e}", folder.display())))?;
    let id_root = super::folder_id::id_root(&canonical, home)?;
    let home = home.and_then(|h| std::fs::canonicalize(h).ok());
    parse_tree(
        Tree::Disk(&canonical),
        &tilde_in(&canonical, home.as_deref()),
        &id_root,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn other(package: &str, name: &str) -> InstalledBundle {
        InstalledBundle {
            name: name.to_string(),
            package: package.to_string(),
            package_version: "1.0.0".to_string(),
            location: Location::Folder(PathBuf::from("/nonexistent")),
            manifest: None,
            problem: None,
            qualified_only: false,
        }
    }

    #[test]
    fn the_core_bundle_keeps_its_bare_name() {
        let mut all = core_bundles();
        all.push(other("demo", "hello"));
        mark_qualified_only(&mut all);
        assert!(!all[0].qualified_only);
        assert!(all[1].qualified_only);
        match resolve_installed("hello", &all) {
            Ok(Target::Installed(b)) => assert!(b.is_core()),
            other => panic!("{other:?}"),
        }
        match resolve_installed("demo/hello", &all) {
            Ok(Target::Installed(b)) => assert_eq!(b.package, "demo"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn two_packages_sharing_a_name_need_qualified_names() {
        let mut all = vec![other("a", "x"), other("b", "x")];
        mark_qualified_only(&mut all);
        assert!(all.iter().all(|b| b.qualified_only));
        let err = resolve_installed("x", &all).unwrap_err().to_string();
        assert_eq!(
            err,
            "'x': several packages install a bundle of that name; run one of 'a/x', 'b/x'"
        );
    }

    #[test]
    fn unknown_names_get_a_suggestion() {
        let all = core_bundles();
        let err = resolve_installed("helo", &all).unwrap_err().to_string();
        assert_eq!(
            err,
            "'helo' is neither a folder nor an installed bundle; did you mean 'hello'? (agent-env run lists the installed bundles)"
        );
        let err = resolve_installed("zzzzzz", &all).unwrap_err().to_string();
        assert!(!err.contains("did you mean"));
    }

    #[test]
    fn the_python_agent_envs_other_bundles_are_said_to_be_its() {
        let all = core_bundles();
        for name in [
            "echo-mcp",
            "agents",
            "drivers",
            "mail-mcp",
            "agentenv-framework/echo-mcp",
        ] {
            let err = resolve_installed(name, &all).unwrap_err().to_string();
            let bare = name.rsplit('/').next().unwrap();
            assert_eq!(
                err,
                format!("'{name}' is neither a folder nor an installed bundle: the bundle '{bare}' belonged to the Python agent-env and is not part of this one (agent-env run lists the installed bundles)")
            );
        }
        let other = resolve_installed("team/echo-mcp", &all)
            .unwrap_err()
            .to_string();
        assert!(!other.contains("Python agent-env"), "{other}");
    }

    #[test]
    fn the_shipped_hello_parses() {
        let hello = core_bundles().remove(0).parse(None).unwrap();
        assert_eq!(hello.id_root, "@local/agentenv-framework/hello");
        assert_eq!(hello.tasks.len(), 1);
        assert_eq!(hello.tasks[0].id, "@local/agentenv-framework/hello/hello");
        assert_eq!(hello.artifacts[0].artifact_type, "file_artifact_universe");
        assert_eq!(hello.artifacts[0].files, vec!["check.sh", "hello.txt"]);
        assert_eq!(
            hello.description.as_deref(),
            Some("The smallest bundle: load a greeting into a local sandbox and check it.")
        );
    }

    #[test]
    fn a_tilde_is_the_home_folder_it_is_handed() {
        let tmp = tempfile::tempdir().unwrap();
        let folder = tmp.path().join("work/b");
        std::fs::create_dir_all(&folder).unwrap();
        match as_folder("~/work/b", Some(tmp.path())) {
            Some(Ok(path)) => assert_eq!(path, std::fs::canonicalize(&folder).unwrap()),
            other => panic!("{other:?}"),
        }
        let err = as_folder("~/work/b", None)
            .unwrap()
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "~/work/b: no such folder; give a bundle's folder, or an installed bundle's name (agent-env run lists the installed bundles)"
        );
        assert_eq!(
            other("demo", "x").folder_display(Some(Path::new("/elsewhere"))),
            "/nonexistent"
        );
        let under_home = InstalledBundle {
            location: Location::Folder(tmp.path().join("work/b")),
            ..other("demo", "x")
        };
        assert_eq!(under_home.folder_display(Some(tmp.path())), "~/work/b");
    }
}
