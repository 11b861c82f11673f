//! Helpers for the black-box tests of `agent-env run`: a temp HOME, state root and sandbox root, the
//! built binary, and reads of the @local document store.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

pub use super::{fixture, AGENT_ENV};
pub use agent_env_test_support::Ran;
use agent_env_test_support::{documents, forget_inherited};

pub struct Sandboxed {
    pub dir: tempfile::TempDir,
}

impl Sandboxed {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        Sandboxed { dir }
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn state(&self) -> PathBuf {
        self.dir.path().join("state").join("agent-env")
    }

    pub fn sandboxes(&self) -> PathBuf {
        self.dir.path().join("sandboxes")
    }

    pub fn plugins(&self) -> PathBuf {
        self.dir.path().join("plugins")
    }

    pub fn local_db(&self) -> PathBuf {
        self.state().join("document_store").join("local.db")
    }

    /// The binary with HOME, XDG_* and AGENT_ENV_* pointed into the temp dir, run in `cwd`.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(AGENT_ENV);
        forget_inherited(&mut cmd);
        cmd.args(args).current_dir(self.home());
        super::IsolatedDirs {
            home: self.home(),
            xdg_data: self.dir.path().join("data"),
            xdg_state: self.dir.path().join("state"),
            xdg_config: self.dir.path().join("config"),
            plugins: self.plugins(),
        }
        .apply(&mut cmd)
        .env("AGENT_ENV_LOCAL_SANDBOX_DIR", self.sandboxes())
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null());
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Ran {
        Ran::from(self.command(args).output().expect("run agent-env"))
    }

    /// Every document of a collection in local.db.
    pub fn docs(&self, collection: &str) -> Vec<Value> {
        documents(&self.local_db(), collection)
    }

    /// Copies the repository's `hello` bundle to `<home>/<name>`.
    pub fn copy_hello(&self, name: &str) -> PathBuf {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/hello");
        let dest = self.home().join(name);
        copy_dir(&src, &dest);
        dest
    }

    /// Writes a file below home, making folders.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.home().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The bundle `./slow`: one task whose criterion waits until the file `release` exists, so a run
    /// of it goes on until the test lets it end.
    pub fn write_waiting_bundle(&self, release: &Path) {
        self.write(
            "slow/tasks/slow.json",
            &format!(
                r#"[{{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}},
                    {{"id": "wait", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "w",
                      "criteria": [{{"type": "bash_cmd_succeeds",
                                     "command": "while [ ! -e '{}' ]; do sleep 0.02; done"}}]}}]"#,
                release.display()
            ),
        );
    }

    /// Entries left in the sandbox root (none once every sandbox is torn down).
    pub fn sandboxes_left(&self) -> Vec<String> {
        match std::fs::read_dir(self.sandboxes()) {
            Ok(r) => r
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        }
    }
}

pub fn copy_dir(src: &Path, dest: &Path) {
    std::fs::create_dir_all(dest).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dest.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), to).unwrap();
        }
    }
}

/// `<prefix><8 chars of [a-z0-9]>` from the first `prefix` in `text`, when 8 such chars follow it.
pub fn has_suffix_id(text: &str, prefix: &str) -> Option<String> {
    let start = text.find(prefix)? + prefix.len();
    let id: String = text[start..].chars().take(8).collect();
    (id.len() == 8
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
    .then(|| format!("{prefix}{id}"))
}

/// Replaces every `<digits>.<digit>s` with `N.Ns`, so durations can be compared.
pub fn mask_durations(text: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() {
            let mut j = i;
            while j < chars.len() && chars[j].is_ascii_digit() {
                j += 1;
            }
            if j + 2 < chars.len()
                && chars[j] == '.'
                && chars[j + 1].is_ascii_digit()
                && chars[j + 2] == 's'
            {
                out.push_str("N.Ns");
                i = j + 3;
                continue;
            }
            out.extend(&chars[i..j]);
            i = j;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

impl Sandboxed {
    /// Installs a plugin manifest as `<plugins dir>/<folder>/agent-env-plugin.toml`.
    pub fn install_manifest(&self, folder: &str, text: &str) -> PathBuf {
        let dir = self.plugins().join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("agent-env-plugin.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Installs the working fixture plugin (`fixture-works`, as `agentenv-fixture-works` 0.3.0) in
    /// `<plugins dir>/works`, providing what `provides` declares (the manifest's `[provides.*]`
    /// tables, as TOML).
    pub fn install_fixture_works(&self, provides: &str) -> PathBuf {
        self.install_manifest(
            "works",
            &format!(
                "[plugin]\nname = \"agentenv-fixture-works\"\nversion = \"0.3.0\"\nexec = [\"{}\"]\nprotocol = [1, 1]\n\n{provides}",
                fixture("fixture-works").display()
            ),
        )
    }

    /// Writes an executable script below the temp dir.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.path().join("scripts").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }
}

/// Whether a process is running (a zombie waiting for its reaper is not).
pub fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}
