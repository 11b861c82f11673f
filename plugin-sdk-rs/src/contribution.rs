//! Contributions of the groups the SDK has no trait for (envs, artifacts, providers, ...).

use agent_env_protocol::methods::ContributionInfo;

/// A contribution reported in `initialize` as is; answer its methods with [`crate::Plugin::method`].
///
/// ```
/// use agent_env_plugin_sdk::{json, Contribution, Plugin};
///
/// // An env type (`[provides.envs] essay_env = "EssayEnv"`) whose `reset` the host calls as a method.
/// let plugin = Plugin::new("agentenv-essays", "0.1.0")
///     .contribution(Contribution::new("envs", "essay_env", "EssayEnv").methods(&["from_dict", "reset"]))
///     .method("env.reset", |_ctx, params| Ok(json!({"reset": params["name"]})));
/// let answer = plugin.initialize_result(1);
/// assert_eq!(answer.contributions[0].type_name, "essay_env");
/// assert_eq!(answer.contributions[0].methods, ["from_dict", "reset"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contribution {
    /// What `initialize` reports for it.
    pub info: ContributionInfo,
}

impl Contribution {
    /// A contribution of `group` named `name` (its type too) with class label `class`.
    pub fn new(group: &str, name: &str, class: &str) -> Self {
        Contribution {
            info: ContributionInfo {
                group: group.into(),
                name: name.into(),
                type_name: name.into(),
                class: class.into(),
                methods: Vec::new(),
                description: None,
            },
        }
    }

    /// The methods it implements (checked by the host against the group's rules).
    pub fn methods(mut self, methods: &[&str]) -> Self {
        self.info.methods = methods.iter().map(|m| m.to_string()).collect();
        self
    }

    /// A type that differs from the name (the host reports that as invalid, as the original does).
    pub fn type_name(mut self, type_name: &str) -> Self {
        self.info.type_name = type_name.into();
        self
    }

    /// A one-line description, shown by `agent-env plugin show`.
    pub fn description(mut self, text: &str) -> Self {
        self.info.description = Some(text.into());
        self
    }
}
