//! The names a scaffold derives from the package name: the step type, the class label, the Python
//! module.

use super::ScaffoldError;

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
            why: why.to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;

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
        ] {
            let err = Names::of(name).unwrap_err().to_string();
            assert!(err.contains(why), "{name}: {err}");
        }
    }
}
