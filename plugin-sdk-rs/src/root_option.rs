//! Root options: flags such as `agent-env --tenant acme <command>`, answered through `cli.root_option`.

use std::path::PathBuf;

/// A flag added to `agent-env` itself. Register it with [`crate::Plugin::root_option`] and list it under
/// `[provides.cli_root_options]` (`tenant = { class = "TenantOption", value = "NAME" }` for a flag that
/// takes a value, no `value` for a boolean flag).
///
/// agent-env calls [`RootOption::apply`] when the flag is given (and on every invocation when the
/// manifest says `always = true`); `agent-env plugin list` and `check` also call it with the flag absent
/// to check that it works then.
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
