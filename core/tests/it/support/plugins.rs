//! A sandbox for running the built `agent-env` against manifests in temporary folders: its own HOME,
//! XDG folders, plugins directory and PATH (nothing of the real machine's).
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub use super::{fixture, AGENT_ENV};

pub struct Sandbox {
    pub root: tempfile::TempDir,
    /// `PATH` entries, in order.
    pub path: Vec<PathBuf>,
    pub env: Vec<(String, String)>,
}

/// The `[plugin]` table of a manifest.
pub fn plugin_table(name: &str, version: &str, exec: &str) -> String {
    format!(
        "[plugin]\nname = \"{name}\"\nversion = \"{version}\"\nexec = {exec}\nprotocol = [1, 1]\n"
    )
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let root = tempfile::tempdir().expect("tempdir");
        for d in ["home", "plugins", "bin", "work"] {
            std::fs::create_dir_all(root.path().join(d)).expect("mkdir");
        }
        let bin = root.path().join("bin");
        Sandbox {
            root,
            path: vec![bin],
            env: Vec::new(),
        }
    }

    pub fn dir(&self) -> &Path {
        self.root.path()
    }

    pub fn plugins_dir(&self) -> PathBuf {
        self.dir().join("plugins")
    }

    pub fn bin(&self) -> PathBuf {
        self.dir().join("bin")
    }

    /// Writes `<plugins>/<folder>/agent-env-plugin.toml`; returns its path.
    pub fn plugin_dir_manifest(&self, folder: &str, text: &str) -> PathBuf {
        let dir = self.plugins_dir().join(folder);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let path = dir.join("agent-env-plugin.toml");
        std::fs::write(&path, text).expect("write");
        path
    }

    /// Writes `<bin>/agent-env-plugin-<name>.toml`; returns its path.
    pub fn path_manifest(&self, name: &str, text: &str) -> PathBuf {
        let path = self.bin().join(format!("agent-env-plugin-{name}.toml"));
        std::fs::write(&path, text).expect("write");
        path
    }

    /// Writes an executable shell script; returns its path.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.dir().join("scripts").join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).expect("write");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        path
    }

    /// A shell-script plugin (shell built-ins only: the sandbox's PATH has no tools) that answers `initialize` with `result` (JSON text) and every later
    /// request with `null`, and exits on end of input.
    pub fn answering_plugin(&self, name: &str, result: &str) -> PathBuf {
        let body = format!(
            r#"answered=0
while IFS= read -r line; do
  case "$line" in *'"id":'*) ;; *) continue ;; esac
  rest=${{line#*\"id\":}}
  id=${{rest%%[!0-9]*}}
  [ -z "$id" ] && continue
  if [ "$answered" = 0 ]; then
    printf '{{"jsonrpc":"2.0","id":%s,"result":%s}}\n' "$id" '{result}'
    answered=1
  else
    printf '{{"jsonrpc":"2.0","id":%s,"result":null}}\n' "$id"
  fi
done
"#
        );
        self.script(name, &body)
    }

    pub fn set(&mut self, key: &str, value: &str) -> &mut Self {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(AGENT_ENV);
        cmd.args(args)
            .current_dir(self.dir().join("work"))
            .env_clear();
        super::IsolatedDirs {
            home: self.dir().join("home"),
            xdg_data: self.dir().join("home/.local/share"),
            xdg_state: self.dir().join("home/.local/state"),
            xdg_config: self.dir().join("home/.config"),
            plugins: self.plugins_dir(),
        }
        .apply(&mut cmd)
        .env("PATH", std::env::join_paths(&self.path).expect("join PATH"));
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run agent-env")
    }

    /// Runs, expects `code`, and returns stdout.
    pub fn stdout(&self, args: &[&str], code: i32) -> String {
        let out = self.run(args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            out.status.code(),
            Some(code),
            "agent-env {args:?}\nstdout:\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// Runs, expects `code`, and parses stdout as exactly one JSON document.
    pub fn json(&self, args: &[&str], code: i32) -> Value {
        let text = self.stdout(args, code);
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("not one JSON document ({e}):\n{text}"))
    }
}

/// The contribution `name` of package `package` in a report.
pub fn contribution<'a>(report: &'a Value, package: &str, name: &str) -> &'a Value {
    let dist = package_row(report, package);
    dist["contributions"]
        .as_array()
        .expect("contributions")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no contribution {name} of {package} in {dist:#}"))
}

pub fn package_row<'a>(report: &'a Value, package: &str) -> &'a Value {
    report["plugins"]
        .as_array()
        .expect("plugins")
        .iter()
        .find(|d| d["name"] == package)
        .unwrap_or_else(|| panic!("no package {package} in {report:#}"))
}

/// (status, code, reason) of a contribution.
pub fn outcome(report: &Value, package: &str, name: &str) -> (String, String, String) {
    let c = contribution(report, package, name);
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    (s(&c["status"]), s(&c["code"]), s(&c["reason"]))
}

/// A manifest starting fixture `fixture` as `package`, with `provides` appended.
pub fn fixture_manifest(package: &str, fixture_name: &str, provides: &str) -> String {
    let exe = fixture(fixture_name);
    format!(
        "{}{provides}",
        plugin_table(package, "0.1.0", &format!("[\"{}\"]", exe.display()))
    )
}
