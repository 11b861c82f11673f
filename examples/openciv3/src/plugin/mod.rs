//! The plugin as agent-env sees it: the store class, the three task steps, the `openciv3` command and the
//! manifest, registered on the SDK's [`Plugin`].

pub mod cli;
pub mod install;
pub mod object_store;
pub mod steps;

use agent_env_plugin_sdk::Plugin;

/// The package name, as the manifest spells it.
pub const PACKAGE: &str = "agentenv-openciv3";
/// The plugin's version, as the manifest gives it (the plugin is versioned apart from the workspace).
pub const VERSION: &str = "0.1.0";
/// The manifest installed next to the binary (and printed for `--agent-env-manifest`).
pub const MANIFEST: &str = include_str!("../../agent-env-plugin.toml");

/// The plugin with everything it provides.
pub fn plugin() -> Plugin {
    Plugin::new(PACKAGE, VERSION)
        .manifest(MANIFEST)
        .store(object_store::store_class(PACKAGE))
        .task_step(steps::match_step::MatchStep)
        .task_step(steps::await_game::AwaitGameStep)
        .task_step(steps::save_recording::SaveRecordingStep)
        .cli_command(cli::Openciv3Command)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_plugin_answers_with_its_manifests_version() {
        let line = format!("\nversion = \"{}\"\n", super::VERSION);
        assert!(super::MANIFEST.contains(&line), "{}", super::MANIFEST);
    }
}
