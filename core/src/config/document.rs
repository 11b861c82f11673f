//! The config document: the one file found, read once and parsed once, with the problem kept beside it so
//! that reports can still name the file.

use super::error::ConfigError;
use super::locate::{locate, ConfigSource, CONFIG_VAR};
use crate::environment::Environment;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toml::Table;

/// A problem reading the document, as the plugin report shows it: a report code and the sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    /// `config-not-found` or `config-unreadable`.
    pub code: &'static str,
    pub reason: String,
    /// The same problem as an error, for commands that cannot go on without the config.
    pub error: ConfigError,
}

impl From<ConfigError> for ConfigProblem {
    fn from(error: ConfigError) -> Self {
        ConfigProblem {
            code: error.code(),
            reason: error.to_string(),
            error,
        }
    }
}

/// `.agentenv/config.toml` as found and parsed. An absent or broken file has an empty table, so every section
/// reads its default; `error` says what went wrong.
#[derive(Debug, Clone)]
pub struct ConfigDocument {
    pub path: Option<PathBuf>,
    pub source: ConfigSource,
    /// The directory discovery walked up from.
    pub search_root: PathBuf,
    pub table: Table,
    pub error: Option<ConfigProblem>,
    /// The root option that chose the file, when one did.
    pub chosen_by: Option<RootOptionChoice>,
    /// The environment the document was read in: its `env:` references and the
    /// `AGENT_ENV_<KIND>_STORE` variables are read from it.
    pub env: Arc<Environment>,
}

/// The config file a root option chose, and which option: `CLI root option '--tenant' from
/// 'agentenv-tenant'`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootOptionChoice {
    /// The path as the option's plugin answered it.
    pub path: PathBuf,
    pub by: String,
}

/// A root option chose the config file after something had read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the config was already read in this invocation; a root option must choose the config file before anything reads it")]
pub struct AlreadyRead;

impl ConfigDocument {
    /// Finds and parses the config `env` selects: `$AGENT_ENV_CONFIG`, else the nearest
    /// `.agentenv/config.toml` above its working directory. The session reads it once per invocation.
    pub fn load(env: Arc<Environment>) -> ConfigDocument {
        let chosen = env.var_os(CONFIG_VAR).map(Into::into);
        Self::load_from(chosen, env)
    }

    /// As [`load`](Self::load), with the `$AGENT_ENV_CONFIG` value given (a root option chose the file).
    pub fn load_from(
        env_value: Option<std::ffi::OsString>,
        env: Arc<Environment>,
    ) -> ConfigDocument {
        let found = locate(env_value, env.cwd());
        let mut doc = ConfigDocument {
            path: found.path,
            source: found.source,
            search_root: found.search_root,
            table: Table::new(),
            error: found.error.map(ConfigProblem::from),
            chosen_by: None,
            env,
        };
        if let Some(path) = doc.path.clone() {
            match read_and_parse(&path) {
                Ok(table) => doc.table = table,
                Err(e) => doc.error = Some(e.into()),
            }
        }
        doc
    }

    /// The document at `path`, which the root option `chosen_by` chose: credited to it, and a
    /// missing file said to be its choice, not `$AGENT_ENV_CONFIG`'s (which the user did not set).
    pub fn chosen_by_root_option(
        path: &Path,
        chosen_by: &str,
        env: Arc<Environment>,
    ) -> ConfigDocument {
        let mut doc = Self::load_from(Some(path.as_os_str().into()), env);
        if doc.source == ConfigSource::Env {
            doc.source = ConfigSource::RootOption;
        }
        if let Some(problem) = &mut doc.error {
            if let ConfigError::EnvPathMissing { value } = &problem.error {
                *problem = ConfigError::ChosenPathMissing {
                    path: value.clone(),
                    chosen_by: chosen_by.to_string(),
                }
                .into();
            }
        }
        doc.chosen_by = Some(RootOptionChoice {
            path: path.to_path_buf(),
            by: chosen_by.to_string(),
        });
        doc
    }

    /// A document parsed from text, for tests and tools; `path` is only used in messages. Its `env:`
    /// references read an empty environment (see [`with_env`](Self::with_env)).
    pub fn from_text(text: &str, path: &Path) -> ConfigDocument {
        let (table, error) = match parse(text, path) {
            Ok(table) => (table, None),
            Err(e) => (Table::new(), Some(e.into())),
        };
        ConfigDocument {
            path: Some(path.to_path_buf()),
            source: ConfigSource::Env,
            search_root: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            table,
            error,
            chosen_by: None,
            env: Arc::new(Environment::default()),
        }
    }

    /// The same document, its references and store variables read from `env`.
    pub fn with_env(mut self, env: Arc<Environment>) -> ConfigDocument {
        self.env = env;
        self
    }

    /// The table, or the problem that kept it from being read.
    pub fn require(&self) -> Result<&Table, ConfigError> {
        match &self.error {
            Some(problem) => Err(problem.error.clone()),
            None => Ok(&self.table),
        }
    }

    /// The path for messages (`None` when there is no file).
    pub fn path_display(&self) -> Option<String> {
        self.path.as_ref().map(|p| p.display().to_string())
    }
}

fn read_and_parse(path: &Path) -> Result<Table, ConfigError> {
    let text = super::config_file::read_config_text(path)?;
    parse(&text, path)
}

fn parse(text: &str, path: &Path) -> Result<Table, ConfigError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    toml::from_str::<Table>(text).map_err(|e| ConfigError::Malformed {
        path: path.display().to_string(),
        message: crate::toml_errors::describe(&e, text),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_or_a_link_to_nothing_where_the_config_is_found_is_a_problem_not_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        // A parent's config that must not be used instead.
        std::fs::create_dir_all(root.join(".agentenv")).unwrap();
        std::fs::write(root.join(".agentenv/config.toml"), "").unwrap();
        std::fs::create_dir_all(root.join("folder/.agentenv/config.toml")).unwrap();
        std::fs::create_dir_all(root.join("link/.agentenv")).unwrap();
        std::os::unix::fs::symlink(
            root.join("gone.toml"),
            root.join("link/.agentenv/config.toml"),
        )
        .unwrap();
        let load = |cwd: &str| {
            let env = Environment::from_vars(Vec::<(String, String)>::new(), &root.join(cwd));
            ConfigDocument::load_from(None, Arc::new(env))
        };
        let doc = load("folder");
        assert_eq!(
            doc.path.as_deref(),
            Some(root.join("folder/.agentenv/config.toml").as_path())
        );
        let problem = doc.error.unwrap();
        assert_eq!(problem.code, "config-unreadable");
        assert!(
            problem.reason.contains("it is a folder"),
            "{}",
            problem.reason
        );
        let problem = load("link").error.unwrap();
        assert!(
            problem.reason.contains(&format!(
                "it is a link to {}, which does not exist",
                root.join("gone.toml").display()
            )),
            "{}",
            problem.reason
        );
    }

    #[test]
    fn malformed_toml_names_line_and_column() {
        let doc = ConfigDocument::from_text("[a]\nx = 1\ny =\n", Path::new("/p/config.toml"));
        let problem = doc.error.unwrap();
        assert_eq!(problem.code, "config-unreadable");
        assert!(
            problem
                .reason
                .starts_with("Malformed config.toml at /p/config.toml: "),
            "{}",
            problem.reason
        );
        assert!(
            problem.reason.contains("(at line 3, column"),
            "{}",
            problem.reason
        );
    }

    #[test]
    fn a_bom_is_stripped_and_an_empty_file_is_fine() {
        let doc = ConfigDocument::from_text("\u{feff}[x]\na = 1\n", Path::new("/c.toml"));
        assert!(doc.error.is_none());
        assert_eq!(doc.table["x"]["a"].as_integer(), Some(1));
        let doc = ConfigDocument::from_text("", Path::new("/c.toml"));
        assert!(doc.error.is_none() && doc.table.is_empty());
    }

    #[test]
    fn invalid_utf8_is_unreadable() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.toml");
        std::fs::write(&p, b"a = \"\xff\"").unwrap();
        let env = Environment::from_vars([(CONFIG_VAR, p.as_os_str())], dir.path());
        let doc = ConfigDocument::load(Arc::new(env));
        let problem = doc.error.unwrap();
        assert_eq!(problem.code, "config-unreadable");
        assert!(problem.reason.contains("is not valid UTF-8"));
        assert_eq!(doc.path.unwrap(), p);
    }
}
