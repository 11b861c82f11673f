//! `plugin add --installer`: the installers this agent-env has, and what a command line naming one of
//! the Python agent-env's (`uv-tool`, `pipx`, `uv-project`) is told to use instead.

use std::ffi::OsStr;

use clap::builder::{EnumValueParser, PossibleValue, TypedValueParser};
use clap::error::{ContextKind, ContextValue};
use clap::ValueEnum;

use crate::install::source::Installer;

/// The installers the Python agent-env took that this one does not.
const ORIGINAL_INSTALLERS: [&str; 3] = ["uv-tool", "pipx", "uv-project"];

/// Reads `--installer` as clap reads a [`Installer`] (its values listed in help, completions and the
/// error), adding to the error of one of the Python agent-env's installers what to use here.
#[derive(Clone, Copy)]
pub(super) struct InstallerArg;

impl TypedValueParser for InstallerArg {
    type Value = Installer;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Installer, clap::Error> {
        EnumValueParser::<Installer>::new()
            .parse_ref(cmd, arg, value)
            .map_err(|mut error| {
                if let Some(tip) = value.to_str().and_then(instead_of_original) {
                    error.insert(
                        ContextKind::Suggested,
                        ContextValue::StyledStrs(vec![tip.into()]),
                    );
                }
                error
            })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            Installer::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}

/// What to use instead of `given`, when it is one of the Python agent-env's installers.
fn instead_of_original(given: &str) -> Option<String> {
    ORIGINAL_INSTALLERS.contains(&given).then(|| {
        format!(
            "{given} is an installer of the Python agent-env's: here pip installs a Python plugin into a virtual environment agent-env manages (.python in the plugins directory), not into one of yours; a Python package name, a wheel or NAME @ URL picks pip without --installer (or give --installer pip)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_originals_installers_are_told_what_to_use() {
        assert!(instead_of_original("uv-tool").is_some_and(|t| t.contains("--installer pip")));
        assert!(instead_of_original("pipx").is_some());
        assert_eq!(instead_of_original("npm"), None);
    }
}
