//! What the core tests share: the built `agent-env` (this crate's binary, which only its own tests
//! can name), the fixture plugins, and one sandbox per area, each on `agent-env-test-support`:
//!
//! - [`cli`]: plugin commands and root options, with the `cli_tools` fixture;
//! - [`plugins`]: discovery, loading and the plugin report, manifests in temp folders;
//! - [`run`]: `agent-env run`, its state root, sandbox root and local document store;
//! - [`shell_store`]: a store plugin written in `sh`, whose answers a test writes, for a store that
//!   hangs, refuses or talks out of turn.

pub mod cli;
pub mod plugins;
pub mod run;
pub mod shell_store;

pub use agent_env_test_support::{fixture, IsolatedDirs};

/// The `agent-env` binary under test.
pub const AGENT_ENV: &str = env!("CARGO_BIN_EXE_agent-env");

/// Installs the fixture plugin `exe` in `<plugins>/<folder>` as `package` at `version`, providing the
/// store `class` of `kind`.
pub fn install_store_fixture(
    plugins: &std::path::Path,
    folder: &str,
    (package, version): (&str, &str),
    exe: &str,
    (class, kind): (&str, &str),
) {
    let dir = plugins.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("agent-env-plugin.toml"),
        format!(
            "[plugin]\nname = \"{package}\"\nversion = \"{version}\"\nexec = [\"{}\"]\nprotocol = [1, 1]\n\n[provides.stores]\n{class} = \"{kind}\"\n",
            fixture(exe).display()
        ),
    )
    .unwrap();
}
