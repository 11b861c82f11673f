//! A sandbox for black-box tests of plugin commands and root options: the built `agent-env` with its
//! own HOME, XDG folders, plugins directory and PATH, and the `cli_tools` fixture plugin.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub use super::{fixture, AGENT_ENV};

pub struct Sandbox {
    pub root: tempfile::TempDir,
    pub env: Vec<(String, String)>,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let root = tempfile::tempdir().expect("tempdir");
        for d in ["home", "plugins", "bin", "data/tenants", "state", "work"] {
            std::fs::create_dir_all(root.path().join(d)).expect("mkdir");
        }
        Sandbox {
            root,
            env: vec![("AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT".into(), "1".into())],
        }
    }

    pub fn dir(&self) -> &Path {
        self.root.path()
    }

    /// The fixture's data folder (`tenants/<name>.toml`, `offline.toml`).
    pub fn data(&self) -> PathBuf {
        self.dir().join("data")
    }

    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.dir().join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
        path
    }

    /// A plugin folder `<plugins>/<package>/agent-env-plugin.toml` with `exec` (a TOML array) and the
    /// `[provides…]` tables in `provides`.
    pub fn plugin(&self, package: &str, exec: &str, provides: &str) -> PathBuf {
        self.write(
            &format!("plugins/{package}/agent-env-plugin.toml"),
            &format!(
                "[plugin]\nname = \"{package}\"\nversion = \"0.1.0\"\nexec = {exec}\nprotocol = [1, 1]\n{provides}"
            ),
        )
    }

    /// A plugin run by the `cli_tools` fixture.
    pub fn tools(&self, package: &str, provides: &str) -> PathBuf {
        let exec = format!(
            "[\"{}\", \"{}\"]",
            fixture("cli_tools").display(),
            self.data().display()
        );
        self.plugin(package, &exec, provides)
    }

    pub fn set(&mut self, key: &str, value: &str) -> &mut Self {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(AGENT_ENV);
        cmd.args(args)
            .current_dir(self.dir().join("work"))
            .env_clear();
        super::IsolatedDirs {
            home: self.dir().join("home"),
            xdg_data: self.dir().join("xdg-data"),
            xdg_state: self.dir().join("state"),
            xdg_config: self.dir().join("xdg-config"),
            plugins: self.dir().join("plugins"),
        }
        .apply(&mut cmd)
        .env("PATH", self.dir().join("bin"))
        .stdin(Stdio::null());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run agent-env")
    }

    /// Runs with `input` on stdin.
    pub fn run_with_input(&self, args: &[&str], input: &str) -> Output {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn agent-env");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
        child.wait_with_output().expect("wait")
    }

    /// The report of `plugin <what> --json`.
    pub fn report(&self, what: &str) -> Value {
        let out = self.run(&["plugin", what, "--json"]);
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("plugin {what} --json: {e}: {}", text(&out)))
    }
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Everything the run printed, for assertion messages.
pub fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        stdout(out),
        stderr(out)
    )
}

/// The contribution `name` in `group` (e.g. `cli_plugins`) of `package` in a report.
pub fn contribution<'a>(report: &'a Value, package: &str, group: &str, name: &str) -> &'a Value {
    let plugins = report
        .get("plugins")
        .or_else(|| report.get("report").and_then(|r| r.get("plugins")))
        .and_then(Value::as_array)
        .expect("plugins");
    let group = format!("agent_env.{group}");
    plugins
        .iter()
        .filter(|p| p["name"] == package)
        .flat_map(|p| p["contributions"].as_array().into_iter().flatten())
        .find(|c| c["group"] == group.as_str() && c["name"] == name)
        .unwrap_or_else(|| panic!("no {group} {name} of {package} in {report}"))
}

/// `(status, code, reason)` of a contribution.
pub fn outcome(report: &Value, package: &str, group: &str, name: &str) -> (String, String, String) {
    let c = contribution(report, package, group, name);
    let s = |k: &str| c[k].as_str().unwrap_or("").to_string();
    (s("status"), s("code"), s("reason"))
}
