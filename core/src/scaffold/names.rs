//! The names a scaffold derives from the package name: the step type, the class label, the Python
//! module; and whether the chosen language and kind can use them.

use super::reserved;
use super::{Kind, Language, ScaffoldError};
use crate::builtin_names;

/// The longest package name `plugin new` takes.
const MAX_NAME: usize = 64;

/// The names one plugin's files use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    /// The package (and executable, crate, distribution) name: `agentenv-word-count`.
    pub package: String,
    /// The contribution's name: the package without an `agentenv-` prefix, `-` as `_`: `word_count`.
    pub contribution: String,
    /// The contribution's class label, in CamelCase: `WordCount`.
    pub class: String,
    /// The Python import name: `agentenv_word_count`.
    pub module: String,
}

impl Names {
    /// Checks `package` (lowercase ASCII letters, digits and single `-` between them, starting with a
    /// letter) and derives the rest.
    pub fn of(package: &str) -> Result<Names, ScaffoldError> {
        let bad = |why: &str| ScaffoldError::BadName {
            name: package.to_string(),
            why: format!("{why} (e.g. agentenv-word-count)"),
        };
        if package.is_empty() || package.len() > MAX_NAME {
            return Err(bad("it must be 1 to 64 characters long"));
        }
        if !package.starts_with(|c: char| c.is_ascii_lowercase()) {
            return Err(bad("it must start with a lowercase letter"));
        }
        if !package
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(bad("it may hold only lowercase letters, digits and '-'"));
        }
        if package.ends_with('-') || package.contains("--") {
            return Err(bad("each '-' must stand between two letters or digits"));
        }
        if crate::install::is_core(package) {
            return Err(bad("it is agent-env's own name"));
        }
        let base = package.strip_prefix("agentenv-").unwrap_or(package);
        if !base.starts_with(|c: char| c.is_ascii_lowercase()) {
            return Err(bad(
                "the part after 'agentenv-' must start with a letter: the code names its function and class after it",
            ));
        }
        if reserved::is_sdk_name(package) {
            return Err(bad(
                "it is the name of agent-env's SDK, which the project depends on",
            ));
        }
        let contribution = base.replace('-', "_");
        let class = base
            .split('-')
            .map(|part| {
                let mut chars = part.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            })
            .collect();
        Ok(Names {
            package: package.to_string(),
            contribution,
            class,
            module: package.replace('-', "_"),
        })
    }
}

impl Names {
    /// Refuses names the project for `language` and `kind` could not use: a word its language
    /// reserves where the code names something after the package, a module that would hide
    /// another, or a step type or command agent-env already has (the plugin's would be skipped).
    pub fn usable_in(&self, language: Language, kind: Kind) -> Result<(), ScaffoldError> {
        let bad = |why: String| ScaffoldError::BadName {
            name: self.package.clone(),
            why,
        };
        let suggestion = format!("a longer name, such as {}-plugin", self.package);
        match language {
            Language::Python => {
                // The module always; the contribution where the code names a function after it.
                let mut named = vec![&self.module];
                if matches!(kind, Kind::Step | Kind::Cli) {
                    named.push(&self.contribution);
                }
                if let Some(word) = named.into_iter().find(|w| reserved::is_python_keyword(w)) {
                    return Err(bad(format!(
                        "'{word}' is a Python keyword, and the code names a module or function after it; choose {suggestion}"
                    )));
                }
                if matches!(kind, Kind::Store(_)) && reserved::is_python_keyword(&self.class) {
                    return Err(bad(format!(
                        "'{}' is a Python keyword, and the code names its store class after it; choose {suggestion}",
                        self.class
                    )));
                }
                if reserved::hides_a_python_module(&self.module) {
                    return Err(bad(format!(
                        "its Python module, '{}', would hide the module of that name that Python or the project's tools already have; choose {suggestion}",
                        self.module
                    )));
                }
            }
            Language::Rust => {
                if let Some(word) = [&self.module, &self.class]
                    .into_iter()
                    .find(|w| reserved::is_rust_word(w))
                {
                    return Err(bad(format!(
                        "'{word}' is a word Rust reserves, and the code names its crate or type after it; choose {suggestion}"
                    )));
                }
            }
            // The module path (`example.com/NAME`) and the code name nothing else after the package.
            Language::Go => {}
        }
        match kind {
            Kind::Step if builtin_names::is_builtin("task_steps", &self.contribution) => {
                Err(bad(format!(
                    "'{}' is one of agent-env's own task step types, so the plugin's step would be skipped; choose {suggestion}",
                    self.contribution
                )))
            }
            Kind::Cli if builtin_names::is_builtin("cli_plugins", &self.command()) => {
                Err(bad(format!(
                    "'agent-env {}' is one of agent-env's own commands, so the plugin's command would be skipped; choose {suggestion}",
                    self.command()
                )))
            }
            _ => Ok(()),
        }
    }

    /// The command a CLI plugin's project gives: the contribution's name with `-` for `_`.
    pub fn command(&self) -> String {
        self.contribution.replace('_', "-")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaffold::StoreKind;

    #[test]
    fn names_derive_from_the_package() {
        let n = Names::of("agentenv-word-count").unwrap();
        assert_eq!(n.contribution, "word_count");
        assert_eq!(n.class, "WordCount");
        assert_eq!(n.module, "agentenv_word_count");
        let n = Names::of("grader2").unwrap();
        assert_eq!(
            (n.contribution.as_str(), n.class.as_str()),
            ("grader2", "Grader2")
        );
    }

    #[test]
    fn a_name_that_cannot_be_a_package_is_refused_with_the_reason() {
        for (name, why) in [
            ("", "1 to 64"),
            ("2fast", "start with a lowercase letter"),
            ("my_Plugin", "only lowercase letters"),
            ("a--b", "between two"),
            ("a-", "between two"),
            ("agent-env", "agent-env's own name"),
            (
                "agentenv-2fast",
                "after 'agentenv-' must start with a letter",
            ),
            ("agent-env-plugin-sdk", "the name of agent-env's SDK"),
            ("agent-env-plugin", "the name of agent-env's SDK"),
        ] {
            let err = Names::of(name).unwrap_err().to_string();
            assert!(err.contains(why), "{name}: {err}");
        }
    }

    #[test]
    fn a_name_the_language_or_kind_cannot_use_is_refused_with_the_reason() {
        for (name, language, kind, why) in [
            (
                "agentenv-class",
                Language::Python,
                Kind::Step,
                "'class' is a Python keyword",
            ),
            (
                "agentenv-import",
                Language::Python,
                Kind::Cli,
                "'import' is a Python keyword",
            ),
            (
                "import",
                Language::Python,
                Kind::Store(StoreKind::Object),
                "'import' is a Python keyword",
            ),
            (
                "agentenv-none",
                Language::Python,
                Kind::Store(StoreKind::Document),
                "'None' is a Python keyword",
            ),
            (
                "json",
                Language::Python,
                Kind::Step,
                "its Python module, 'json', would hide",
            ),
            (
                "pytest",
                Language::Python,
                Kind::Step,
                "its Python module, 'pytest', would hide",
            ),
            (
                "agentenv-self",
                Language::Rust,
                Kind::Step,
                "'Self' is a word Rust reserves",
            ),
            (
                "match",
                Language::Rust,
                Kind::Store(StoreKind::Secret),
                "'match' is a word Rust reserves",
            ),
            (
                "agentenv-deploy-sandbox",
                Language::Go,
                Kind::Step,
                "'deploy_sandbox' is one of agent-env's own task step types",
            ),
            (
                "agentenv-run",
                Language::Python,
                Kind::Cli,
                "'agent-env run' is one of agent-env's own commands",
            ),
        ] {
            let err = Names::of(name)
                .unwrap()
                .usable_in(language, kind)
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{name}: {err}");
        }
    }

    #[test]
    fn what_only_another_language_or_kind_reserves_is_allowed() {
        for (name, language, kind) in [
            ("agentenv-class", Language::Rust, Kind::Step),
            ("json", Language::Go, Kind::Step),
            ("fmt", Language::Go, Kind::Step),
            ("fmt", Language::Python, Kind::Step),
            ("agentenv-none", Language::Python, Kind::Step),
            ("agentenv-run", Language::Python, Kind::Step),
            ("agentenv-deploy-sandbox", Language::Rust, Kind::Cli),
            (
                "agentenv-word-count",
                Language::Python,
                Kind::Store(StoreKind::Document),
            ),
        ] {
            let names = Names::of(name).unwrap();
            assert!(names.usable_in(language, kind).is_ok(), "{name}");
        }
    }
}
