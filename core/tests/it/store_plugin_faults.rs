//! A plugin store that misbehaves, through real plugin processes (`fixture-store`, whose
//! `DiskObjectStore` keeps objects as files, writes a stderr line for every operation, and crashes or
//! fails on the calls its config names): a crash is followed by a fresh process on the next call, and
//! by `crash-loop` after 3; an error of no named kind names the plugin; `store get` streams an object of
//! any size; the plugin's stderr reaches whoever listens (`-v`).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use agent_env::config::{configured_stores, ConfigDocument};
use agent_env::discovery::{discover, SearchPath};
use agent_env::stores::plugin_stores::{HostPluginStores, PluginPackage};
use agent_env::stores::store_output::StoreOutput;
use agent_env::stores::{ObjectStore, StoreError};
use agent_env_host::{HostConfig, HostServices, NoServices, PluginHost, RpcError};
use serde_json::{Map, Value};

use crate::support::shell_store::ShellStore;
use crate::support::{fixture, IsolatedDirs, AGENT_ENV};

const PACKAGE: &str = "agentenv-fixture-store";

/// A temp world with the fixture store plugin installed and selected as the object store, its
/// objects under `root/objects`.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    /// The store's config table is `{ root = "<root>" <extra> }`.
    fn new(extra: &str) -> World {
        let world = World {
            dir: tempfile::tempdir().unwrap(),
        };
        let plugin = world.plugins().join("store");
        std::fs::create_dir_all(&plugin).unwrap();
        std::fs::write(
            plugin.join("agent-env-plugin.toml"),
            format!(
                "[plugin]\nname = \"{PACKAGE}\"\nversion = \"0.1.0\"\nexec = [\"{}\"]\nprotocol = [1, 1]\n\n[provides.stores]\nDiskObjectStore = \"object\"\n",
                fixture("fixture-store").display()
            ),
        )
        .unwrap();
        std::fs::create_dir_all(world.work().join(".agentenv")).unwrap();
        std::fs::write(
            world.work().join(".agentenv/config.toml"),
            world.config(extra),
        )
        .unwrap();
        world
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn plugins(&self) -> PathBuf {
        self.path().join("data/agent-env/plugins")
    }

    fn work(&self) -> PathBuf {
        self.path().join("work")
    }

    fn root(&self) -> PathBuf {
        self.path().join("root")
    }

    fn config(&self, extra: &str) -> String {
        format!(
            "[stores.object]\nimpl = \"{PACKAGE}:DiskObjectStore\"\nconfig = {{ root = \"{}\"{extra} }}\n",
            self.root().display()
        )
    }

    /// Puts `bytes` in the store as `key` (a file under its root), without the plugin.
    fn object(&self, key: &str, bytes: &[u8]) -> String {
        let path = self.root().join("objects").join(key);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
        format!("disk://fixture/{key}")
    }

    /// How many store operations the plugin's processes began.
    fn calls(&self) -> u64 {
        std::fs::read_to_string(self.root().join(".calls"))
            .map(|t| t.trim().parse().unwrap())
            .unwrap_or(0)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(AGENT_ENV);
        cmd.env_clear();
        IsolatedDirs {
            home: self.path().join("home"),
            xdg_data: self.path().join("data"),
            xdg_state: self.path().join("state"),
            xdg_config: self.path().join("config"),
            plugins: self.plugins(),
        }
        .apply(&mut cmd)
        .args(args)
        .current_dir(self.work())
        .env("PATH", "/usr/bin:/bin")
        .env("TMPDIR", self.path());
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// The store as a command builds it, in a pool of this test's own, its plugin's stderr going to
    /// `output`.
    fn store(&self, output: StoreOutput) -> (Arc<PluginHost>, Arc<dyn ObjectStore>) {
        let (host, factory) = plugin_stores(&self.plugins(), output);
        let config = std::fs::read_to_string(self.work().join(".agentenv/config.toml")).unwrap();
        let doc = ConfigDocument::from_text(&config, &self.work().join(".agentenv/config.toml"));
        let store = configured_stores(doc, Some(Arc::new(factory)))
            .object()
            .unwrap();
        (host, store)
    }
}

/// A pool and the plugin stores of the packages installed in `plugins`, each with no settings, their
/// stderr going to `output`.
fn plugin_stores(plugins: &Path, output: StoreOutput) -> (Arc<PluginHost>, HostPluginStores) {
    let host = Arc::new(PluginHost::new(
        HostConfig::new(agent_env::VERSION),
        Arc::new(NoServices),
    ));
    let packages = discover(&SearchPath::new(plugins.to_path_buf(), &Default::default()))
        .plugins
        .into_iter()
        .map(|p| PluginPackage {
            manifest: p.manifest,
            settings: Ok(Map::new()),
        })
        .collect();
    let factory = HostPluginStores::new(host.clone(), packages).with_output(output);
    (host, factory)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn pid(host: &PluginHost) -> u32 {
    host.get(PACKAGE).expect("the plugin runs").pid()
}

fn put(store: &dyn ObjectStore, key: &str) -> Result<String, StoreError> {
    store.put(key, b"bytes", "text/plain", false)
}

#[test]
fn a_store_plugin_that_crashed_is_started_again_for_the_next_call() {
    // The 2nd operation (the put of "b") exits with code 7.
    let world = World::new(", crash_at = 2");
    let (host, store) = world.store(StoreOutput::new());
    put(store.as_ref(), "a").unwrap();
    let first = pid(&host);
    let err = put(store.as_ref(), "b").unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("plugin {PACKAGE} (")),
        "the crash names the plugin: {err}"
    );
    assert!(
        err.contains("crashed (exited with code 7) while answering store.object.put"),
        "{err}"
    );
    // The next call gets a new process with the store opened in it.
    let url = put(store.as_ref(), "c").unwrap();
    assert_eq!(store.get(&url).unwrap(), b"bytes");
    assert_ne!(pid(&host), first, "a new process");
    assert_eq!(host.failures(PACKAGE), 1);
    // The put in flight when it crashed was not sent again: a, b (crashed), c, and the get.
    assert_eq!(world.calls(), 4);
    assert!(!world.root().join("objects/b").exists());
    // A process stopped as idle (not a failure) is replaced the same way.
    let restarted = pid(&host);
    host.release(PACKAGE);
    assert_eq!(store.get(&url).unwrap(), b"bytes");
    assert_ne!(pid(&host), restarted);
    assert_eq!(host.failures(PACKAGE), 1);
    // A named kind's message is the store's own.
    assert_eq!(
        put(store.as_ref(), "c").unwrap_err().to_string(),
        format!(
            "Object already exists at {}.",
            world.root().join("objects/c").display()
        )
    );
}

#[test]
fn a_store_plugin_that_crashes_every_time_is_given_up_after_three_failures() {
    // Every operation from the 2nd on exits with code 7.
    let world = World::new(", crash_from = 2");
    let (host, store) = world.store(StoreOutput::new());
    put(store.as_ref(), "a").unwrap();
    for key in ["b", "c", "d"] {
        let err = put(store.as_ref(), key).unwrap_err().to_string();
        assert!(
            err.contains("crashed (exited with code 7) while answering store.object.put"),
            "{key}: {err}"
        );
    }
    let err = put(store.as_ref(), "e").unwrap_err().to_string();
    assert!(err.contains(&format!("plugin {PACKAGE} (")), "{err}");
    assert!(
        err.contains("failed 3 times in this invocation, so agent-env will not start it again for a minute (or until the next agent-env command); last failure: crashed: "),
        "{err}"
    );
    // No 4th process was started, and none is asked again.
    assert_eq!(world.calls(), 4);
    assert!(put(store.as_ref(), "f")
        .unwrap_err()
        .to_string()
        .contains("failed 3 times"));
    assert_eq!(world.calls(), 4);
    assert!(host.get(PACKAGE).is_none());
}

#[test]
fn a_store_error_of_no_named_kind_names_the_plugin_and_a_named_one_does_not() {
    let world = World::new("");
    let exe = fixture("fixture-store");
    let out = world.run(&["store", "get", "disk://fixture/fail-internal"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr).trim_end(),
        format!(
            "Error: plugin {PACKAGE} ({}) failed while answering store.object.download_to_file: RuntimeError: the acme backend said 503 Service Unavailable",
            exe.display()
        )
    );
    let out = world.run(&["store", "get", "disk://fixture/fail-io"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with(&format!(
            "Error: plugin {PACKAGE} ({}) refused store.object.download_to_file: reading fail-io: ",
            exe.display()
        )),
        "{}",
        text(&out.stderr)
    );
    let out = world.run(&["store", "get", "disk://fixture/nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr).trim_end(),
        "Error: No object at disk://fixture/nope."
    );
}

#[test]
fn store_get_streams_an_object_over_the_message_limit_to_a_pipe_in_bounded_memory() {
    use sha2::{Digest, Sha256};
    let world = World::new("");
    // 80 MiB: its base64 alone would be over the 64 MiB message limit.
    let path = world.root().join("objects/big.bin");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut written = Sha256::new();
    for n in 0..80u32 {
        let piece: Vec<u8> = (0..1u32 << 20)
            .map(|i| ((n << 20 | i).wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        written.update(&piece);
        std::io::Write::write_all(&mut file, &piece).unwrap();
    }
    drop(file);
    let mut child = world
        .command(&["store", "get", "disk://fixture/big.bin"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let (mut printed, mut count) = (Sha256::new(), 0usize);
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = stdout.read(&mut buf).unwrap();
            if n == 0 {
                return (printed.finalize(), count);
            }
            printed.update(&buf[..n]);
            count += n;
        }
    });
    let mut stderr_pipe = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        stderr_pipe.read_to_string(&mut text).unwrap();
        text
    });
    let peak_kib = peak_memory_until_exit(&mut child);
    let status = child.wait().unwrap();
    let (printed, count) = reader.join().unwrap();
    assert!(status.success(), "{}", errors.join().unwrap());
    assert_eq!(count, 80 << 20);
    assert!(
        printed == written.finalize(),
        "the bytes printed are not the object's"
    );
    // Whole in memory it took 320 MB; streamed, what agent-env itself needs.
    assert!(
        peak_kib < 48 * 1024,
        "agent-env peaked at {peak_kib} KiB for an 80 MiB object"
    );
    let left: Vec<_> = std::fs::read_dir(world.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".agent-env-get-"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// The highest peak resident memory (`VmHWM`, KiB) `child` showed while it ran; returns once it
/// ended (it is reaped).
fn peak_memory_until_exit(child: &mut std::process::Child) -> u64 {
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        let hwm = std::fs::read_to_string(&status).ok().and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("VmHWM:"))?.to_string();
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        });
        if let Some(kib) = hwm {
            peak = peak.max(kib);
        }
        if child.try_wait().unwrap().is_some() {
            return peak;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn store_get_gives_a_pipe_binary_bytes_as_they_are_and_dash_means_stdout() {
    let world = World::new("");
    let bytes = [0u8, 0xff, b'\n', 0x80, 7];
    let url = world.object("bin", &bytes);
    let out = world.run(&["store", "get", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(out.stdout, bytes);
    let out = world.run(&["store", "get", "-o", "-", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(out.stdout, bytes);
    assert!(
        !world.work().join("-").exists(),
        "'-' is stdout, not a file"
    );
    let file = world.path().join("out/copy.bin");
    let out = world.run(&["store", "get", "--output", file.to_str().unwrap(), &url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
}

/// Ctrl-C while `store get -o FILE` downloads leaves neither the file nor a part of it: the part is
/// written in a private folder beside the file, which the signal removes.
#[test]
fn ctrl_c_during_store_get_to_a_file_leaves_nothing_behind() {
    let world = World::new("");
    let url = world.object("slow-big.bin", &[7u8; 1 << 20]);
    let out_dir = world.path().join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let file = out_dir.join("big.bin");
    let mut child = world
        .command(&["store", "get", &url, "-o", file.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let part_written = || {
        std::fs::read_dir(&out_dir).unwrap().flatten().any(|e| {
            std::fs::read_dir(e.path())
                .map(|mut inside| inside.next().is_some())
                .unwrap_or(false)
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !part_written() {
        assert!(std::time::Instant::now() < deadline, "no part was written");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: signals the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let left: Vec<_> = std::fs::read_dir(&out_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn store_get_refuses_binary_bytes_on_a_terminal_with_exit_1_and_prints_text() {
    let world = World::new("");
    let binary = world.object("bin", &[0u8, 0xff, 0xfe]);
    // Text in several scripts, a character cut by the 64 KiB pieces it is checked in.
    let text_bytes = format!("{}é and ✓\n", "x".repeat(64 * 1024 - 1)).into_bytes();
    let text_url = world.object("text.txt", &text_bytes);
    let (code, shown, stderr) = on_a_terminal(world.command(&["store", "get", &binary]));
    assert_eq!(code, 1, "{stderr}");
    assert!(shown.is_empty(), "{shown:?}");
    assert!(
        stderr.contains(&format!("Error: {binary} holds binary bytes, which a terminal cannot show; write them to a file with --output FILE")),
        "{stderr}"
    );
    let (code, shown, stderr) = on_a_terminal(world.command(&["store", "get", &text_url]));
    assert_eq!(code, 0, "{stderr}");
    // The terminal turns each "\n" into "\r\n".
    assert_eq!(shown.replace("\r\n", "\n").into_bytes(), text_bytes);
    // Control characters reach a terminal as escapes (a pipe gets them as they are).
    let sneaky = world.object("sneaky.txt", b"title\x1b]0;owned\x07 and clear\x1b[2J\n");
    let (code, shown, stderr) = on_a_terminal(world.command(&["store", "get", &sneaky]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        shown.replace("\r\n", "\n"),
        "title\\x1b]0;owned\\x07 and clear\\x1b[2J\n"
    );
    // Past the first piece too: the text is shown a piece at a time.
    let long = "y".repeat(64 * 1024 + 5);
    let late_escape = world.object("late.txt", format!("{long}\x1b[2J\n").as_bytes());
    let (code, shown, stderr) = on_a_terminal(world.command(&["store", "get", &late_escape]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(shown.replace("\r\n", "\n"), format!("{long}\\x1b[2J\n"));
    // Bytes that are not text far into an object: refused before any of it is shown.
    let mut late_binary = long.into_bytes();
    late_binary.extend_from_slice(&[0xff, b'\n']);
    let late_binary = world.object("late.bin", &late_binary);
    let (code, shown, stderr) = on_a_terminal(world.command(&["store", "get", &late_binary]));
    assert_eq!(code, 1, "{stderr}");
    assert!(shown.is_empty(), "{}", shown.len());
    // `-o -` asks for the bytes as they are, on a terminal too.
    let (code, shown, stderr) = on_a_terminal(world.command(&["store", "get", &sneaky, "-o", "-"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        shown.replace("\r\n", "\n"),
        "title\x1b]0;owned\x07 and clear\x1b[2J\n"
    );
}

/// Runs `cmd` with its stdout on a pseudo-terminal: its exit code, what the terminal showed, and its
/// stderr.
fn on_a_terminal(cmd: Command) -> (i32, String, String) {
    let ran = agent_env_test_support::terminal::on_a_terminal(cmd);
    (ran.code, ran.shown, ran.stderr)
}

#[test]
fn with_v_a_store_plugins_stderr_is_shown_and_without_it_it_is_not() {
    let world = World::new("");
    let url = world.object("t.txt", b"hello\n");
    let out = world.run(&["-v", "store", "get", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(out.stdout, b"hello\n");
    assert!(
        text(&out.stderr).contains(&format!(
            "[{PACKAGE}] fixture-store: download_to_file t.txt (call "
        )),
        "{}",
        text(&out.stderr)
    );
    let out = world.run(&["store", "get", &url]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stderr), "");
}

/// Services that keep the stderr lines they hear (masked as a printer masks them, when `masking`).
#[derive(Default)]
struct Hearing(Mutex<Vec<String>>, bool);

impl HostServices for Hearing {
    fn handle(&self, _: &str, _: &str, _: Value) -> Result<Value, RpcError> {
        Ok(Value::Null)
    }
    fn stderr_line(&self, package: &str, line: &str) {
        let line = match self.1 {
            true => agent_env::redaction::redact(line).into_owned(),
            false => line.to_string(),
        };
        self.0.lock().unwrap().push(format!("{package}: {line}"));
    }
}

#[test]
fn a_store_plugins_stderr_reaches_the_listener_of_its_output_across_a_restart() {
    let world = World::new(", crash_at = 2");
    let output = StoreOutput::new();
    let hearing = Arc::new(Hearing::default());
    let _listening = output.listen(hearing.clone());
    let (_host, store) = world.store(output);
    put(store.as_ref(), "a").unwrap();
    put(store.as_ref(), "b").unwrap_err();
    put(store.as_ref(), "c").unwrap();
    // A line may come a moment after the answer: stderr is read on its own thread.
    let last = format!("{PACKAGE}: fixture-store: put c (call 3)");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !hearing.0.lock().unwrap().contains(&last) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let heard = hearing.0.lock().unwrap().clone();
    for line in [
        "fixture-store: put a (call 1)",
        "fixture-store: crashing in the middle of put",
        "fixture-store: put c (call 3)",
    ] {
        assert!(
            heard.contains(&format!("{PACKAGE}: {line}")),
            "{line}: {heard:?}"
        );
    }
}

/// During a run, a plugin store's stderr is the run's plugin output: shown with `-v`, and in the
/// run's log either way.
#[test]
fn during_a_run_a_store_plugins_stderr_reaches_verbose_and_the_log() {
    let world = World::new("");
    let folder = world.work().join("note");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("note.txt"), "a note\n").unwrap();
    let out = world.run(&["artifact", "put", "note", "--id", "team/note"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::write(
        world.work().join("t.json"),
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "team/note", "destination_path": "/app/n"}]"#,
    )
    .unwrap();
    let out = world.run(&["task", "put", "t.json", "--id", "team/t"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = world.run(&["-v", "task", "run", "team/t"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{}{stderr}", text(&out.stdout));
    let line = format!("[{PACKAGE}] fixture-store: download_to_file ");
    assert!(stderr.contains(&line), "{stderr}");
    let logs = world.path().join("state/agent-env/logs");
    let log = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect::<String>();
    assert!(
        log.contains("stderr: fixture-store: download_to_file "),
        "{log}"
    );
}

/// A secret store's plugin that logs the secret it returns: its line is heard once the answer is
/// read, masked, however the line and the answer race.
#[test]
fn a_secret_a_secret_store_plugin_logs_is_masked_where_its_stderr_goes() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    ShellStore {
        package: "agentenv-secrets",
        class: "Vault",
        kind: "secret",
        on_open: "",
        on_call: r#"echo "vault: get -> Vault-Value-8812" >&2
      printf '{"jsonrpc":"2.0","id":%s,"result":{"value":"Vault-Value-8812"}}\n' "$id""#,
    }
    .install(&plugins, "secrets");
    let output = StoreOutput::new();
    // Masked as it is heard, as the terminal and the run's log mask what they write.
    let hearing = Arc::new(Hearing(Mutex::default(), true));
    let _listening = output.listen(hearing.clone());
    let (_host, factory) = plugin_stores(&plugins, output);
    let config_path = dir.path().join("config.toml");
    let doc = ConfigDocument::from_text(
        "[stores.secret]\nimpl = \"agentenv-secrets:Vault\"\n",
        &config_path,
    );
    let secrets = configured_stores(doc, Some(Arc::new(factory)))
        .secret()
        .unwrap();
    assert_eq!(
        secrets.get("token").unwrap().as_deref(),
        Some("Vault-Value-8812")
    );
    let wanted = "agentenv-secrets: vault: get -> ***";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !hearing.0.lock().unwrap().iter().any(|l| l == wanted)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let heard = hearing.0.lock().unwrap().clone();
    assert!(heard.iter().any(|l| l == wanted), "{heard:?}");
    assert!(
        !heard.iter().any(|l| l.contains("Vault-Value-8812")),
        "{heard:?}"
    );
}

/// Ctrl-C while `bundle init --from-task` copies a stored task's last artifact file: the file is
/// finished, and the bundle is not put in place all the same (it was written whole, exit 0).
#[test]
fn ctrl_c_during_bundle_inits_last_file_puts_nothing_in_place() {
    let world = World::new(", slow_download_ms = 1500");
    let folder = world.path().join("greeting");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("hello.txt"), "hello\n").unwrap();
    let put = world.run(&[
        "artifact",
        "put",
        folder.to_str().unwrap(),
        "--id",
        "team/greeting",
    ]);
    assert_eq!(put.status.code(), Some(0), "{}", text(&put.stderr));
    let task = world.path().join("hello.json");
    std::fs::write(
        &task,
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "team/greeting", "destination_path": "/app"}]"#,
    )
    .unwrap();
    let put = world.run(&["task", "put", task.to_str().unwrap(), "--id", "team/hello"]);
    assert_eq!(put.status.code(), Some(0), "{}", text(&put.stderr));
    let target = world.work().join("copy");
    // Under -v the store plugin's stderr is shown: it says when it has written half the file and
    // waits (the copy reads it whole from a scratch file before anything reaches the bundle).
    let mut child = world
        .command(&[
            "-v",
            "bundle",
            "init",
            target.to_str().unwrap(),
            "--from-task",
            "team/hello",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let lines = std::io::BufReader::new(child.stderr.take().unwrap());
    let (halfway, heard_halfway) = std::sync::mpsc::channel();
    let reading = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in lines.lines() {
            let line = line.unwrap();
            if line.contains("wrote half of") {
                let _ = halfway.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    heard_halfway
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the copy never began");
    // SAFETY: signals the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    let stderr = reading.join().unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert!(!target.exists(), "the bundle was put in place");
    let left: Vec<_> = std::fs::read_dir(world.work())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        left.iter()
            .all(|n| !n.to_string_lossy().contains("agent-env-partial")),
        "{left:?}"
    );
}
