//! Package names and contribution groups.

/// The canonical form of a package name: lowercase, each run of `-`, `_` and `.` becomes one `-`.
pub fn canonical_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_run = false;
    for ch in name.chars() {
        if matches!(ch, '-' | '_' | '.') {
            if !in_run {
                out.push('-');
            }
            in_run = true;
        } else {
            out.extend(ch.to_lowercase());
            in_run = false;
        }
    }
    out
}

/// Why `name` is not a package name, if it is not one: a package name is ASCII letters, digits, `-`,
/// `_` and `.`, starting and ending with a letter or digit (Python's rule for distribution names,
/// which every language's packages here keep). `impl = "<package>:<Class>"` and the plugins
/// directory's folders rely on it.
pub fn package_name_problem(name: &str) -> Option<&'static str> {
    let punctuation = |c: char| matches!(c, '-' | '_' | '.');
    if name.is_empty() {
        return Some("it is empty");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || punctuation(c))
    {
        return Some("it holds a character other than a letter, a digit, '-', '_' or '.'");
    }
    if name.starts_with(punctuation) || name.ends_with(punctuation) {
        return Some("it starts or ends with '-', '_' or '.'");
    }
    None
}

/// The core's own package name, as plugins' `requires` tables spell it.
pub const CORE_PACKAGE: &str = "agentenv-framework";
/// The protocol's package name, as plugins' `requires` tables spell it.
pub const PROTOCOL_PACKAGE: &str = "agentenv-framework-protocol";

/// The contribution groups, in report order.
pub const GROUPS: [&str; 10] = [
    "envs",
    "artifacts",
    "task_steps",
    "sandbox_providers",
    "state_providers",
    "env_providers",
    "explorer_plugins",
    "cli_plugins",
    "cli_root_options",
    "bundles",
];

/// The groups whose names are types in a registry (everything but CLI groups and bundles).
pub const TYPE_GROUPS: [&str; 7] = [
    "envs",
    "artifacts",
    "task_steps",
    "sandbox_providers",
    "state_providers",
    "env_providers",
    "explorer_plugins",
];

/// Whether `name` is one of the ten contribution groups.
pub fn is_group(name: &str) -> bool {
    GROUPS.contains(&name)
}

/// The report spelling of a group: `agent_env.<group>`.
pub fn report_group(group: &str) -> String {
    format!("agent_env.{group}")
}

/// Methods a contribution of the group must implement. `Any` means at least one of them.
pub enum Required {
    /// Every one of them.
    All(&'static [&'static str]),
    /// At least one of them.
    Any(&'static [&'static str]),
}

/// What a contribution of `group` must implement (none for groups without a rule).
pub fn required_methods(group: &str) -> Required {
    match group {
        "envs" => Required::All(&["from_dict"]),
        "task_steps" => Required::All(&["execute", "from_dict"]),
        "sandbox_providers" => Required::Any(&["create_sandbox", "create_vm"]),
        "state_providers" => Required::All(&["acquire", "teardown"]),
        "env_providers" => Required::All(&["deploy", "close"]),
        "explorer_plugins" => Required::All(&["router"]),
        "cli_plugins" => Required::All(&["run"]),
        "cli_root_options" => Required::All(&["apply"]),
        _ => Required::All(&[]),
    }
}

/// The store kinds.
pub const STORE_KINDS: [&str; 4] = ["document", "object", "image", "secret"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_names_fold_case_and_separator_runs() {
        assert_eq!(canonical_name("AgentEnv_Old"), "agentenv-old");
        assert_eq!(canonical_name("acme.browser"), "acme-browser");
        assert_eq!(canonical_name("a-_.b"), "a-b");
    }

    #[test]
    fn a_package_name_is_letters_digits_and_inner_punctuation() {
        for name in ["agentenv-demo", "Acme.Browser_2", "x", "0day"] {
            assert_eq!(package_name_problem(name), None, "{name}");
        }
        for (name, why) in [
            ("", "empty"),
            ("my plugin", "a character other than"),
            ("con:x", "a character other than"),
            ("café", "a character other than"),
            ("-x", "starts or ends"),
            ("x.", "starts or ends"),
        ] {
            let problem = package_name_problem(name).unwrap_or_default();
            assert!(problem.contains(why), "{name}: {problem}");
        }
    }
}
