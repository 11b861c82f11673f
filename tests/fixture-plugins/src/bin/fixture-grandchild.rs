//! Starts a grandchild (`sleep 300`) that inherits the protocol stdout and keeps it open, then
//! works, and exits on `exit`; with `--exit-at-start` it exits at once instead. Either way the
//! host must see the exit by wait status: end of file on stdout never comes while the grandchild
//! lives. With `--setsid` the grandchild calls `setsid` first, leaving the plugin's process group
//! and session (so a kill of the group misses it).

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use agent_env_fixture_plugins::with_basics;
use agent_env_plugin_sdk::{json, Plugin};

fn main() {
    let mut command = Command::new("sleep");
    command
        .arg("300")
        .stdin(Stdio::null())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    if std::env::args().any(|a| a == "--setsid") {
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let grandchild = command.spawn();
    let grandchild_pid = match grandchild {
        Ok(child) => child.id(),
        Err(e) => {
            eprintln!("fixture-grandchild: cannot start sleep: {e}");
            std::process::exit(1);
        }
    };
    eprintln!("fixture-grandchild: grandchild {grandchild_pid} holds stdout");
    if std::env::args().any(|a| a == "--exit-at-start") {
        eprintln!("fixture-grandchild: exiting at start");
        std::process::exit(4);
    }
    let plugin = Plugin::new("agentenv-fixture-grandchild", "0.1.0")
        .method("grandchild_pid", move |_ctx, _| {
            Ok(json!({ "pid": grandchild_pid }))
        })
        .method("exit", |_ctx, params| {
            eprintln!("fixture-grandchild: exiting in the middle of 'exit'");
            std::process::exit(params["code"].as_i64().unwrap_or(1) as i32)
        });
    with_basics(plugin).serve()
}
