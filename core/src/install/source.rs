//! What a spec names and which installer it needs: a folder holding a manifest, a Python package (a name,
//! a wheel, a folder, `NAME @ URL`), a Rust crate, or a Go module.

use std::path::{Path, PathBuf};

use agent_env_protocol::manifest::{Manifest, MANIFEST_FILE};

use super::error::InstallError;

/// The installer a spec goes through (`--installer` forces one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Installer {
    /// Copy a folder holding agent-env-plugin.toml.
    Folder,
    /// `python -m pip install` into the venv agent-env manages.
    Pip,
    /// `cargo install`.
    Cargo,
    /// `go install`.
    Go,
}

impl Installer {
    /// The language of the projects it builds; `None` for a folder that is copied as it is.
    pub fn language(self) -> Option<&'static str> {
        match self {
            Installer::Folder => None,
            Installer::Pip => Some("Python"),
            Installer::Cargo => Some("Rust"),
            Installer::Go => Some("Go"),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Installer::Folder => "folder",
            Installer::Pip => "pip",
            Installer::Cargo => "cargo",
            Installer::Go => "go",
        }
    }
}

/// A spec, understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// As the user wrote it.
    pub text: String,
    pub installer: Installer,
    /// The local folder or file it names, absolute.
    pub path: Option<PathBuf>,
    /// The package name, when the spec tells it.
    pub name: Option<String>,
}

/// A spec refused for `reason`, shown with the credentials of a URL in it masked.
fn bad(spec: &str, reason: impl Into<String>) -> InstallError {
    InstallError::BadSpec {
        spec: crate::redaction::mask_url_credentials(spec).into_owned(),
        reason: reason.into(),
    }
}

/// A name read from a TOML file's `[table] name`.
fn toml_name(file: &Path, table: &str) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let doc: toml::Table = text.parse().ok()?;
    doc.get(table)?.get("name")?.as_str().map(str::to_string)
}

/// The name part of a requirement (`pkg[extra]>=1; marker` → `pkg`).
fn requirement_name(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
        .unwrap_or(text.len());
    &text[..end]
}

/// The note for a bare word that names a package although a folder of that name is here.
pub fn folder_of_that_name(spec: &Spec) -> Option<String> {
    (spec.path.is_none() && is_bare_word(&spec.text) && Path::new(&spec.text).is_dir()).then(|| {
        format!(
            "note: {0} is read as a package's name; a folder of that name is here too: write ./{0} to add the folder",
            spec.text
        )
    })
}

/// A Go module path (`example.com/team/cmd/tool@v1.2.0`): a host name with a dot, a path, an optional
/// `@version`. No Python requirement has a `/` outside a URL, and a URL has a `:`.
fn looks_like_go_module(text: &str) -> bool {
    let path = text.split('@').next().unwrap_or(text);
    let Some((host, rest)) = path.split_once('/') else {
        return false;
    };
    host.contains('.')
        && !rest.is_empty()
        && !text.contains(':')
        && !text.contains(char::is_whitespace)
        && !text.ends_with(".whl")
}

/// A bare word (`my-plugin`): a package's name, never read as a path even where a file or folder of
/// that name is (a wheel's file name excepted).
fn is_bare_word(text: &str) -> bool {
    !text.contains('/') && !looks_like_path(text) && !text.ends_with(".whl")
}

/// Whether `text` is written as a path: a package or module name never starts with `.`, `/` or `~`,
/// nor ends with `/` (`my-plugin/` is a folder; `github.com/a/b` is a Go module).
fn looks_like_path(text: &str) -> bool {
    text.starts_with('.') || text.starts_with('/') || text.starts_with('~') || text.ends_with('/')
}

/// The installer a plugin source folder needs, by the file it holds: a manifest (copied as it is),
/// else a Rust, Go or Python project's own file.
pub fn installer_of(folder: &Path) -> Option<Installer> {
    let has = |f: &str| folder.join(f).is_file();
    if has(MANIFEST_FILE) {
        Some(Installer::Folder)
    } else if has("Cargo.toml") {
        Some(Installer::Cargo)
    } else if has("go.mod") {
        Some(Installer::Go)
    } else if has("pyproject.toml") || has("setup.py") {
        Some(Installer::Pip)
    } else {
        None
    }
}

/// What to add to the refusal of a folder that is no plugin source when it holds Go files: that
/// `--installer go` builds it, when it is a command's folder inside a Go module (`./mod/cmd/tool`,
/// a go.mod in a folder above) and `--installer go` was not given; otherwise that no go.mod was
/// found, which a Go module needs. `forced_go` is `--installer go`.
fn go_command_hint(folder: &Path, forced_go: bool) -> &'static str {
    let holds_go = std::fs::read_dir(folder)
        .into_iter()
        .flatten()
        .flatten()
        .any(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name == "go.mod" || name.ends_with(".go")
        });
    let in_module = folder.ancestors().any(|dir| dir.join("go.mod").is_file());
    match (holds_go, in_module && !forced_go) {
        (false, _) => "",
        (true, true) => "; it holds Go code: if it is a command's folder inside a Go module, add it with --installer go",
        (true, false) => "; it holds Go code, but no go.mod was found in the folder or any folder above it (a Go module needs one: run `go mod init MODULE-PATH` in the module's top folder)",
    }
}

/// Reads a spec. `forced` is `--installer`.
pub fn classify(
    text: &str,
    forced: Option<Installer>,
    home: Option<&Path>,
) -> Result<Spec, InstallError> {
    let expanded = crate::paths::tilde_expanded(text, home);
    // A bare word is a package's name even where a folder of that name is (`plugin add my-plugin`
    // from the folder holding its source means the published one); a path says it is one.
    let local = expanded.exists() && !is_bare_word(text);
    if !local && looks_like_path(text) {
        return Err(bad(text, "no such file or folder"));
    }
    let spec = |installer, path: Option<PathBuf>, name: Option<String>| Spec {
        text: text.to_string(),
        installer,
        path,
        name,
    };
    if local {
        let path = std::path::absolute(&expanded).unwrap_or(expanded.clone());
        if path.is_dir() {
            // A command's folder inside a Go module (`--installer go` names the installer).
            let in_module = forced == Some(Installer::Go)
                && path.ancestors().any(|dir| dir.join("go.mod").is_file());
            let Some(detected) = installer_of(&path).or(in_module.then_some(Installer::Go)) else {
                return Err(bad(
                    text,
                    format!(
                        "the folder holds none of {MANIFEST_FILE}, Cargo.toml, go.mod, pyproject.toml or setup.py, so it is no plugin source{}",
                        go_command_hint(&path, forced == Some(Installer::Go))
                    ),
                ));
            };
            let installer = forced.unwrap_or(detected);
            let name = match installer {
                // Read as discovery will read it, so a manifest that would not load is refused with
                // its own fault before anything is copied.
                Installer::Folder => match Manifest::load(&path.join(MANIFEST_FILE)) {
                    Ok(manifest) => Some(manifest.name),
                    // A manifest written with `plugin --agent-env-manifest > FILE` says what the
                    // plugin printed before its SDK took stdout over.
                    Err(e) => return Err(bad(text, format!("its manifest does not load: {e}"))),
                },
                Installer::Cargo => toml_name(&path.join("Cargo.toml"), "package"),
                Installer::Pip => toml_name(&path.join("pyproject.toml"), "project"),
                Installer::Go => None,
            };
            return Ok(spec(installer, Some(path), name));
        }
        if text.ends_with(".whl") {
            let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
            let name = file.split('-').next().map(str::to_string);
            return Ok(spec(forced.unwrap_or(Installer::Pip), Some(path), name));
        }
        return Err(bad(
            text,
            "a file is a plugin source only as a Python wheel (.whl)",
        ));
    }
    let forced = forced.or_else(|| looks_like_go_module(text).then_some(Installer::Go));
    if let Some((name, url)) = text.split_once('@') {
        let name = name.trim();
        if forced.is_none() || forced == Some(Installer::Pip) {
            if name.is_empty() || url.trim().is_empty() {
                return Err(bad(text, "write a URL as `NAME @ URL`"));
            }
            return Ok(spec(
                Installer::Pip,
                None,
                Some(requirement_name(name).to_string()),
            ));
        }
    }
    if text.ends_with(".whl") {
        let file = text.rsplit('/').next().unwrap_or(text);
        let name = file.split('-').next().map(str::to_string);
        return Ok(spec(forced.unwrap_or(Installer::Pip), None, name));
    }
    let installer = forced.unwrap_or(Installer::Pip);
    if installer == Installer::Folder {
        return Err(bad(
            text,
            "--installer folder needs a folder holding agent-env-plugin.toml",
        ));
    }
    let name = match installer {
        Installer::Go => text.split('@').next().and_then(|p| p.rsplit('/').next()),
        _ => Some(requirement_name(text)),
    };
    Ok(spec(installer, None, name.map(str::to_string)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_kinds() {
        let s = classify("agentenv-framework>=0.2", None, None).unwrap();
        assert_eq!(
            (s.installer, s.name.as_deref()),
            (Installer::Pip, Some("agentenv-framework"))
        );
        let s = classify("agent_env @ git+https://x/y", None, None).unwrap();
        assert_eq!(s.name.as_deref(), Some("agent_env"));
        let s = classify(
            "https://h/agentenv_framework-0.1.0-py3-none-any.whl",
            None,
            None,
        )
        .unwrap();
        assert_eq!(s.name.as_deref(), Some("agentenv_framework"));
        let s = classify("example.com/m/cmd/tool@v1", Some(Installer::Go), None).unwrap();
        assert_eq!(
            (s.installer, s.name.as_deref()),
            (Installer::Go, Some("tool"))
        );
        // A module path is Go's without --installer go: pip would read it as a path.
        for module in [
            "corp.example.com/tools/cmd/agentenv-x@v0.2.0",
            "github.com/a/b",
        ] {
            let s = classify(module, None, None).unwrap();
            assert_eq!(s.installer, Installer::Go, "{module}");
        }
        for python in ["agentenv-x==1.0", "pkg @ https://h.example/p.whl", "x.y"] {
            let s = classify(python, None, None).unwrap();
            assert_eq!(s.installer, Installer::Pip, "{python}");
        }
        assert!(classify("./nope-such-dir", None, None).is_err());
        // A missing folder written with a trailing slash is not sent to an installer as a name.
        let err = classify("nope-such-dir/", None, None)
            .unwrap_err()
            .to_string();
        assert_eq!(err, "nope-such-dir/: no such file or folder");
    }

    #[test]
    fn folders_by_what_they_hold() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("go.mod"), "module x\n").unwrap();
        let s = classify(tmp.path().to_str().unwrap(), None, None).unwrap();
        assert_eq!(s.installer, Installer::Go);
        std::fs::write(tmp.path().join("Cargo.toml"), "[package]\nname = \"c\"\n").unwrap();
        let s = classify(tmp.path().to_str().unwrap(), None, None).unwrap();
        assert_eq!(
            (s.installer, s.name.as_deref()),
            (Installer::Cargo, Some("c"))
        );
    }

    #[test]
    fn a_manifest_that_starts_with_a_stray_print_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join(MANIFEST_FILE),
            "loading the model\n[plugin]\nname = \"x\"\n",
        )
        .unwrap();
        let err = classify(tmp.path().to_str().unwrap(), None, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("its manifest does not load: "), "{err}");
        assert!(
            err.ends_with("; its first line, 'loading the model', is no manifest line: something in the plugin writes to stdout before serve is called (a print at import or in an init function); write it to stderr instead"),
            "{err}"
        );
    }
}
