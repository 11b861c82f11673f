//! Speaks only protocol 99, which no agent-env speaks yet.

use agent_env_fixture_plugins::with_basics;
use agent_env_plugin_sdk::Plugin;

fn main() {
    with_basics(Plugin::new("agentenv-fixture-protocol99", "9.9.0").protocols(99, 99)).serve()
}
