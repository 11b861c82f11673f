//! Finding `.agentenv/config.toml`: `$AGENT_ENV_CONFIG`, else the nearest one walking up from the working
//! directory. Only existence checks; nothing is read here. Whatever is there counts, a folder or a
//! link to nothing included: reading it then says what is wrong, where skipping it would quietly use
//! a parent's config (or none) instead.

use super::error::ConfigError;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable that names the config file.
pub const CONFIG_VAR: &str = "AGENT_ENV_CONFIG";
/// The file looked for in each directory while walking up.
pub const CONFIG_RELATIVE: &str = ".agentenv/config.toml";

/// How the config file was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSource {
    /// `$AGENT_ENV_CONFIG` named it.
    Env,
    /// A root option (`--tenant acme`) chose it; the document says which (`chosen_by`).
    RootOption,
    /// The nearest `.agentenv/config.toml` walking up from the working directory.
    WalkUp,
    /// No file: every section has its default.
    None,
    /// Discovery itself failed (`$AGENT_ENV_CONFIG` names no file).
    Error,
}

impl ConfigSource {
    /// The spelling in `config show --json` (`config_source`).
    pub fn as_str(self) -> &'static str {
        match self {
            ConfigSource::Env => "env",
            ConfigSource::RootOption => "root-option",
            ConfigSource::WalkUp => "walk-up",
            ConfigSource::None => "none",
            ConfigSource::Error => "error",
        }
    }
}

/// Where discovery ended up.
#[derive(Debug, Clone)]
pub struct Located {
    pub path: Option<PathBuf>,
    pub source: ConfigSource,
    /// The directory the walk started from (the resolved working directory).
    pub search_root: PathBuf,
    pub error: Option<ConfigError>,
}

/// Finds the config file from the value of `$AGENT_ENV_CONFIG` (`None` or empty: unset) and the working
/// directory.
pub fn locate(env_value: Option<OsString>, cwd: &Path) -> Located {
    let search_root = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    if let Some(value) = env_value.filter(|v| !v.is_empty()) {
        let path = PathBuf::from(&value);
        let path = if path.is_relative() {
            search_root.join(path)
        } else {
            path
        };
        if is_there(&path) {
            return Located {
                path: Some(path),
                source: ConfigSource::Env,
                search_root,
                error: None,
            };
        }
        return Located {
            path: None,
            source: ConfigSource::Error,
            search_root,
            error: Some(ConfigError::EnvPathMissing {
                value: value.to_string_lossy().into_owned(),
            }),
        };
    }
    let found = search_root
        .ancestors()
        .map(|dir| dir.join(CONFIG_RELATIVE))
        .find(|candidate| is_there(candidate));
    Located {
        source: if found.is_some() {
            ConfigSource::WalkUp
        } else {
            ConfigSource::None
        },
        path: found,
        search_root,
        error: None,
    }
}

/// Something is at `path` (a file, a folder, a link even to nothing).
fn is_there(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// One place discovery looks, for `config debug`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Candidate {
    pub path: String,
    /// `root-option`, `env`, `walk-up`, or `user-level` (a file discovery never reads, named so).
    pub via: &'static str,
    /// Which root option chose the file (`root-option` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chosen_by: Option<String>,
    pub exists: bool,
    /// Whether discovery uses this one.
    pub chosen: bool,
    /// Why a file that is there is not read (`user-level` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Every candidate, in the order discovery considers them: `$AGENT_ENV_CONFIG` when set, then
/// `.agentenv/config.toml` in each directory from the working directory up to `/`.
pub fn candidates(env_value: Option<OsString>, cwd: &Path) -> Vec<Candidate> {
    let found = locate(env_value.clone(), cwd);
    let mut out = Vec::new();
    if let Some(value) = env_value.filter(|v| !v.is_empty()) {
        let path = found.search_root.join(PathBuf::from(&value));
        out.push(Candidate {
            exists: is_there(&path),
            chosen: found.source == ConfigSource::Env,
            path: path.display().to_string(),
            via: "env",
            chosen_by: None,
            note: None,
        });
    }
    for dir in found.search_root.ancestors() {
        let path = dir.join(CONFIG_RELATIVE);
        out.push(Candidate {
            exists: is_there(&path),
            chosen: found.source == ConfigSource::WalkUp && found.path.as_deref() == Some(&path),
            path: path.display().to_string(),
            via: "walk-up",
            chosen_by: None,
            note: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_up_to_the_nearest_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join(".agentenv")).unwrap();
        std::fs::write(root.join(".agentenv/config.toml"), "").unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        let found = locate(None, &root.join("a/b"));
        assert_eq!(found.source, ConfigSource::WalkUp);
        assert_eq!(found.path.unwrap(), root.join(".agentenv/config.toml"));
    }

    #[test]
    fn a_missing_env_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let found = locate(Some("/nope.toml".into()), dir.path());
        assert_eq!(found.source, ConfigSource::Error);
        assert_eq!(
            found.error.unwrap().to_string(),
            "AGENT_ENV_CONFIG='/nope.toml' does not point to an existing file; unset AGENT_ENV_CONFIG or point it at a config file"
        );
    }

    #[test]
    fn an_empty_env_value_is_unset() {
        let dir = tempfile::tempdir().unwrap();
        let found = locate(Some("".into()), dir.path());
        assert_ne!(found.source, ConfigSource::Error);
    }
}
