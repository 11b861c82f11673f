//! Works, but aborts (SIGABRT) on `crash` and exits with the given code on `exit`.

use agent_env_fixture_plugins::with_basics;
use agent_env_plugin_sdk::Plugin;

fn main() {
    let plugin = Plugin::new("agentenv-fixture-crash", "0.1.0")
        .method("crash", |_ctx, _| {
            eprintln!("fixture-crash: about to abort in the middle of 'crash'");
            std::process::abort()
        })
        .method("exit", |_ctx, params| {
            eprintln!("fixture-crash: exiting in the middle of 'exit'");
            std::process::exit(params["code"].as_i64().unwrap_or(1) as i32)
        });
    with_basics(plugin).serve()
}
