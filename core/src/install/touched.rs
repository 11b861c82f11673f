//! Which installed plugins a change touched, from the paths it changed in the plugins directory.
//!
//! A plugin added again after its code was edited keeps the same manifest, so comparing manifests
//! alone would miss it. A manifest is touched when its own bytes changed, or when a file of its
//! package did: for a folder plugin, anything in its folder; for a Python package in the managed
//! venv, its `*.dist-info/RECORD` (pip rewrites it whenever it installs the package, and it lists
//! the manifest among the package's files).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

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
}

/// Canonical name → the manifest of that package.
pub type Manifests = BTreeMap<String, InstalledManifest>;

/// The packages of `now` that the change touched (canonical name, package name): new or changed
/// manifests, and manifests whose package files are among `changed` (relative to `plugins`).
pub fn touched(
    plugins: &Path,
    before: &Manifests,
    now: &Manifests,
    changed: &[PathBuf],
) -> Vec<(String, String)> {
    let venv_manifests = manifests_in_changed_records(plugins, changed);
    now.iter()
        .filter(|(canonical, manifest)| {
            before.get(*canonical).map(|m| &m.bytes) != Some(&manifest.bytes)
                || folder_changed(plugins, &manifest.path, changed)
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
    let share = format!("{SHARE_SUBDIR}/");
    changed
        .iter()
        .filter(|p| {
            p.file_name().is_some_and(|f| f == "RECORD")
                && p.parent()
                    .and_then(Path::file_name)
                    .is_some_and(|d| d.to_string_lossy().ends_with(".dist-info"))
        })
        .filter_map(|record| std::fs::read_to_string(plugins.join(record)).ok())
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
        assert!(touched(plugins, &before, &same, &[]).is_empty());
        let changed = Manifests::from([("a".into(), manifest("a", &path, "v2"))]);
        assert_eq!(touched(plugins, &before, &changed, &[]).len(), 1);
        assert_eq!(touched(plugins, &Manifests::new(), &same, &[]).len(), 1);
    }

    #[test]
    fn a_folder_plugin_is_touched_by_a_file_in_its_folder() {
        let plugins = Path::new("/p");
        let a = manifest("a", &plugins.join("a/agent-env-plugin.toml"), "m");
        let b = manifest("b", &plugins.join("b/agent-env-plugin.toml"), "m");
        let both = Manifests::from([("a".into(), a), ("b".into(), b)]);
        let hit = touched(plugins, &both, &both, &[PathBuf::from("a/tool")]);
        assert_eq!(hit, vec![("a".to_string(), "a".to_string())]);
        // A change inside the venv is no folder plugin's.
        assert!(touched(plugins, &both, &both, &[PathBuf::from(".python/x")]).is_empty());
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
        let hit = touched(plugins, &both, &both, &[record]);
        assert_eq!(hit, vec![("pkg-a".to_string(), "pkg-a".to_string())]);
    }
}
