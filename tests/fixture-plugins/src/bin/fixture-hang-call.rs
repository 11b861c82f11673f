//! Works, but `hang` never returns and ignores cancellation.

use agent_env_fixture_plugins::with_basics;
use agent_env_plugin_sdk::Plugin;

fn main() {
    let plugin = Plugin::new("agentenv-fixture-hang-call", "0.1.0").method("hang", |_ctx, _| {
        eprintln!("fixture-hang-call: hanging in 'hang', deaf to cancellation");
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    });
    with_basics(plugin).serve()
}
