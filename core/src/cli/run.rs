//! `agent-env run` (being built: see the issue that owns this command).

#[derive(clap::Args)]
pub struct RunArgs {}

pub fn run(_args: RunArgs, _verbose: bool) -> i32 {
    super::fail("agent-env run is not built yet")
}
