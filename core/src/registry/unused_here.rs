//! The contribution groups a plugin may fill that nothing in this agent-env uses yet. A run uses a
//! plugin's task steps (`execute`), artifact types (a bundle's artifacts are checked against them)
//! and bundles; `agent-env up` its explorer plugins; the command line its commands and root options.
//! Env types, sandbox providers, state providers and environment providers load and are checked as
//! the original checks them, so the report gives them the original's status, but no run calls them:
//! every sandbox is the built-in `local` one, and nothing here deploys envs or acquires env state.

/// A group whose plugin contributions nothing here uses yet, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnusedGroup {
    /// The group, as manifests write it (`sandbox_providers`).
    pub group: &'static str,
    /// One contribution of it, in words (`sandbox provider`).
    pub what: &'static str,
    /// Many of them, in words (`sandbox providers`).
    pub what_plural: &'static str,
    /// Why no run uses one: what this agent-env does instead.
    pub instead: &'static str,
}

/// The groups nothing here uses a plugin's contributions of, in the order of the protocol's groups.
pub const UNUSED_GROUPS: [UnusedGroup; 4] = [
    UnusedGroup {
        group: "envs",
        what: "env type",
        what_plural: "env types",
        instead: "nothing here deploys envs",
    },
    UnusedGroup {
        group: "sandbox_providers",
        what: "sandbox provider",
        what_plural: "sandbox providers",
        instead: "every run deploys its sandboxes with the built-in 'local' provider",
    },
    UnusedGroup {
        group: "state_providers",
        what: "state provider",
        what_plural: "state providers",
        instead: "nothing here acquires env state",
    },
    UnusedGroup {
        group: "env_providers",
        what: "environment provider",
        what_plural: "environment providers",
        instead: "nothing here deploys envs",
    },
];

/// The group, when nothing here uses a plugin's contributions of it yet.
pub fn unused_group(group: &str) -> Option<&'static UnusedGroup> {
    UNUSED_GROUPS.iter().find(|u| u.group == group)
}

/// The warning for a contribution that took effect (`active`) in a group nothing here uses yet:
/// `the sandbox provider 'myprov' of agentenv-boxes is active, but this agent-env does not use
/// plugins' sandbox providers yet: …`. `None` for a group a run uses.
pub fn unused_contribution_warning(package: &str, group: &str, name: &str) -> Option<String> {
    let unused = unused_group(group)?;
    let consequence = match unused.group {
        "sandbox_providers" => format!(
            "so `agent-env run --sandbox {name}` (or [sandbox] default = \"{name}\") cannot pick it"
        ),
        _ => "so no run uses it".to_string(),
    };
    Some(format!(
        "the {what} '{name}' of {package} is active, but this agent-env does not use plugins' {plural} yet: {instead}, {consequence}",
        what = unused.what,
        plural = unused.what_plural,
        instead = unused.instead,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_groups_a_run_uses_get_no_warning() {
        for group in [
            "task_steps",
            "artifacts",
            "bundles",
            "explorer_plugins",
            "cli_plugins",
            "cli_root_options",
        ] {
            assert_eq!(
                unused_contribution_warning("p", group, "x"),
                None,
                "{group}"
            );
        }
        for unused in &UNUSED_GROUPS {
            assert!(agent_env_protocol::names::is_group(unused.group));
        }
    }

    #[test]
    fn a_sandbox_provider_says_which_run_option_cannot_pick_it() {
        assert_eq!(
            unused_contribution_warning("agentenv-boxes", "sandbox_providers", "myprov").unwrap(),
            "the sandbox provider 'myprov' of agentenv-boxes is active, but this agent-env does not use plugins' sandbox providers yet: every run deploys its sandboxes with the built-in 'local' provider, so `agent-env run --sandbox myprov` (or [sandbox] default = \"myprov\") cannot pick it"
        );
        assert_eq!(
            unused_contribution_warning("agentenv-x", "envs", "browser").unwrap(),
            "the env type 'browser' of agentenv-x is active, but this agent-env does not use plugins' env types yet: nothing here deploys envs, so no run uses it"
        );
    }
}
