//! The names agent-env owns in each group. A plugin may never take one of these; config, the registry,
//! the run and the report read them from here.

/// Built-in env types.
pub const ENVS: &[&str] = &[
    "computer_driver",
    "gateway_server",
    "mcp_server",
    "multi",
    "service_db",
    "website",
];

/// Built-in artifact types.
pub const ARTIFACTS: &[&str] = &[
    "cli",
    "file",
    "file_artifact_universe",
    "docker_image",
    "environment",
    "environment_universe",
    "skill",
];

/// The built-in task step types this agent-env runs (the rest of [`TASK_STEPS`] are reserved: the
/// Python agent-env has them).
pub const RUNNABLE_TASK_STEPS: &[&str] = &["deploy_sandbox", "load_artifact", "verify_sandbox"];

/// Built-in task step types.
pub const TASK_STEPS: &[&str] = &[
    // deploy and set up
    "deploy_sandbox",
    "deploy_env",
    "deploy_agent",
    "deploy_human_agent",
    "install_agent",
    "load_artifact",
    "add_skills",
    "apply_server_config",
    "modify_env_tool_access",
    "peer_agents",
    "register_env_triggers",
    "register_agent_triggers",
    "sync_env_clock",
    "reset_env",
    "build_mcp_cli",
    "run_docker_container",
    "run_code",
    "review",
    "teardown_sandboxes",
    // agent interaction and state
    "prompt_agent",
    "collect_artifacts",
    "snapshot_agent_state",
    "snapshot_env",
    // verifiers
    "verify_sandbox",
    "rubrics_verifier",
    "env_outcome_verifier",
    "agent_prompt_response_verifier",
    "run_container_unit_tests_verifier",
    "aggregate_verifiers",
    // validators
    "verify_mcp_tool_schema",
    "verify_spec_conformance",
    "verify_mcp_env_assessment",
    "validation_gate_aggregator",
    "verify_universe_load_export_roundtrip",
    "combine_universe_verdicts",
    "verify_env_card",
    "verify_env_core_protocol",
    "verify_a2a_agent_card",
    "verify_a2a_agent_config_identity",
    "verify_a2a_agent_mcp",
    "verify_a2a_core_protocol",
    "verify_a2a_install",
    "verify_a2a_modalities",
    "verify_a2a_peer_agents",
    "verify_a2a_role",
    "verify_a2a_skill_config",
    "verify_a2a_snapshot",
    "verify_a2a_system_prompt",
    "verify_a2a_trajectory",
];

/// Built-in sandbox providers.
pub const SANDBOX_PROVIDERS: &[&str] = &[
    "modal",
    "modal_vm",
    "e2b",
    "sail_vm",
    "smol_vm",
    "tensorlake",
    "vercel",
    "tenki",
    "boxd",
    "daytona",
    "local",
];

/// Built-in env state providers.
pub const STATE_PROVIDERS: &[&str] = &["local_postgres"];

/// Built-in environment providers.
pub const ENV_PROVIDERS: &[&str] = &["gateway", "server"];

/// Command names the core owns: agent-env's own commands, then the original's reserved ones.
pub const CLI_COMMANDS: &[&str] = &[
    "plugin",
    "config",
    "run",
    "store",
    "a2a-agent",
    "artifact",
    "bundle",
    "env",
    "eval",
    "task",
    "up",
    "completions",
    "man",
    "help",
];

/// Root flags the core owns.
pub const ROOT_FLAGS: &[&str] = &[
    "--verbose",
    "-v",
    "--version",
    "-V",
    "--color",
    "--help",
    "-h",
];

/// agent-env's own bundles (name, value shown in the report).
pub const CORE_BUNDLES: &[(&str, &str)] = &[("hello", "agent-env:bundles/hello")];

/// The built-in names of a group.
pub fn names(group: &str) -> &'static [&'static str] {
    match group {
        "envs" => ENVS,
        "artifacts" => ARTIFACTS,
        "task_steps" => TASK_STEPS,
        "sandbox_providers" => SANDBOX_PROVIDERS,
        "state_providers" => STATE_PROVIDERS,
        "env_providers" => ENV_PROVIDERS,
        "cli_plugins" => CLI_COMMANDS,
        "cli_root_options" => ROOT_FLAGS,
        _ => &[],
    }
}

pub fn is_builtin(group: &str, name: &str) -> bool {
    names(group).contains(&name)
}

/// The built-in names of a group that this agent-env has itself; the rest of [`names`] are built into
/// the Python agent-env and only reserved here. It runs three of the original's steps and its one
/// sandbox provider, deploys no envs and acquires no env state, and accepts every built-in artifact
/// type; the CLI groups name its own commands and flags.
fn own_names(group: &str) -> &'static [&'static str] {
    match group {
        "task_steps" => RUNNABLE_TASK_STEPS,
        "sandbox_providers" => &[crate::sandbox::LOCAL],
        "envs" | "state_providers" | "env_providers" => &[],
        other => names(other),
    }
}

/// Whether `name` is built into the Python agent-env and reserved here, though this agent-env does not
/// have it (`prompt_agent`, `modal`).
pub fn only_in_python(group: &str, name: &str) -> bool {
    is_builtin(group, name) && !own_names(group).contains(&name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_names_this_agent_env_has_are_told_from_the_reserved_ones() {
        use super::only_in_python;
        assert!(only_in_python("task_steps", "prompt_agent"));
        assert!(!only_in_python("task_steps", "deploy_sandbox"));
        assert!(only_in_python("sandbox_providers", "modal"));
        assert!(!only_in_python("sandbox_providers", "local"));
        assert!(only_in_python("envs", "mcp_server"));
        assert!(!only_in_python("artifacts", "file"));
        assert!(!only_in_python("cli_plugins", "run"));
        // Not built in anywhere.
        assert!(!only_in_python("task_steps", "grade_essay"));
    }

    #[test]
    fn the_lists_hold_no_duplicates() {
        for group in agent_env_protocol::names::GROUPS {
            let names = super::names(group);
            let set: std::collections::HashSet<_> = names.iter().collect();
            assert_eq!(set.len(), names.len(), "{group}");
        }
    }
}
