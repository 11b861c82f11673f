//! Which installed plugins a change touched, from the paths it changed in the plugins directory.
//!
//! A plugin added again after its code was edited keeps the same manifest, so comparing manifests
//! alone would miss it. A manifest is touched when its own bytes changed, or when a file of its
//! package did: for a folder plugin, anything in its folder; for a Python package in the managed
//! venv, its `*.dist-info/RECORD` (pip rewrites it whenever it installs the package, and it lists
//! the manifest among the package's files). A plugin imports libraries that are packages of their own,
//! without a manifest: when anything in the venv changed, the Python plugins the change asked for count
//! as touched too, since a library they import may be what changed though none of their own files did.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::PYTHON_ENV;
use crate::discovery::SHARE_SUBDIR;

/// A manifest found under the plugins directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledManifest {
    /// The package name the manifest gives.
    pub name: String,
    /// Where it is.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The version it gives.
    pub version: String,
}

/// Canonical name → the manifest of that package.
pub type Manifests = BTreeMap<String, InstalledManifest>;

/// The packages of `now` that the change touched (canonical name, package name): new or changed
/// manifests, manifests whose package files are among `changed` (relative to `plugins`), and, when
/// the venv changed, the manifests of the Python distributions named in `asked` (the specs' names).
pub fn touched(
    plugins: &Path,
    before: &Manifests,
    now: &Manifests,
    changed: &[PathBuf],
    asked: &[String],
) -> Vec<(String, String)> {
    let mut venv_manifests = manifests_in_changed_records(plugins, changed);
    if changed.iter().any(|p| p.starts_with(PYTHON_ENV)) {
        venv_manifests.extend(manifests_of_distributions(plugins, asked));
    }
    now.iter()
        .filter(|(canonical, manifest)| {
            before.get(*canonical).map(|m| &m.bytes) != Some(&manifest.bytes)
                || folder_changed(plugins, &manifest.path, changed)
                || executable_changed(plugins, manifest, changed)
                || manifest
                    .path
                    .file_name()
                    .and_then(|f| f.to_str())
                    .is_some_and(|f| venv_manifests.iter().any(|v| v == f))
        })
        .map(|(canonical, manifest)| (canonical.clone(), manifest.name.clone()))
        .collect()
}

/// The changed paths that say something about code: all but Python's bytecode caches. Reinstalling
/// an unchanged Python package rewrites its sources with new times, and each `.pyc` in a `__pycache__`
/// folder records its source's time, so every one of them differs though no code did; a source that
/// changed shows in its own file and in its package's `RECORD`.
pub fn code_changes(changed: Vec<PathBuf>) -> Vec<PathBuf> {
    changed
        .into_iter()
        .filter(|p| {
            !p.components()
                .any(|c| c == Component::Normal("__pycache__".as_ref()))
        })
        .collect()
}

/// Whether the executable `manifest` starts from is among `changed`: a crate's binary that
/// `cargo install` rebuilt in `<plugins>/.cargo/bin` (its manifest, in a folder of its own, is
/// unchanged when only its code was edited), or a Go module's.
fn executable_changed(plugins: &Path, manifest: &InstalledManifest, changed: &[PathBuf]) -> bool {
    let Ok(text) = std::str::from_utf8(&manifest.bytes) else {
        return false;
    };
    let Ok(parsed) = agent_env_protocol::manifest::Manifest::parse(&manifest.path, text) else {
        return false;
    };
    let Some(program) = parsed.resolved_exec().into_iter().next() else {
        return false;
    };
    // `../.cargo/bin/x` beside the manifest: resolved by its parts, as the file system would.
    let mut executable = PathBuf::new();
    for part in Path::new(&program).components() {
        match part {
            Component::ParentDir => {
                executable.pop();
            }
            Component::CurDir => {}
            other => executable.push(other),
        }
    }
    executable
        .strip_prefix(plugins)
        .is_ok_and(|rel| changed.iter().any(|c| c == rel))
}

/// Whether `manifest` is a folder plugin's (`<plugins>/<folder>/…`) and a path in that folder changed.
fn folder_changed(plugins: &Path, manifest: &Path, changed: &[PathBuf]) -> bool {
    let Ok(rel) = manifest.strip_prefix(plugins) else {
        return false;
    };
    let Some(Component::Normal(folder)) = rel.components().next() else {
        return false;
    };
    if folder.to_string_lossy().starts_with('.') {
        return false;
    }
    changed
        .iter()
        .any(|p| p.components().next() == Some(Component::Normal(folder)))
}

/// The file names of the manifests listed by every `*.dist-info/RECORD` among `changed`.
fn manifests_in_changed_records(plugins: &Path, changed: &[PathBuf]) -> Vec<String> {
    let records = changed.iter().filter(|p| {
        p.file_name().is_some_and(|f| f == "RECORD")
            && p.parent()
                .and_then(Path::file_name)
                .is_some_and(|d| d.to_string_lossy().ends_with(".dist-info"))
    });
    manifests_in_records(records.map(|record| plugins.join(record)))
}

/// The file names of the manifests listed by the `RECORD`s of the distributions named `names`
/// installed in the venv (`<venv>/lib/<python>/site-packages/<name>-<version>.dist-info`).
fn manifests_of_distributions(plugins: &Path, names: &[String]) -> Vec<String> {
    let wanted: Vec<String> = names.iter().map(|n| distribution_key(n)).collect();
    let site_packages = read_dir_paths(&plugins.join(PYTHON_ENV).join("lib"))
        .into_iter()
        .map(|python| python.join("site-packages"));
    let records = site_packages
        .flat_map(|site| read_dir_paths(&site))
        .filter(|dist_info| {
            let folder = dist_info.file_name().unwrap_or_default().to_string_lossy();
            folder.strip_suffix(".dist-info").is_some_and(|stem| {
                let name = stem.split('-').next().unwrap_or(stem);
                wanted.contains(&distribution_key(name))
            })
        })
        .map(|dist_info| dist_info.join("RECORD"));
    manifests_in_records(records)
}

/// A distribution's name as its `.dist-info` folder spells it (PEP 427): lower case, each run of
/// `-`, `_` and `.` one `_`.
fn distribution_key(name: &str) -> String {
    name.to_lowercase()
        .split(['-', '_', '.'])
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

/// The entries of `dir`, or none when it cannot be read.
fn read_dir_paths(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default()
}

/// The file names of the manifests (`share/agent-env/plugins/<name>.toml`) that `records` list.
fn manifests_in_records(records: impl Iterator<Item = PathBuf>) -> Vec<String> {
    let share = format!("{SHARE_SUBDIR}/");
    records
        .filter_map(|record| std::fs::read_to_string(record).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|line| line.split(',').next())
                .filter_map(|file| {
                    let (_, name) = file.rsplit_once(&share)?;
                    (!name.contains('/') && name.ends_with(".toml")).then(|| name.to_string())
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(name: &str, path: &Path, bytes: &str) -> InstalledManifest {
        InstalledManifest {
            name: name.to_string(),
            path: path.to_path_buf(),
            bytes: bytes.as_bytes().to_vec(),
            version: "1".into(),
        }
    }

    #[test]
    fn bytecode_caches_are_not_code_changes() {
        let site = ".python/lib/python3.11/site-packages";
        let changed = vec![
            PathBuf::from(format!("{site}/pkg/__pycache__/plugin.cpython-311.pyc")),
            PathBuf::from(format!("{site}/pkg/plugin.py")),
            PathBuf::from(format!("{site}/pkg-0.1.0.dist-info/RECORD")),
            PathBuf::from("folder-plugin/__pycache__"),
        ];
        assert_eq!(
            code_changes(changed),
            [
                PathBuf::from(format!("{site}/pkg/plugin.py")),
                PathBuf::from(format!("{site}/pkg-0.1.0.dist-info/RECORD")),
            ]
        );
    }

    #[test]
    fn a_new_or_changed_manifest_is_touched() {
        let plugins = Path::new("/p");
        let path = plugins.join("a/agent-env-plugin.toml");
        let before = Manifests::from([("a".into(), manifest("a", &path, "v1"))]);
        let same = before.clone();
        assert!(touched(plugins, &before, &same, &[], &[]).is_empty());
        let changed = Manifests::from([("a".into(), manifest("a", &path, "v2"))]);
        assert_eq!(touched(plugins, &before, &changed, &[], &[]).len(), 1);
        assert_eq!(
            touched(plugins, &Manifests::new(), &same, &[], &[]).len(),
            1
        );
    }

    #[test]
    fn a_folder_plugin_is_touched_by_a_file_in_its_folder() {
        let plugins = Path::new("/p");
        let a = manifest("a", &plugins.join("a/agent-env-plugin.toml"), "m");
        let b = manifest("b", &plugins.join("b/agent-env-plugin.toml"), "m");
        let both = Manifests::from([("a".into(), a), ("b".into(), b)]);
        let hit = touched(plugins, &both, &both, &[PathBuf::from("a/tool")], &[]);
        assert_eq!(hit, vec![("a".to_string(), "a".to_string())]);
        // A change inside the venv is no folder plugin's.
        assert!(touched(plugins, &both, &both, &[PathBuf::from(".python/x")], &[]).is_empty());
    }

    #[test]
    fn a_python_package_is_touched_by_its_changed_record() {
        let tmp = tempfile::tempdir().unwrap();
        let plugins = tmp.path();
        let share = plugins.join(".python").join(SHARE_SUBDIR);
        let dist = plugins.join(".python/lib/python3.11/site-packages/pkg_a-0.1.0.dist-info");
        std::fs::create_dir_all(&dist).unwrap();
        std::fs::write(
            dist.join("RECORD"),
            "pkg_a/__init__.py,sha256=x,10\n../../../share/agent-env/plugins/pkg-a.toml,sha256=y,20\n",
        )
        .unwrap();
        let a = manifest("pkg-a", &share.join("pkg-a.toml"), "m");
        let b = manifest("pkg-b", &share.join("pkg-b.toml"), "m");
        let both = Manifests::from([("pkg-a".into(), a), ("pkg-b".into(), b)]);
        let record = dist.strip_prefix(plugins).unwrap().join("RECORD");
        let hit = touched(plugins, &both, &both, &[record], &[]);
        assert_eq!(hit, vec![("pkg-a".to_string(), "pkg-a".to_string())]);
    }

    #[test]
    fn an_asked_python_plugin_is_touched_by_a_change_to_its_library() {
        let tmp = tempfile::tempdir().unwrap();
        let plugins = tmp.path();
        let share = plugins.join(".python").join(SHARE_SUBDIR);
        let site = Path::new(".python/lib/python3.11/site-packages");
        let dist = plugins.join(site).join("pkg_a-0.1.0.dist-info");
        std::fs::create_dir_all(&dist).unwrap();
        std::fs::write(
            dist.join("RECORD"),
            "../../../share/agent-env/plugins/pkg-a.toml,sha256=y,20\n",
        )
        .unwrap();
        let a = manifest("pkg-a", &share.join("pkg-a.toml"), "m");
        let b = manifest("pkg-b", &share.join("pkg-b.toml"), "m");
        let both = Manifests::from([("pkg-a".into(), a), ("pkg-b".into(), b)]);
        let library = vec![site.join("lib/__init__.py")];
        let asked = ["Pkg.A".to_string()];
        let hit = touched(plugins, &both, &both, &library, &asked);
        assert_eq!(hit, vec![("pkg-a".to_string(), "pkg-a".to_string())]);
        // Nothing in the venv changed: the asked plugin is as it was.
        let folder = vec![PathBuf::from("other/tool")];
        assert!(touched(plugins, &both, &both, &folder, &asked).is_empty());
    }

    #[test]
    fn distribution_names_match_their_dist_info_spelling() {
        assert_eq!(
            distribution_key("Agentenv-Demo.step__x"),
            "agentenv_demo_step_x"
        );
        assert_eq!(
            distribution_key("agentenv_demo_step_x"),
            "agentenv_demo_step_x"
        );
    }
}
