//! Writes 10 MB to stderr before the handshake, then works.

use std::io::Write;

use agent_env_fixture_plugins::with_basics;
use agent_env_plugin_sdk::Plugin;

fn main() {
    let line = [b'#'; 1023];
    let mut stderr = std::io::stderr().lock();
    for i in 0..10_240 {
        let _ = stderr.write_all(&line);
        let _ = writeln!(stderr);
        if i % 1024 == 0 {
            let _ = stderr.flush();
        }
    }
    let _ = writeln!(stderr, "fixture-stderr-flood: 10 MB written, now serving");
    drop(stderr);
    with_basics(Plugin::new("agentenv-fixture-stderr-flood", "0.1.0")).serve()
}
