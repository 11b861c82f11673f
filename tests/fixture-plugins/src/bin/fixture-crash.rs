//! Works, but aborts (SIGABRT) on `crash` and exits with the given code on `exit`; `exit_mid_line`
//! writes half a stderr line, sends a `$/log` line, finishes the stderr line and exits.

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
    let plugin = plugin.method("exit_mid_line", |ctx, _| {
        eprint!("fixture-crash: first half of a line, ");
        // The host has read the half line before the log line reaches it, as when a plugin logs
        // while something it runs is still writing a line.
        wait_until_stderr_is_read();
        ctx.host().log("info", "a log line between the halves");
        // Answered after the host took in the log line: notifications are read in order.
        let _ = ctx.host().settings();
        eprintln!("and its second half");
        std::process::exit(3)
    });
    with_basics(plugin).serve()
}

/// Waits until the host has taken out of the stderr pipe everything written to it, and a moment
/// more for it to keep what it read.
fn wait_until_stderr_is_read() {
    for _ in 0..10_000 {
        let mut unread: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int, the bytes a pipe holds, to the live local given.
        let asked = unsafe { libc::ioctl(2, libc::FIONREAD, &mut unread) };
        if asked != 0 || unread == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
}
