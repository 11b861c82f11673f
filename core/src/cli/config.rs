//! `agent-env config` (being built: see the issue that owns this command).

#[derive(clap::Args)]
pub struct ConfigArgs {}

pub fn run(_args: ConfigArgs, _verbose: bool) -> i32 {
    super::fail("agent-env config is not built yet")
}
