//! A temp world for one test: HOME, XDG_* and AGENT_ENV_* in a temp folder, the three example plugins
//! installed (OpenCiv3 and Go in the plugins directory, the Python grader found on `PATH` from its venv),
//! plus the Rust fixture plugins, and `agent-env` run in a project folder there.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use agent_env_test_support::{documents, forget_inherited, IsolatedDirs};
use serde_json::Value;

use crate::setup::{built, Built};

pub use agent_env_test_support::Ran;

pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub built: &'static Built,
}

impl Sandbox {
    /// A temp world with every plugin installed.
    pub fn new() -> Sandbox {
        let built = built();
        let dir = tempfile::tempdir().expect("temp dir");
        let sandbox = Sandbox { dir, built };
        for sub in ["home", "project", "plugins", "state", "data", "config"] {
            std::fs::create_dir_all(sandbox.path(sub)).expect("temp folder");
        }
        sandbox.install_openciv3();
        sandbox.install_go();
        sandbox.install_fixture(
            "agentenv-fixture-works",
            &built.fixture_works,
            "0.3.0",
            &[
                ("echo_step", "EchoStep"),
                ("store_roundtrip", "StoreRoundTrip"),
            ],
        );
        sandbox
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn plugins_dir(&self) -> PathBuf {
        self.path("plugins")
    }

    pub fn project(&self) -> PathBuf {
        self.path("project")
    }

    /// `<XDG_STATE_HOME>/agent-env`.
    pub fn state_root(&self) -> PathBuf {
        self.path("state").join("agent-env")
    }

    pub fn local_db(&self) -> PathBuf {
        self.state_root().join("document_store").join("local.db")
    }

    fn install_openciv3(&self) {
        let out = Command::new(&self.built.openciv3)
            .args(["install", "--plugins-dir"])
            .arg(self.plugins_dir())
            .env("HOME", self.path("home"))
            .output()
            .expect("run agentenv-openciv3 install");
        assert!(
            out.status.success(),
            "agentenv-openciv3 install failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn install_go(&self) {
        let dir = self.plugins_dir().join("agentenv-go-words");
        std::fs::create_dir_all(&dir).expect("go plugin folder");
        for file in ["agentenv-go-words", "agent-env-plugin.toml"] {
            std::fs::copy(self.built.go_plugin.join(file), dir.join(file)).expect("copy go plugin");
        }
    }

    /// Installs a Rust fixture plugin by a manifest naming its binary by absolute path.
    pub fn install_fixture(
        &self,
        package: &str,
        exe: &Path,
        version: &str,
        steps: &[(&str, &str)],
    ) {
        self.install_steps_plugin(package, &[exe], version, steps);
    }

    /// Installs a plugin of task steps in any language by a manifest whose `exec` is `exec`, each
    /// word an absolute path (an interpreter, then its script).
    pub fn install_steps_plugin(
        &self,
        package: &str,
        exec: &[&Path],
        version: &str,
        steps: &[(&str, &str)],
    ) {
        let exec = exec
            .iter()
            .map(|word| format!("\"{}\"", word.display()))
            .collect::<Vec<_>>()
            .join(", ");
        let mut manifest = format!(
            "[plugin]\nname = \"{package}\"\nversion = \"{version}\"\nexec = [{exec}]\nprotocol = [1, 1]\n\n[provides.task_steps]\n"
        );
        for (name, class) in steps {
            manifest.push_str(&format!("{name} = \"{class}\"\n"));
        }
        let dir = self.plugins_dir().join(package);
        std::fs::create_dir_all(&dir).expect("fixture folder");
        std::fs::write(dir.join("agent-env-plugin.toml"), manifest).expect("fixture manifest");
    }

    /// Writes a file below the temp folder, making folders.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("folder");
        }
        std::fs::write(&path, text).expect("write file");
        path
    }

    /// `PATH` for agent-env: the venv's `bin` first (discovery finds the grader's manifest from it),
    /// then the system's tool folders (for `/bin/sh` and the like), nothing of the user's.
    pub fn search_path(&self) -> String {
        format!(
            "{}:/usr/local/bin:/usr/bin:/bin",
            self.built.venv.join("bin").display()
        )
    }

    /// `agent-env ARGS` in the project folder, with everything pointed into the temp folder.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.built.agent_env);
        forget_inherited(&mut command);
        IsolatedDirs {
            home: self.path("home"),
            xdg_data: self.path("data"),
            xdg_state: self.path("state"),
            xdg_config: self.path("config"),
            plugins: self.plugins_dir(),
        }
        .apply(&mut command)
        .args(args)
        .current_dir(self.project())
        .env("PATH", self.search_path())
        .env("XDG_CACHE_HOME", self.path("cache"))
        .env("AGENT_ENV_LOCAL_SANDBOX_DIR", self.path("sandboxes"))
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null());
        command
    }

    pub fn run(&self, args: &[&str]) -> Ran {
        Ran::from(self.command(args).output().expect("run agent-env"))
    }

    /// `agent-env ARGS --json`-style output parsed, with the run for messages.
    pub fn run_json(&self, args: &[&str]) -> (Ran, Value) {
        let ran = self.run(args);
        let value = serde_json::from_str(&ran.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", ran.both()));
        (ran, value)
    }

    /// Writes `<project>/.agentenv/config.toml`.
    pub fn config(&self, toml: &str) {
        self.write("project/.agentenv/config.toml", toml);
    }

    /// Every document of a collection of the local document store.
    pub fn docs(&self, collection: &str) -> Vec<Value> {
        documents(&self.local_db(), collection)
    }

    /// Entries left in the local sandbox root (none once every sandbox is torn down).
    pub fn sandboxes_left(&self) -> Vec<String> {
        std::fs::read_dir(self.path("sandboxes"))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new()
    }
}
