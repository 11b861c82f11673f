//! What every plugin command says of a package name no installed package has: one sentence, the
//! installed packages named, and the closest of them offered when one is close.

use agent_env_protocol::names::canonical_name;

/// How alike a name and an installed package's must be to be offered (as other hints take them).
const HINT_CUTOFF: f64 = 0.75;

/// A package name given to a plugin command that no installed package has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no installed plugin package named '{name}'{} (installed: {})", self.hint(), self.installed_list())]
pub struct NotInstalled {
    /// The name as given.
    pub name: String,
    /// The installed packages' names.
    pub installed: Vec<String>,
    /// Packages the command takes that are no installed package: agent-env's own built-ins, which
    /// `plugin show` diagnoses as it does a plugin. Offered as a near miss, not listed as installed.
    pub built_in: Vec<String>,
}

impl NotInstalled {
    /// `name`, given where none of `installed` has it.
    pub fn new(name: &str, installed: impl IntoIterator<Item = impl Into<String>>) -> NotInstalled {
        NotInstalled {
            name: name.to_string(),
            installed: installed.into_iter().map(Into::into).collect(),
            built_in: Vec::new(),
        }
    }

    /// As [`NotInstalled::new`], for a command that also takes the packages `built_in`.
    pub fn with_built_in(mut self, built_in: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.built_in = built_in.into_iter().map(Into::into).collect();
        self
    }

    /// The installed package closest to the name given, when one is close: by canonical names, so a
    /// spelling of `_` for `-` or another case counts for nothing, and a name given without its
    /// `agentenv-` prefix is matched as well as with it.
    pub fn meant(&self) -> Option<&str> {
        let given = canonical_name(&self.name);
        let names: Vec<&String> = self.installed.iter().chain(&self.built_in).collect();
        let canonical: Vec<String> = names.iter().map(|n| canonical_name(n)).collect();
        let bare: Vec<&str> = canonical
            .iter()
            .map(|n| n.strip_prefix("agentenv-").unwrap_or(n))
            .collect();
        let given_bare = given.strip_prefix("agentenv-").unwrap_or(&given);
        let best =
            crate::similar::best_match(&given, canonical.iter().map(String::as_str), HINT_CUTOFF)
                .or_else(|| {
                crate::similar::best_match(given_bare, bare.iter().copied(), HINT_CUTOFF)
            })?;
        let index = canonical
            .iter()
            .zip(&bare)
            .position(|(full, short)| full == best || *short == best)?;
        Some(names[index].as_str())
    }

    /// `; did you mean 'x'?`, or nothing.
    fn hint(&self) -> String {
        self.meant()
            .map(|m| format!("; did you mean '{m}'?"))
            .unwrap_or_default()
    }

    /// The installed packages, comma-separated, or `none`.
    pub fn installed_list(&self) -> String {
        match self.installed.is_empty() {
            true => "none".to_string(),
            false => self.installed.join(", "),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_miss_is_offered_and_a_stranger_is_not() {
        let installed = ["agentenv-grader", "agentenv-word-count"];
        assert_eq!(
            NotInstalled::new("agentenv-gradr", installed).to_string(),
            "no installed plugin package named 'agentenv-gradr'; did you mean 'agentenv-grader'? (installed: agentenv-grader, agentenv-word-count)"
        );
        assert_eq!(
            NotInstalled::new("word_cont", installed).meant(),
            Some("agentenv-word-count")
        );
        assert_eq!(
            NotInstalled::new("nosuch", installed).to_string(),
            "no installed plugin package named 'nosuch' (installed: agentenv-grader, agentenv-word-count)"
        );
        assert_eq!(
            NotInstalled::new("x", Vec::<String>::new()).to_string(),
            "no installed plugin package named 'x' (installed: none)"
        );
    }
}
