//! The `agent-env` binary against the installed plugin: discovery, the report, the bundle list, the store
//! selected in a temp `.agentenv/config.toml`, and `agent-env openciv3 …`. HOME, XDG_* and
//! AGENT_ENV_PLUGIN_DIR point into a temp folder.
//!
//! The `agent-env` binary is the workspace's, built on first use into this test's `target/<profile>`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use agent_env_test_support::{forget_inherited, workspace_binary, IsolatedDirs};
use serde_json::Value;

use crate::support::pipe::BINARY as PLUGIN;

/// A temp home with the plugin installed and the CAS store selected for `[stores.object]`.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let installed = Command::new(PLUGIN)
            .args(["install", "--plugins-dir"])
            .arg(dir.path().join("plugins"))
            .output()
            .unwrap();
        assert!(
            installed.status.success(),
            "{}",
            String::from_utf8_lossy(&installed.stderr)
        );
        let project = dir.path().join("project").join(".agentenv");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        let config = format!(
            "[stores.object]\nimpl = \"agentenv-openciv3:ContentAddressedObjectStore\"\nconfig = {{ root = \"{}\", bucket = \"openciv3\" }}\n",
            dir.path().join("cas").display()
        );
        std::fs::write(project.join("config.toml"), config).unwrap();
        Sandbox { dir }
    }

    fn cas_root(&self) -> PathBuf {
        self.dir.path().join("cas")
    }

    fn agent_env(&self, args: &[&str]) -> Output {
        self.agent_env_with(args, None)
    }

    /// As `agent_env`, with `PATH` replaced when given (e.g. one without docker).
    fn agent_env_with(&self, args: &[&str], path: Option<&Path>) -> Output {
        let root = self.dir.path();
        let mut command = Command::new(workspace_binary("agent-env", "agent-env"));
        if let Some(path) = path {
            command.env("PATH", path);
        }
        forget_inherited(&mut command);
        IsolatedDirs {
            home: root.join("home"),
            xdg_data: root.join("data"),
            xdg_state: root.join("state"),
            xdg_config: root.join("config"),
            plugins: root.join("plugins"),
        }
        .apply(&mut command)
        .args(args)
        .current_dir(root.join("project"))
        .env("AGENT_ENV_LOCAL_SANDBOX_DIR", root.join("sandboxes"))
        .output()
        .unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

#[test]
fn plugin_list_shows_the_task_steps_the_command_and_the_bundle_ok() {
    let sandbox = Sandbox::new();
    let listed = sandbox.agent_env(&["plugin", "list"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let row = text(&listed.stdout)
        .lines()
        .find(|l| l.starts_with("agentenv-openciv3"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .expect("a row for the plugin");
    assert_eq!(
        row,
        "agentenv-openciv3 0.1.0 3 task steps, 1 CLI command, 1 bundle, 1 store ok"
    );

    let json = sandbox.agent_env(&["plugin", "list", "--json"]);
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    let plugin = report["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "agentenv-openciv3")
        .expect("the plugin in the report");
    let mut contributions: Vec<(String, String, String)> = plugin["contributions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let field = |k: &str| c[k].as_str().unwrap_or("").to_string();
            (field("group"), field("name"), field("status"))
        })
        .collect();
    contributions.sort();
    let expected = [
        ("agent_env.bundles", "openciv3"),
        ("agent_env.cli_plugins", "openciv3"),
        ("agent_env.task_steps", "openciv3_await_game"),
        ("agent_env.task_steps", "openciv3_match"),
        ("agent_env.task_steps", "save_env_recording"),
    ];
    let expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(g, n)| (g.to_string(), n.to_string(), "active".to_string()))
        .collect();
    assert_eq!(contributions, expected);

    let check = sandbox.agent_env(&["plugin", "check"]);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}{}",
        text(&check.stdout),
        text(&check.stderr)
    );
}

#[test]
fn the_bundle_is_listed_and_names_the_core_steps_it_still_needs() {
    let sandbox = Sandbox::new();
    let listed = sandbox.agent_env(&["run"]);
    let stdout = text(&listed.stdout);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("openciv3"))
        .expect("the bundle is listed");
    assert!(
        row.contains("agentenv-openciv3 0.1.0") && row.contains("2 tasks"),
        "{row}"
    );
    // The plugin's own step types resolve; what is missing is the core's, and it is said precisely.
    let dry = sandbox.agent_env(&["run", "openciv3", "--dry-run"]);
    let stderr = text(&dry.stderr);
    assert!(
        stderr.contains("the step type 'deploy_env' is built into the Python agent-env"),
        "{stderr}"
    );
    for own in [
        "openciv3_match",
        "openciv3_await_game",
        "save_env_recording",
    ] {
        assert!(!stderr.contains(own), "{own} did not resolve: {stderr}");
    }
}

#[test]
fn store_check_object_passes_against_the_cas_store_selected_in_config() {
    let sandbox = Sandbox::new();
    let checked = sandbox.agent_env(&["store", "check", "object", "--json"]);
    assert!(
        checked.status.success(),
        "{}{}",
        text(&checked.stdout),
        text(&checked.stderr)
    );
    let report: Value = serde_json::from_slice(&checked.stdout).unwrap();
    let cases = report["cases"].as_array().expect("the kit's cases");
    let passed = cases.iter().filter(|c| c["outcome"] == "passed").count();
    assert_eq!(passed, 27, "{report}");
    assert_eq!(report["passed"], true);
    assert_eq!(
        report["impl"],
        "agentenv-openciv3:ContentAddressedObjectStore"
    );
    assert!(
        sandbox.cas_root().join("index.sqlite").is_file(),
        "the kit wrote through the CAS store"
    );
}

#[test]
fn agent_env_openciv3_setup_stores_a_tarball_and_prints_its_cas_url() {
    let sandbox = Sandbox::new();
    let tarball = sandbox.dir.path().join("image.tar.gz");
    std::fs::write(&tarball, [0x1f, 0x8b, 1, 2, 3]).unwrap();
    let setup = sandbox.agent_env(&["openciv3", "setup", "--tarball", tarball.to_str().unwrap()]);
    assert!(setup.status.success(), "{}", text(&setup.stderr));
    assert!(text(&setup.stdout)
        .lines()
        .any(|l| l == "cas://openciv3/artifacts/docker_image/mcp-server-openciv3/1/mcp-server-openciv3-v1.tar.gz"));
    // The next step it names runs, and gives the tarball back.
    let stdout = text(&setup.stdout);
    let next: Vec<&str> = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Next: agent-env "))
        .unwrap_or_else(|| panic!("no next step: {stdout}"))
        .split_whitespace()
        .collect();
    let fetched = sandbox.agent_env(&next);
    assert!(fetched.status.success(), "{}", text(&fetched.stderr));
    let copy = sandbox
        .dir
        .path()
        .join("project/mcp-server-openciv3-v1.tar.gz");
    assert_eq!(std::fs::read(copy).unwrap(), [0x1f, 0x8b, 1, 2, 3]);
    // The bundle's run it says is refused is refused, before any step, naming a missing step type.
    assert!(
        stdout.contains("agent-env run openciv3 is refused"),
        "{stdout}"
    );
    let run = sandbox.agent_env(&["run", "openciv3"]);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        text(&run.stderr).contains("step 'deploy': the step type 'deploy_env' is built into the Python agent-env, and this agent-env does not have it yet"),
        "{}",
        text(&run.stderr)
    );
    let no_docker = sandbox.dir.path().join("no-docker");
    std::fs::create_dir_all(&no_docker).unwrap();
    let no_buildx = sandbox.agent_env_with(&["openciv3", "setup"], Some(&no_docker));
    assert_eq!(no_buildx.status.code(), Some(1));
    assert!(
        text(&no_buildx.stderr).contains("sudo apt-get install docker-buildx"),
        "{}",
        text(&no_buildx.stderr)
    );
    // Nothing was built or stored: the store still holds only the first tarball.
    let library = agentenv_openciv3::cas::ContentAddressedObjectStore::new(
        agentenv_openciv3::cas::CasConfig::new(sandbox.cas_root().to_str().unwrap(), "openciv3")
            .unwrap(),
    );
    assert_eq!(library.list("").unwrap().len(), 1);
}
