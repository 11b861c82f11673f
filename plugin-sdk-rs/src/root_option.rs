//! Root options: flags such as `agent-env --tenant acme <command>`, answered through `cli.root_option`.

use std::path::PathBuf;

/// A flag added to `agent-env` itself. Register it with [`crate::Plugin::root_option`] and list it under
/// `[provides.cli_root_options]` (`tenant = { class = "TenantOption", value = "NAME" }` for a flag that
/// takes a value, no `value` for a boolean flag).
///
/// agent-env calls [`RootOption::apply`] when the flag is given (and on every invocation when the
/// manifest says `always = true`); `agent-env plugin list` and `check` also call it with the flag absent
/// to check that it works then.
///
/// ```
/// use std::path::PathBuf;
/// use agent_env_plugin_sdk::{Plugin, RootOption};
///
/// /// `--tenant NAME` selects `tenants/<NAME>.toml` as the config file.
/// struct Tenant;
///
/// impl RootOption for Tenant {
///     fn name(&self) -> &str { "tenant" }
///     fn class(&self) -> &str { "TenantOption" }
///     fn apply(&self, _flag: &str, value: Option<&str>) -> Result<Option<PathBuf>, String> {
///         match value {
///             None => Ok(None),                                  // the flag is absent
///             Some(name) if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') => {
///                 Ok(Some(PathBuf::from(format!("/etc/tenants/{name}.toml"))))
///             }
///             Some(name) => Err(format!("'{name}' is not a tenant name")),
///         }
///     }
/// }
///
/// assert_eq!(Tenant.apply("--tenant", Some("acme")), Ok(Some(PathBuf::from("/etc/tenants/acme.toml"))));
/// let plugin = Plugin::new("agentenv-tenant", "0.1.0").root_option(Tenant);
/// assert_eq!(plugin.initialize_result(1).contributions[0].methods, ["apply"]);
/// ```
pub trait RootOption: Send + Sync + 'static {
    /// The name under `[provides.cli_root_options]`: `tenant` for `--tenant`.
    fn name(&self) -> &str;

    /// The class label of the manifest entry.
    fn class(&self) -> &str;

    /// Applies the flag. `value` is its value (`"true"` for a boolean flag that is given), `None` when
    /// the flag is absent. Answer a config file to select it for the whole invocation; an error is shown
    /// to the user as `Error: CLI root option '--tenant' from '<package>' failed: <message>`.
    fn apply(&self, flag: &str, value: Option<&str>) -> Result<Option<PathBuf>, String>;
}
