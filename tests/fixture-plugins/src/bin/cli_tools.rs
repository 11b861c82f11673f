//! A CLI fixture: commands and root options for the CLI tests (`core/tests/it/cli_*.rs`).
//!
//! Its package name is the one agent-env starts it as (`AGENT_ENV_PLUGIN_PACKAGE`), so one binary can stand
//! for several packages. Its first argument (from the manifest's `exec`) is a data folder holding
//! `tenants/<name>.toml`.
//!
//! Commands: `ask` (reads a line, greets it), `interleave` (alternates stdout and stderr), `exit N`,
//! `whoami` (prints the package), `put TEXT` (stores TEXT through the host's configured object store and
//! reads it back), `which-config` (prints `AGENT_ENV_CONFIG`), `sleep MS`, `die` (aborts mid-command).
//! Root options: `tenant` (value: selects `tenants/<value>.toml`), `offline` (switch: selects
//! `offline.toml`), `boom` (its callback always fails), `abort` (its callback kills the plugin).

use std::io::{BufRead, Write};
use std::path::PathBuf;

use agent_env_plugin_sdk::{protocol, CliCommand, HostHandle, ObjectStore, Plugin, RootOption};

fn package() -> String {
    std::env::var(protocol::version::PACKAGE_VAR).unwrap_or_else(|_| "agentenv-cli-tools".into())
}

fn data_dir() -> PathBuf {
    std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
}

struct Tool(&'static str);

impl CliCommand for Tool {
    fn name(&self) -> &str {
        self.0
    }

    fn run(&self, argv: &[String], host: &HostHandle) -> i32 {
        let mut out = std::io::stdout();
        match self.0 {
            "ask" => {
                print!("name? ");
                let _ = out.flush();
                let mut line = String::new();
                if std::io::stdin().lock().read_line(&mut line).is_err() {
                    return 3;
                }
                println!("hello, {}", line.trim_end());
                0
            }
            "interleave" => {
                for i in 1..=3 {
                    println!("out-{i}");
                    let _ = out.flush();
                    eprintln!("err-{i}");
                }
                0
            }
            "exit" => argv.first().and_then(|a| a.parse().ok()).unwrap_or(0),
            "panic" => panic!("the panic command panicked"),
            "quit" => std::process::exit(argv.first().and_then(|a| a.parse().ok()).unwrap_or(0)),
            "whoami" | "tool" => {
                println!("{} argv={argv:?}", package());
                0
            }
            "put" => {
                let text = argv.first().cloned().unwrap_or_default();
                let objects = host.objects();
                let stored = objects
                    .put("cli/greeting.txt", text.as_bytes(), "text/plain", true)
                    .and_then(|url| Ok((url.clone(), objects.get(&url)?)));
                match stored {
                    Ok((url, back)) => {
                        println!("{url} {}", String::from_utf8_lossy(&back));
                        0
                    }
                    Err(e) => {
                        eprintln!("put failed: {e}");
                        1
                    }
                }
            }
            "which-config" => {
                println!(
                    "config={}",
                    std::env::var("AGENT_ENV_CONFIG").unwrap_or_default()
                );
                0
            }
            "die" => {
                eprintln!("cli_tools: dying in the middle of 'die'");
                std::process::abort()
            }
            "sleep" => {
                let ms = argv.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
                std::thread::sleep(std::time::Duration::from_millis(ms));
                0
            }
            _ => 2,
        }
    }
}

struct Opt(&'static str);

impl RootOption for Opt {
    fn name(&self) -> &str {
        self.0
    }

    fn class(&self) -> &str {
        self.0
    }

    fn apply(&self, _flag: &str, value: Option<&str>) -> Result<Option<PathBuf>, String> {
        match (self.0, value) {
            ("tenant", Some(name)) => Ok(Some(
                data_dir().join("tenants").join(format!("{name}.toml")),
            )),
            ("offline", Some(_)) => Ok(Some(data_dir().join("offline.toml"))),
            ("boom", _) => Err("RuntimeError('boom')".into()),
            ("abort", _) => std::process::abort(),
            _ => Ok(None),
        }
    }
}

fn main() {
    let mut plugin = Plugin::new(&package(), "0.1.0");
    for name in [
        "ask",
        "interleave",
        "exit",
        "whoami",
        "put",
        "which-config",
        "sleep",
        "die",
        "tool",
        "panic",
        "quit",
    ] {
        plugin = plugin.cli_command(Tool(name));
    }
    for name in ["tenant", "offline", "boom", "abort", "verbose"] {
        plugin = plugin.root_option(Opt(name));
    }
    plugin.serve()
}
