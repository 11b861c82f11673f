//! A temp world for one test: HOME, XDG folders and the plugins directory in a temp folder, and the
//! `agent-env` binary run in it.

use std::path::{Path, PathBuf};
use std::process::Command;

use agent_env_test_support::{forget_inherited, workspace_binary, IsolatedDirs, Ran};

pub struct World {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub dirs: IsolatedDirs,
}

impl World {
    pub fn new() -> World {
        let tmp = tempfile::tempdir().expect("a temp folder");
        let root = tmp.path().to_path_buf();
        let dirs = IsolatedDirs {
            home: root.join("home"),
            xdg_data: root.join("data"),
            xdg_state: root.join("state"),
            xdg_config: root.join("config"),
            plugins: root.join("plugins"),
        };
        for d in [
            &dirs.home,
            &dirs.xdg_data,
            &dirs.xdg_state,
            &dirs.xdg_config,
            &dirs.plugins,
        ] {
            std::fs::create_dir_all(d).expect("a world folder");
        }
        World {
            _tmp: tmp,
            root,
            dirs,
        }
    }

    /// A command in this world: isolated folders, working directory `home`, `PATH` kept for `sh`.
    pub fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        forget_inherited(&mut cmd);
        self.dirs.apply(&mut cmd);
        cmd.current_dir(&self.dirs.home);
        cmd
    }

    /// Writes `.agentenv/config.toml` in the home folder (the working directory of every command).
    pub fn config(&self, text: &str) {
        let dir = self.dirs.home.join(".agentenv");
        std::fs::create_dir_all(&dir).expect("config folder");
        std::fs::write(dir.join("config.toml"), text).expect("config written");
    }

    /// Installs a plugin by its manifest: `<plugins>/<folder>/agent-env-plugin.toml`.
    pub fn install_manifest(&self, folder: &str, text: &str) {
        let dir = self.dirs.plugins.join(folder);
        std::fs::create_dir_all(&dir).expect("plugin folder");
        std::fs::write(dir.join("agent-env-plugin.toml"), text).expect("manifest written");
    }

    /// `agent-env ARGS` in this world.
    pub fn agent_env(&self, args: &[&str]) -> Ran {
        let bin = workspace_binary("agent-env", "agent-env");
        let out = self
            .command(&bin)
            .args(args)
            .output()
            .expect("agent-env runs");
        Ran::from(out)
    }

    /// `agent-env run hello`, which must pass.
    pub fn run_hello(&self) {
        let ran = self.agent_env(&["run", "hello"]);
        assert_eq!(ran.code, 0, "{}", ran.both());
    }

    /// `<state>/agent-env`.
    pub fn state_root(&self) -> PathBuf {
        self.dirs.xdg_state.join("agent-env")
    }
}
