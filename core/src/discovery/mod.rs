//! Finding plugins from their manifests. Nothing here runs plugin code.
//!
//! Manifests are found in this order, and the first copy of a package (by canonical name) wins; later copies
//! are kept as [`ShadowedCopy`] so `plugin show` can name them:
//!
//! 1. the plugins directory ([`crate::paths::Paths::plugins_dir`]): one folder per plugin holding
//!    `agent-env-plugin.toml`;
//!    then `<plugins dir>/.python/share/agent-env/plugins/<name>.toml` (the venv `plugin add` manages);
//! 2. each directory on `PATH`, canonicalised and read once (so `/bin` and `/usr/bin` count once):
//!    `agent-env-plugin-<name>.toml` files in the directory itself, then `<dir>/../share/agent-env/plugins/<name>.toml`.
//!
//! Empty and relative `PATH` entries are skipped. A manifest that does not parse is kept as a
//! [`BrokenManifest`] and hides nothing else.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use agent_env_protocol::manifest::{Manifest, ManifestError, MANIFEST_FILE};

pub mod env_request;
pub mod not_installed;
pub mod permissions;
pub mod pins;
pub mod python_record;

/// File-name prefix of a manifest installed beside an executable on `PATH`.
pub const PATH_MANIFEST_PREFIX: &str = "agent-env-plugin-";
/// Where installers put data files, relative to a `PATH` directory's parent.
pub const SHARE_SUBDIR: &str = "share/agent-env/plugins";

/// Where a manifest was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A folder in the plugins directory.
    PluginsDir,
    /// `agent-env-plugin-<name>.toml` in a `PATH` directory.
    PathDir,
    /// `<dir>/../share/agent-env/plugins/<name>.toml` for a `PATH` directory.
    ShareDir,
}

impl Source {
    pub fn describe(self) -> &'static str {
        match self {
            Source::PluginsDir => "the plugins directory",
            Source::PathDir => "a PATH directory",
            Source::ShareDir => "a share/agent-env/plugins directory beside PATH",
        }
    }
}

/// A plugin package: the first manifest found for its canonical name.
#[derive(Debug, Clone)]
pub struct DiscoveredPlugin {
    pub manifest: Manifest,
    pub source: Source,
    /// Later manifests of the same package, which are not used.
    pub shadowed: Vec<ShadowedCopy>,
}

/// A later copy of a package that an earlier one hides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShadowedCopy {
    pub path: PathBuf,
    pub version: String,
}

/// A manifest that could not be read or parsed.
#[derive(Debug, Clone)]
pub struct BrokenManifest {
    /// The package name the file's name suggests (a folder name, or `<name>` of `agent-env-plugin-<name>.toml`).
    pub label: String,
    pub path: PathBuf,
    pub error: ManifestError,
}

/// Everything discovery found.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// In discovery order.
    pub plugins: Vec<DiscoveredPlugin>,
    pub broken: Vec<BrokenManifest>,
}

impl Discovery {
    /// The plugin whose canonical name is `canonical`.
    pub fn find(&self, canonical: &str) -> Option<&DiscoveredPlugin> {
        self.plugins
            .iter()
            .find(|p| p.manifest.canonical_name() == canonical)
    }
}

/// Where to look: the plugins directory and the `PATH` directories, as given.
#[derive(Debug, Clone)]
pub struct SearchPath {
    pub plugins_dir: PathBuf,
    pub path_dirs: Vec<PathBuf>,
}

impl SearchPath {
    /// From a plugins directory and a `PATH`-style value.
    pub fn new(plugins_dir: PathBuf, path_var: &OsString) -> SearchPath {
        SearchPath {
            plugins_dir,
            path_dirs: std::env::split_paths(path_var).collect(),
        }
    }
}

/// Reads every manifest the search path holds.
pub fn discover(search: &SearchPath) -> Discovery {
    candidates(search).into_discovery()
}

/// The manifest files [`discover`] reads from `search`, in its order, without reading them (a folder
/// of the plugins directory whose manifest is missing is listed too, as discovery reports it broken):
/// what a reader that wants to know whether the plugins changed looks at.
pub fn manifest_paths(search: &SearchPath) -> Vec<PathBuf> {
    candidates(search)
        .candidates
        .into_iter()
        .map(|(path, _, _)| path)
        .collect()
}

/// The manifest files to read from `search`, found by discovery's rules.
fn candidates(search: &SearchPath) -> Found {
    let mut found = Found::default();
    scan_plugins_dir(&search.plugins_dir, &mut found);
    // The Python venv `plugin add` manages puts its packages' manifests here, as pip does for any prefix.
    scan_share_dir(
        &search.plugins_dir.join(".python").join(SHARE_SUBDIR),
        &mut found,
    );
    let mut seen_dirs: HashSet<PathBuf> = HashSet::new();
    for dir in &search.path_dirs {
        if dir.as_os_str().is_empty() || dir.is_relative() {
            continue;
        }
        let Ok(canonical) = dir.canonicalize() else {
            continue;
        };
        if !seen_dirs.insert(canonical.clone()) {
            continue;
        }
        scan_path_dir(&canonical, &mut found);
        if let Some(parent) = canonical.parent() {
            let share = parent.join(SHARE_SUBDIR);
            if seen_dirs.insert(share.clone()) {
                scan_share_dir(&share, &mut found);
            }
        }
    }
    found
}

/// Manifest files to read, in discovery order.
#[derive(Default)]
struct Found {
    candidates: Vec<(PathBuf, String, Source)>,
    /// Paths already listed, so a file reached twice is read once.
    seen: HashSet<PathBuf>,
    /// Folders of plugins that could not be read, as failures of their own.
    unreadable: Vec<BrokenManifest>,
}

/// Below this many manifests, reading them on one thread is faster than starting more.
const PARALLEL_FROM: usize = 32;

impl Found {
    fn take(&mut self, path: PathBuf, label: String, source: Source) {
        if self.seen.insert(path.clone()) {
            self.candidates.push((path, label, source));
        }
    }

    /// Reads and parses every candidate (on several threads when there are many), then keeps the first
    /// copy of each package.
    fn into_discovery(self) -> Discovery {
        let parsed = load_all(&self.candidates);
        let mut discovery = Discovery {
            broken: self.unreadable,
            ..Discovery::default()
        };
        let mut index: HashMap<String, usize> = HashMap::new();
        for ((path, label, source), result) in self.candidates.into_iter().zip(parsed) {
            match result {
                Ok(manifest) => {
                    let canonical = manifest.canonical_name();
                    match index.get(&canonical) {
                        Some(&winner) => discovery.plugins[winner].shadowed.push(ShadowedCopy {
                            path,
                            version: manifest.version,
                        }),
                        None => {
                            index.insert(canonical, discovery.plugins.len());
                            discovery.plugins.push(DiscoveredPlugin {
                                manifest,
                                source,
                                shadowed: Vec::new(),
                            });
                        }
                    }
                }
                Err(error) => discovery.broken.push(BrokenManifest { label, path, error }),
            }
        }
        discovery
    }
}

fn load_all(candidates: &[(PathBuf, String, Source)]) -> Vec<Result<Manifest, ManifestError>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(4);
    if candidates.len() < PARALLEL_FROM || threads < 2 {
        return candidates
            .iter()
            .map(|(p, _, _)| Manifest::load(p))
            .collect();
    }
    let chunk = candidates.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = candidates
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|(p, _, _)| Manifest::load(p))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .zip(candidates.chunks(chunk))
            .flat_map(|(h, part)| {
                h.join()
                    .unwrap_or_else(|_| part.iter().map(|(p, _, _)| Manifest::load(p)).collect())
            })
            .collect()
    })
}

/// Sorted entries of a directory (name, path, is_dir); an unreadable or missing directory has none.
fn sorted_entries(dir: &Path) -> Vec<(String, PathBuf, bool)> {
    entries_or_why(dir).unwrap_or_default()
}

/// [`sorted_entries`], or why the directory could not be read; a missing one has none.
fn entries_or_why(dir: &Path) -> std::io::Result<Vec<(String, PathBuf, bool)>> {
    let read = match std::fs::read_dir(dir) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut entries: Vec<(String, PathBuf, bool)> = read
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let is_dir = e.file_type().ok().map(|t| t.is_dir() || t.is_symlink())?;
            Some((name, e.path(), is_dir))
        })
        .collect();
    entries.sort();
    Ok(entries)
}

/// Why the plugins directory `dir` can hold no plugin, when it is a file (or anything else that is not
/// a folder): nothing is found there, and `plugin add` has nowhere to install. A missing one is fine:
/// `plugin add` makes it.
pub fn plugins_dir_not_a_folder(dir: &Path) -> Option<String> {
    let meta = std::fs::metadata(dir).ok()?;
    (!meta.is_dir()).then(|| {
        format!(
            "the plugins directory {} is a file, not a folder; move the file away, or set AGENT_ENV_PLUGIN_DIR to a folder",
            dir.display()
        )
    })
}

/// The plugins folder's plugins. One that cannot be read hides every plugin installed there, so it
/// is a failure of the report's own (`plugin check` fails), not an empty folder. One that is a file
/// holds none: the session warns of it ([`plugins_dir_not_a_folder`]), and it is no package.
fn scan_plugins_dir(dir: &Path, found: &mut Found) {
    if plugins_dir_not_a_folder(dir).is_some() {
        return;
    }
    let entries = match entries_or_why(dir) {
        Ok(entries) => entries,
        Err(e) => {
            found.unreadable.push(BrokenManifest {
                label: dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                path: dir.to_path_buf(),
                error: ManifestError {
                    path: dir.to_path_buf(),
                    line: None,
                    column: None,
                    key: None,
                    message: format!(
                        "the plugins folder cannot be read ({e}), so no plugin installed there is found; let this user read it (chmod u+rx)"
                    ),
                },
            });
            return;
        }
    };
    for (name, path, is_dir) in entries {
        if name.starts_with('.') || !is_dir {
            continue;
        }
        let manifest = path.join(MANIFEST_FILE);
        if path.is_dir() {
            found.take(manifest, name, Source::PluginsDir);
        }
    }
}

fn scan_path_dir(dir: &Path, found: &mut Found) {
    for (name, path, _) in sorted_entries(dir) {
        let Some(label) = name
            .strip_prefix(PATH_MANIFEST_PREFIX)
            .and_then(|rest| rest.strip_suffix(".toml"))
        else {
            continue;
        };
        if label.is_empty() {
            continue;
        }
        found.take(path, label.to_string(), Source::PathDir);
    }
}

fn scan_share_dir(dir: &Path, found: &mut Found) {
    for (name, path, _) in sorted_entries(dir) {
        let Some(label) = name.strip_suffix(".toml") else {
            continue;
        };
        if label.is_empty() || name.starts_with('.') {
            continue;
        }
        found.take(path, label.to_string(), Source::ShareDir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(name: &str, version: &str) -> String {
        format!(
            "[plugin]\nname = \"{name}\"\nversion = \"{version}\"\nexec = [\"x\"]\nprotocol = [1, 1]\n"
        )
    }

    #[test]
    fn first_copy_wins_and_later_ones_are_shadowed() {
        let tmp = tempfile::tempdir().unwrap();
        let plugins = tmp.path().join("plugins");
        std::fs::create_dir_all(plugins.join("a")).unwrap();
        std::fs::write(
            plugins.join("a").join(MANIFEST_FILE),
            manifest("pkg-a", "1"),
        )
        .unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("agent-env-plugin-a.toml"), manifest("Pkg_A", "2")).unwrap();
        std::fs::write(bin.join("agent-env-plugin-bad.toml"), "[plugin\n").unwrap();
        let share = tmp.path().join(SHARE_SUBDIR);
        std::fs::create_dir_all(&share).unwrap();
        std::fs::write(share.join("b.toml"), manifest("pkg-b", "3")).unwrap();
        let path = std::env::join_paths([bin.clone(), bin.clone(), PathBuf::from("rel")]).unwrap();
        let d = discover(&SearchPath::new(plugins, &path));
        assert_eq!(d.plugins.len(), 2);
        assert_eq!(d.plugins[0].manifest.name, "pkg-a");
        assert_eq!(d.plugins[0].shadowed.len(), 1);
        assert_eq!(d.plugins[0].shadowed[0].version, "2");
        assert_eq!(d.plugins[1].source, Source::ShareDir);
        assert_eq!(d.broken.len(), 1);
        assert_eq!(d.broken[0].label, "bad");
    }

    #[test]
    fn many_manifests_keep_their_order_when_read_in_parallel() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for i in 0..60 {
            // Every tenth is a second copy of the package before it; file names sort by number.
            let package = if i % 10 == 9 { i - 1 } else { i };
            std::fs::write(
                bin.join(format!("agent-env-plugin-{i:03}.toml")),
                manifest(&format!("pkg-{package}"), &i.to_string()),
            )
            .unwrap();
        }
        let path = std::env::join_paths([bin]).unwrap();
        let d = discover(&SearchPath::new(tmp.path().join("none"), &path));
        assert_eq!(d.plugins.len(), 54);
        let names: Vec<&str> = d.plugins.iter().map(|p| p.manifest.name.as_str()).collect();
        assert_eq!(&names[..3], ["pkg-0", "pkg-1", "pkg-2"]);
        let eight = d
            .plugins
            .iter()
            .find(|p| p.manifest.name == "pkg-8")
            .unwrap();
        assert_eq!(eight.manifest.version, "8");
        assert_eq!(eight.shadowed[0].version, "9");
    }
}
