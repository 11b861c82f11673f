//! The code pip installed for a plugin's Python distribution, read from the distribution's `RECORD`
//! (the list of files every installed wheel keeps in its `.dist-info` folder): what a pin must cover
//! besides the console script a Python plugin starts from, since that script only imports the code.

use std::path::{Path, PathBuf};

use super::SHARE_SUBDIR;

/// The code files of the distribution that installed `manifest` into a virtual environment (a
/// manifest under `<venv>/share/agent-env/plugins/`): each file its `RECORD` lists with a hash inside
/// `site-packages`, its own `.dist-info` metadata left out. Empty for a manifest that is not in a
/// virtual environment or that no distribution lists.
pub fn distribution_code(manifest: &Path) -> Vec<PathBuf> {
    let Some(installed) = installing_distribution(manifest) else {
        return Vec::new();
    };
    installed
        .record
        .lines()
        .filter_map(row)
        .filter(|(path, hashed)| {
            *hashed && !path.starts_with("../") && !path.contains(".dist-info/")
        })
        .map(|(path, _)| installed.site.join(path))
        .filter(|path| path.is_file())
        .collect()
}

/// The name of the distribution that installed `manifest` (its `METADATA`'s `Name`), which pip knows
/// it by: it need not be the plugin's name. `None` when no distribution lists the manifest.
pub fn distribution_name(manifest: &Path) -> Option<String> {
    metadata_name(&installing_distribution(manifest)?.dist_info)
}

/// The name (its `METADATA`'s `Name`) of the distribution installed in `venv` that `name` names,
/// compared as package names are (case, and runs of `-`, `_` and `.`, ignored): one found without any
/// manifest, such as a package `plugin add --keep` kept although it declares none.
pub fn installed_distribution(venv: &Path, name: &str) -> Option<String> {
    let wanted = agent_env_protocol::names::canonical_name(name);
    installed_metadata(venv)
        .filter_map(|metadata| header(&metadata, "Name").map(str::to_string))
        .find(|found| agent_env_protocol::names::canonical_name(found) == wanted)
}

/// The distributions installed in `venv` that require `name` (a `Requires-Dist` of their
/// `METADATA`, extras included), by their `Name`.
pub fn required_by(venv: &Path, name: &str) -> Vec<String> {
    let wanted = agent_env_protocol::names::canonical_name(name);
    let mut found: Vec<String> = installed_metadata(venv)
        .filter(|metadata| {
            headers(metadata, "Requires-Dist").any(|spec| {
                let end = spec
                    .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
                    .unwrap_or(spec.len());
                agent_env_protocol::names::canonical_name(&spec[..end]) == wanted
            })
        })
        .filter_map(|metadata| header(&metadata, "Name").map(str::to_string))
        .collect();
    found.sort();
    found
}

/// The `METADATA` text of every distribution installed in `venv`.
fn installed_metadata(venv: &Path) -> impl Iterator<Item = String> {
    site_packages(venv)
        .into_iter()
        .filter_map(|site| std::fs::read_dir(site).ok())
        .flat_map(|entries| entries.flatten())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".dist-info"))
        .filter_map(|e| std::fs::read_to_string(e.path().join("METADATA")).ok())
}

/// The values of a `METADATA` header field (its headers end at the first empty line), trimmed.
fn headers<'m>(metadata: &'m str, field: &'m str) -> impl Iterator<Item = &'m str> {
    metadata
        .lines()
        .take_while(|line| !line.is_empty())
        .filter_map(move |line| line.strip_prefix(field)?.strip_prefix(':'))
        .map(str::trim)
}

/// The first value of a `METADATA` header field, when it is not empty.
fn header<'m>(metadata: &'m str, field: &'m str) -> Option<&'m str> {
    headers(metadata, field).next().filter(|v| !v.is_empty())
}

/// The `Name` a `.dist-info` folder's `METADATA` gives.
fn metadata_name(dist_info: &Path) -> Option<String> {
    let metadata = std::fs::read_to_string(dist_info.join("METADATA")).ok()?;
    header(&metadata, "Name").map(str::to_string)
}

/// A distribution installed in a virtual environment, found by the manifest its `RECORD` lists.
struct Installed {
    site: PathBuf,
    dist_info: PathBuf,
    record: String,
}

fn installing_distribution(manifest: &Path) -> Option<Installed> {
    let venv = venv_of(manifest)?;
    let manifest = manifest.canonicalize().ok()?;
    for site in site_packages(&venv) {
        let Ok(entries) = std::fs::read_dir(&site) else {
            continue;
        };
        for entry in entries.flatten() {
            if !entry.file_name().to_string_lossy().ends_with(".dist-info") {
                continue;
            }
            let Ok(record) = std::fs::read_to_string(entry.path().join("RECORD")) else {
                continue;
            };
            let lists_manifest = record.lines().filter_map(row).any(|(path, _)| {
                path.ends_with(".toml")
                    && site.join(path).canonicalize().ok().as_deref() == Some(manifest.as_path())
            });
            if lists_manifest {
                return Some(Installed {
                    site,
                    dist_info: entry.path(),
                    record,
                });
            }
        }
    }
    None
}

/// The virtual environment a manifest under its `share/agent-env/plugins/` belongs to.
fn venv_of(manifest: &Path) -> Option<PathBuf> {
    let folder = manifest.parent()?;
    if !folder.ends_with(SHARE_SUBDIR) {
        return None;
    }
    let root = folder.ancestors().nth(3)?;
    root.join("pyvenv.cfg")
        .is_file()
        .then(|| root.to_path_buf())
}

/// `<venv>/lib/python3.X/site-packages` for each Python the environment has.
fn site_packages(venv: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(venv.join("lib")) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect();
    found.sort();
    found
}

/// One `RECORD` row: its path, and whether it carries a hash (compiled `.pyc` files and `RECORD`
/// itself do not). A path holding a comma is written in double quotes.
fn row(line: &str) -> Option<(&str, bool)> {
    let (path, rest) = match line.strip_prefix('"') {
        Some(quoted) => {
            let end = quoted.find('"')?;
            (&quoted[..end], quoted[end + 1..].strip_prefix(',')?)
        }
        None => line.split_once(',')?,
    };
    let hash = rest.split(',').next().unwrap_or("");
    (!path.is_empty()).then_some((path, !hash.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_give_their_path_and_whether_they_are_hashed() {
        assert_eq!(
            row("pkg/plugin.py,sha256=abc,1490"),
            Some(("pkg/plugin.py", true))
        );
        assert_eq!(
            row("pkg/__pycache__/plugin.cpython-311.pyc,,"),
            Some(("pkg/__pycache__/plugin.cpython-311.pyc", false))
        );
        assert_eq!(row("\"pkg/a,b.py\",sha256=x,3"), Some(("pkg/a,b.py", true)));
        assert_eq!(row(""), None);
    }

    #[test]
    fn a_distribution_is_found_by_its_package_name_and_by_what_requires_it() {
        let tmp = tempfile::tempdir().unwrap();
        let site = tmp.path().join("lib/python3.11/site-packages");
        for (folder, metadata) in [
            ("Acme_Helpers-1.0.dist-info", "Name: Acme.Helpers\nVersion: 1.0\n"),
            (
                "grader-2.0.dist-info",
                "Name: grader\nRequires-Dist: acme-helpers (>=1); extra == 'x'\nRequires-Dist: acme-helpers-extra\n\nRequires-Dist: body-only\n",
            ),
            ("loner-1.0.dist-info", "Name: loner\nRequires-Dist: body-only\n"),
        ] {
            std::fs::create_dir_all(site.join(folder)).unwrap();
            std::fs::write(site.join(folder).join("METADATA"), metadata).unwrap();
        }
        assert_eq!(
            installed_distribution(tmp.path(), "acme-helpers").as_deref(),
            Some("Acme.Helpers")
        );
        assert_eq!(installed_distribution(tmp.path(), "acme"), None);
        assert_eq!(required_by(tmp.path(), "ACME_helpers"), ["grader"]);
        assert_eq!(required_by(tmp.path(), "body-only"), ["loner"]);
        assert!(required_by(tmp.path(), "grader").is_empty());
    }

    #[test]
    fn the_code_of_the_distribution_that_installed_the_manifest_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let venv = tmp.path().join("venv");
        let site = venv.join("lib/python3.11/site-packages");
        let share = venv.join(SHARE_SUBDIR);
        for dir in [
            &site.join("mine/sub"),
            &share,
            &site.join("mine-1.0.dist-info"),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::create_dir_all(site.join("other-2.0.dist-info")).unwrap();
        std::fs::write(venv.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        std::fs::write(share.join("mine.toml"), "").unwrap();
        for file in ["mine/__init__.py", "mine/sub/plugin.py"] {
            std::fs::write(site.join(file), "x").unwrap();
        }
        std::fs::write(
            site.join("mine-1.0.dist-info/METADATA"),
            "Metadata-Version: 2.1\nName: acme-mine\nVersion: 1.0\n\nName: not this, the body\n",
        )
        .unwrap();
        std::fs::write(
            site.join("other-2.0.dist-info/RECORD"),
            "other/x.py,sha256=a,1\n",
        )
        .unwrap();
        std::fs::write(
            site.join("mine-1.0.dist-info/RECORD"),
            "../../../bin/mine,sha256=a,1\n../../../share/agent-env/plugins/mine.toml,sha256=b,1\n\
             mine-1.0.dist-info/METADATA,sha256=c,1\nmine-1.0.dist-info/RECORD,,\n\
             mine/__init__.py,sha256=d,1\nmine/__pycache__/__init__.cpython-311.pyc,,\n\
             mine/sub/plugin.py,sha256=e,1\n",
        )
        .unwrap();
        assert_eq!(
            distribution_code(&share.join("mine.toml")),
            [
                site.join("mine/__init__.py"),
                site.join("mine/sub/plugin.py")
            ]
        );
        // pip knows it by its distribution's name, which need not be the plugin's.
        assert_eq!(
            distribution_name(&share.join("mine.toml")).as_deref(),
            Some("acme-mine")
        );
        // A manifest outside a virtual environment has no distribution.
        std::fs::remove_file(venv.join("pyvenv.cfg")).unwrap();
        assert!(distribution_code(&share.join("mine.toml")).is_empty());
        assert_eq!(distribution_name(&share.join("mine.toml")), None);
    }
}
