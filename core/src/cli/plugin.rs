//! `agent-env plugin` (being built: see the issue that owns this command).

#[derive(clap::Args)]
pub struct PluginArgs {}

pub fn run(_args: PluginArgs, _verbose: bool) -> i32 {
    super::fail("agent-env plugin is not built yet")
}
