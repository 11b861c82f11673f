//! The "validate" step: a plugin's `initialize` answer held against its manifest and its group's rules
//! (docs/protocol.md §4.1). Every message keeps the original's wording.

use agent_env_protocol::methods::{ContributionInfo, InitializeResult};
use agent_env_protocol::names::{canonical_name, required_methods, Required};

/// Checks the answer as a whole: it must be for the package the manifest names.
pub fn check_package(manifest_name: &str, answer: &InitializeResult) -> Result<(), String> {
    if canonical_name(&answer.plugin.name) != canonical_name(manifest_name) {
        return Err(format!(
            "the plugin answered initialize as '{}', but its manifest names the package '{manifest_name}'",
            answer.plugin.name
        ));
    }
    Ok(())
}

/// Finds the answer's entry for one manifest contribution and checks it; returns it when it fits.
pub fn check_contribution<'a>(
    group: &str,
    name: &str,
    class: &str,
    answer: &'a InitializeResult,
) -> Result<&'a ContributionInfo, String> {
    let info = find_contribution(group, name, class, answer)?;
    check_class(group, name, class, info)?;
    Ok(info)
}

/// The answer's entry for one manifest contribution.
pub fn find_contribution<'a>(
    group: &str,
    name: &str,
    class: &str,
    answer: &'a InitializeResult,
) -> Result<&'a ContributionInfo, String> {
    answer
        .contributions
        .iter()
        .find(|c| c.group == group && c.name == name)
        .ok_or_else(|| not_provided(group, class, answer))
}

/// Why the manifest's `class` of `group` is not in the answer under its name, with what the answer
/// has instead: the class under another name (a manifest and a plugin that disagree), or the names
/// the group does have.
fn not_provided(group: &str, class: &str, answer: &InitializeResult) -> String {
    let in_group: Vec<&ContributionInfo> = answer
        .contributions
        .iter()
        .filter(|c| c.group == group)
        .collect();
    if let Some(other) = in_group.iter().find(|c| c.class == class) {
        return format!(
            "{class} is not provided by the plugin (it provides {class} as '{}': make the two names the same)",
            other.name
        );
    }
    let names: Vec<&str> = in_group.iter().map(|c| c.name.as_str()).collect();
    match names.is_empty() {
        true => format!("{class} is not provided by the plugin"),
        false => format!(
            "{class} is not provided by the plugin (its {group} are {})",
            names.join(", ")
        ),
    }
}

/// The group's rules for the class the entry describes: its type and its methods.
pub fn check_class(
    group: &str,
    name: &str,
    class: &str,
    info: &ContributionInfo,
) -> Result<(), String> {
    check_type(group, name, class, &info.type_name)?;
    check_methods(group, class, &info.methods)
}

/// A class that breaks its group's rules, as the original reports it: a CLI command `is not a
/// click.Command`, a root option `is not a click.Option` (each with what is missing), and a class of
/// any other group the `TypeError` its validation raised, `TypeError('Half must implement execute')`.
pub fn class_problem(group: &str, problem: &str) -> String {
    match not_click(group) {
        Some(kind) => format!("{kind} ({problem})"),
        None => format!("TypeError({})", crate::config::tables::py_str(problem)),
    }
}

/// What a class of the wrong shape is called in a CLI group (`is not a click.Command`); `None` in
/// the other groups.
pub fn not_click(group: &str) -> Option<&'static str> {
    match group {
        "cli_plugins" => Some("is not a click.Command"),
        "cli_root_options" => Some("is not a click.Option"),
        _ => None,
    }
}

/// Type equals name, in the groups where the name is the class's type.
fn check_type(group: &str, name: &str, class: &str, type_name: &str) -> Result<(), String> {
    if type_name == name {
        return Ok(());
    }
    match group {
        "envs" | "task_steps" | "explorer_plugins" => Err(format!(
            "{class} has type '{type_name}'; its entry point must be named '{type_name}'"
        )),
        "state_providers" => Err(format!(
            "{class} has type '{type_name}'; it must equal the entry-point name, the identity a store is reattached and torn down by"
        )),
        "env_providers" => Err(format!(
            "{class} has type '{type_name}'; it must equal the entry-point name, which its records carry as env_provider_type"
        )),
        // Artifacts may register extra names (checked by the registry), sandbox providers are checked on the
        // sandboxes they produce, and for CLI groups the entry-point name is the command or flag.
        _ => Ok(()),
    }
}

/// The group's required methods: `<class> must implement execute and from_dict`.
pub fn check_methods(group: &str, class: &str, methods: &[String]) -> Result<(), String> {
    let has = |m: &str| methods.iter().any(|x| x == m);
    match required_methods(group) {
        Required::All(required) => {
            let mut missing: Vec<&str> = required.iter().copied().filter(|m| !has(m)).collect();
            if missing.is_empty() {
                return Ok(());
            }
            missing.sort_unstable();
            Err(format!("{class} must implement {}", join_and(&missing)))
        }
        Required::Any(options) => {
            if options.iter().any(|m| has(m)) {
                return Ok(());
            }
            Err(format!("{class} must implement {}", options.join(" or ")))
        }
    }
}

/// `A`, `A and B`, `A, B and C`.
pub fn join_and(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_env_protocol::methods::PluginInfo;

    fn answer(contributions: Vec<ContributionInfo>) -> InitializeResult {
        InitializeResult {
            protocol: 1,
            plugin: PluginInfo {
                name: "agentenv_demo".into(),
                version: "1".into(),
            },
            contributions,
            stores: vec![],
        }
    }

    fn info(group: &str, name: &str, ty: &str, methods: &[&str]) -> ContributionInfo {
        ContributionInfo {
            group: group.into(),
            name: name.into(),
            type_name: ty.into(),
            class: "C".into(),
            methods: methods.iter().map(|m| m.to_string()).collect(),
            description: None,
        }
    }

    #[test]
    fn the_original_wording_is_kept() {
        let a = answer(vec![
            info("task_steps", "half", "half", &[]),
            info(
                "task_steps",
                "wrong",
                "something_else",
                &["execute", "from_dict"],
            ),
            info("sandbox_providers", "box", "box", &["terminate"]),
        ]);
        assert!(check_package("agentenv-demo", &a).is_ok());
        assert!(check_package("other", &a).is_err());
        assert_eq!(
            check_contribution("task_steps", "half", "Half", &a).unwrap_err(),
            "Half must implement execute and from_dict"
        );
        assert_eq!(
            check_contribution("task_steps", "wrong", "WrongName", &a).unwrap_err(),
            "WrongName has type 'something_else'; its entry point must be named 'something_else'"
        );
        assert_eq!(
            check_contribution("sandbox_providers", "box", "Box", &a).unwrap_err(),
            "Box must implement create_sandbox or create_vm"
        );
        assert_eq!(
            check_contribution("envs", "gone", "Gone", &a).unwrap_err(),
            "Gone is not provided by the plugin"
        );
        assert_eq!(join_and(&["a", "b", "c"]), "a, b and c");
        // What the answer has instead: the class under another name, or the group's names.
        assert_eq!(
            check_contribution("task_steps", "renamed", "C", &a).unwrap_err(),
            "C is not provided by the plugin (it provides C as 'half': make the two names the same)"
        );
        assert_eq!(
            check_contribution("task_steps", "other", "Other", &a).unwrap_err(),
            "Other is not provided by the plugin (its task_steps are half, wrong)"
        );
    }
}
