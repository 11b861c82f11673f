//! Works, but writes non-protocol lines straight to the protocol stream: one before the handshake
//! and two on each `noisy_echo`, through a raw duplicate of stdout taken before the SDK moves
//! stdout aside.

use std::sync::OnceLock;

use agent_env_fixture_plugins::{dup_stdout, with_basics, write_raw};
use agent_env_plugin_sdk::Plugin;

static RAW_STDOUT: OnceLock<i32> = OnceLock::new();

fn main() {
    let raw = *RAW_STDOUT.get_or_init(dup_stdout);
    write_raw(raw, b"DEBUG: fixture-garbage starting up\n");
    let plugin = Plugin::new("agentenv-fixture-garbage", "0.1.0").method(
        "noisy_echo",
        move |_ctx, params| {
            write_raw(raw, b"progress: 50% (not JSON)\n");
            write_raw(raw, b"{\"hello\":\"json, but not JSON-RPC\"}\n");
            Ok(params)
        },
    );
    with_basics(plugin).serve()
}
