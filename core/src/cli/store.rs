//! `agent-env store` (being built: see the issue that owns this command).

#[derive(clap::Args)]
pub struct StoreArgs {}

pub fn run(_args: StoreArgs, _verbose: bool) -> i32 {
    super::fail("agent-env store is not built yet")
}
