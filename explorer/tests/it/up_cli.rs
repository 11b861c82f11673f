//! `agent-env up`: the CLI hands over to the explorer beside it; the port comes from the flag, the
//! config or 8234; a taken port is an error naming it and the flag.

use std::net::TcpListener;

use agent_env_test_support::workspace_binary;

use crate::support::{Explorer, World};

#[test]
fn agent_env_up_serves_and_stops_on_ctrl_c() {
    let world = World::new();
    let agent_env = workspace_binary("agent-env", "agent-env");
    // `--no-bootstrap`, from the Python agent-env's command lines, asks for what `up` does anyway.
    let server =
        Explorer::start_program(&world, &agent_env, &["up", "--port", "0", "--no-bootstrap"]);
    let health = server.get("/api/v1/health").expect(200).json();
    assert_eq!(health["status"], "ok");
    let home = server.get("/");
    home.expect(200);
    assert!(home
        .header("content-type")
        .unwrap()
        .starts_with("text/html"));
    let stopped = server.stop();
    assert_eq!(stopped.code, Some(0), "{stopped:?}");
    assert!(stopped.stdout.contains("Stopped."), "{stopped:?}");
}

#[test]
fn the_config_port_is_used_and_a_taken_port_is_named_with_the_flag() {
    let world = World::new();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    world.config(&format!("[explorer]\nport = {port}\n"));
    let ran = world.agent_env(&["up"]);
    assert_eq!(ran.code, 1, "{}", ran.both());
    assert!(
        ran.stderr
            .contains(&format!("port {port} on 127.0.0.1 is in use"))
            && ran.stderr.contains("--port"),
        "{}",
        ran.both()
    );
    drop(taken);
    // The flag wins over the config.
    let server = Explorer::start_program(
        &world,
        &workspace_binary("agent-env", "agent-env"),
        &["up", "--port", "0"],
    );
    assert_ne!(server.port, port);
}

/// The explorer runs tasks with its own copy of agent-env: started by an agent-env of another build
/// (one rebuilt without it), it refuses, saying how to build both.
#[test]
fn an_explorer_started_by_another_build_refuses_to_serve() {
    let world = World::new();
    let explorer = workspace_binary("agent-env-explorer", "agent-env-explorer");
    let out = world
        .command(&explorer)
        .args([
            "--port",
            "0",
            "--started-by-build=0.0.1 (000000000000 2020-01-01)",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("than the agent-env that started it (0.0.1 (000000000000 2020-01-01))")
            && stderr.contains("cargo build --release -p agent-env -p agent-env-explorer"),
        "{stderr}"
    );
    let version = world.command(&explorer).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("agent-env up {}", agent_env::BUILD)
    );
}

/// `--open` where no browser can be opened (the opener fails, as xdg-open does with no desktop):
/// the explorer says so and serves on.
#[test]
fn open_says_when_no_browser_could_be_opened() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::fs::PermissionsExt;
    let world = World::new();
    let fake = world.state_root().join("fake-bin");
    std::fs::create_dir_all(&fake).unwrap();
    let opener = fake.join("xdg-open");
    std::fs::write(&opener, "#!/bin/sh\nexit 3\n").unwrap();
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        fake.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let explorer = workspace_binary("agent-env-explorer", "agent-env-explorer");
    let mut child = world
        .command(&explorer)
        .args(["--port", "0", "--open"])
        .env("PATH", path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let said = stderr
        .lines()
        .map_while(Result::ok)
        .find(|line| line.contains("can't open a browser"));
    let _ = child.kill();
    let _ = child.wait();
    let said = said.expect("a line saying no browser could be opened");
    assert!(
        said.contains("xdg-open ended with exit status: 3"),
        "{said}"
    );
}

/// `XDG_STATE_HOME` and `XDG_DATA_HOME` set to relative paths are ignored, as the XDG spec says:
/// the explorer (which keeps runs in the one and finds plugins through the other) says so on stderr
/// as it starts, each once, and the config answer carries them among its warnings.
#[test]
fn relative_xdg_folders_are_warned_of_at_start_and_in_the_config_answer() {
    let world = World::new();
    let mut command = world.command(std::path::Path::new(crate::support::server::EXPLORER));
    command
        .args(["--port", "0"])
        .env("XDG_STATE_HOME", "relstate")
        .env("XDG_DATA_HOME", "reldata")
        // Else the plugins directory is not looked up under XDG_DATA_HOME.
        .env_remove("AGENT_ENV_PLUGIN_DIR");
    let server = Explorer::start_command(command);
    let home = world.dirs.home.display().to_string();
    let said = [
        format!("XDG_STATE_HOME is 'relstate', a relative path, which the XDG spec says to ignore: using {home}/.local/state; set it to an absolute path"),
        format!("XDG_DATA_HOME is 'reldata', a relative path, which the XDG spec says to ignore: using {home}/.local/share; set it to an absolute path"),
    ];
    let answer = server.get("/api/v1/config").expect(200).json();
    let warnings = answer["warnings"].as_array().expect("warnings");
    for warning in &said {
        assert!(warnings.contains(&serde_json::json!(warning)), "{answer:#}");
        assert!(
            answer["text"].as_str().unwrap().contains(warning.as_str()),
            "{answer:#}"
        );
    }
    let stopped = server.stop();
    for warning in &said {
        assert_eq!(
            stopped
                .stderr
                .matches(&format!("warning: {warning}"))
                .count(),
            1,
            "{stopped:?}"
        );
    }
}

/// A port below 1024, which a user without privileges may not take: the error says so and which
/// ports to use. (Run as root, the explorer is started as `nobody`, so the system refuses it.)
#[test]
fn a_privileged_port_refused_says_to_use_one_of_1024_or_higher() {
    use std::os::unix::process::CommandExt;
    let world = World::new();
    let explorer = std::path::Path::new(crate::support::server::EXPLORER);
    let mut command = world.command(explorer);
    // `/`: where `nobody` may stand (the world's folders are its owner's alone).
    command.args(["--port", "80"]).current_dir("/");
    // SAFETY: geteuid only reads this process's effective user id.
    if unsafe { libc::geteuid() } == 0 {
        // SAFETY: between fork and exec, only async-signal-safe calls that drop to `nobody`.
        unsafe {
            command.pre_exec(|| {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(65534) != 0
                    || libc::setuid(65534) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    } else {
        let first_free = std::fs::read_to_string("/proc/sys/net/ipv4/ip_unprivileged_port_start")
            .ok()
            .and_then(|t| t.trim().parse::<u16>().ok())
            .unwrap_or(1024);
        if first_free <= 80 {
            eprintln!("skipped: this system lets any user listen on port 80");
            return;
        }
    }
    let out = command.output().expect("the explorer runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Error: can't listen on 127.0.0.1:80: Permission denied (os error 13); a port below 1024 needs privileges (root, or the CAP_NET_BIND_SERVICE capability): use a --port of 1024 or higher (or 0 for any free one)"),
        "{stderr}"
    );
}
