//! A plugin's store through the pipe: `agent-env store check object` with `[stores.object] impl =
//! "<package>:<Class>"` starts the fixture plugin (written with plugin-sdk-rs), opens its
//! MemoryObjectStore and runs every case as requests to the child.

use std::process::Command;

use crate::support::shell_store::{ShellStore, REFUSE};
use crate::support::{IsolatedDirs, AGENT_ENV};

fn write_setup(dir: &std::path::Path, impl_name: &str, config: &str) -> std::path::PathBuf {
    crate::support::install_store_fixture(
        &dir.join("data/agent-env/plugins"),
        "works",
        ("agentenv-fixture-works", "0.3.0"),
        "fixture-works",
        ("MemoryObjectStore", "object"),
    );
    let work = dir.join("work");
    std::fs::create_dir_all(work.join(".agentenv")).unwrap();
    std::fs::write(
        work.join(".agentenv/config.toml"),
        format!("[stores.object]\nimpl = \"{impl_name}\"\nconfig = {config}\n"),
    )
    .unwrap();
    work
}

fn check(dir: &std::path::Path, work: &std::path::Path) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(AGENT_ENV);
    cmd.env_clear();
    let out = IsolatedDirs {
        home: dir.join("home"),
        xdg_data: dir.join("data"),
        xdg_state: dir.join("state"),
        xdg_config: dir.join("home/.config"),
        plugins: dir.join("data/agent-env/plugins"),
    }
    .apply(&mut cmd)
    .args(["store", "check", "object"])
    .current_dir(work)
    .env("PATH", "/usr/bin:/bin")
    .output()
    .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_plugin_store_written_with_the_rust_sdk_passes_the_object_kit_through_the_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let work = write_setup(
        dir.path(),
        "agentenv-fixture-works:MemoryObjectStore",
        "{ root = \"/unused\", bucket = \"kit\" }",
    );
    let (code, out, err) = check(dir.path(), &work);
    println!("{out}\n{err}");
    assert!(out.contains("Checking the object store agentenv-fixture-works:MemoryObjectStore (from [stores.object])"), "{out}\n{err}");
    let cases = out
        .lines()
        .filter(|l| l.starts_with("PASSED ") || l.starts_with("FAILED "))
        .count();
    assert_eq!(cases, 27, "{out}");
    let failed: Vec<&str> = out.lines().filter(|l| l.starts_with("FAILED ")).collect();
    assert!(
        failed.is_empty(),
        "cases failed through the pipe: {failed:?}\n{out}\n{err}"
    );
    for passed in [
        "put_get_roundtrip",
        "put_is_write_once",
        "put_file_is_write_once",
        "download_to_file_streams_to_dest",
        "get_object_metadata_reflects_object",
        "put_file_at_roundtrips",
        "list_at_matches_list",
        "missing_object_reads_raise_object_not_found",
    ] {
        assert!(
            out.lines().any(|l| l == format!("PASSED {passed}")),
            "{passed}:\n{out}"
        );
    }
    assert_eq!(code, Some(0), "{out}\n{err}");
}

#[test]
fn a_config_key_the_plugin_class_does_not_take_is_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    let work = write_setup(
        dir.path(),
        "agentenv-fixture-works:MemoryObjectStore",
        "{ root = \"/x\", compress = true }",
    );
    let (code, _, err) = check(dir.path(), &work);
    assert_eq!(code, Some(1));
    assert!(err.contains("The config table for 'agentenv-fixture-works:MemoryObjectStore' has unknown key 'compress'; it takes root, bucket"), "{err}");
}

#[test]
fn a_class_the_manifest_does_not_list_is_refused_before_starting_anything() {
    let dir = tempfile::tempdir().unwrap();
    let work = write_setup(dir.path(), "agentenv-fixture-works:Nope", "{}");
    let (code, _, err) = check(dir.path(), &work);
    assert_eq!(code, Some(1));
    assert!(err.contains("Cannot import impl 'agentenv-fixture-works:Nope': agentenv-fixture-works's manifest lists no store class 'Nope' under [provides.stores] (it lists MemoryObjectStore)"), "{err}");
    let work = write_setup(dir.path(), "agentenv-missing:Cas", "{}");
    let (_, _, err) = check(dir.path(), &work);
    assert!(
        err.contains("Cannot import impl 'agentenv-missing:Cas': no installed plugin package named 'agentenv-missing'; a plugin's store is named '<package>:<Class>'"),
        "{err}"
    );
    // A typo in the package's name: the package that provides the class is named.
    let work = write_setup(dir.path(), "agentenv-fixture-work:MemoryObjectStore", "{}");
    let (_, _, err) = check(dir.path(), &work);
    assert!(
        err.contains("no installed plugin package named 'agentenv-fixture-work'; agentenv-fixture-works provides MemoryObjectStore: write impl = \"agentenv-fixture-works:MemoryObjectStore\""),
        "{err}"
    );
}

/// A store that writes lines to stdout besides the protocol's messages is warned about by `store
/// check`, as `plugin list` warns (a partial line would stall its next answer).
#[test]
fn a_store_that_writes_noise_to_stdout_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let work = write_setup(dir.path(), "agentenv-noisy:NoisyStore", "{}");
    ShellStore {
        package: "agentenv-noisy",
        class: "NoisyStore",
        kind: "object",
        on_open: r#"echo "debug: opening the store""#,
        on_call: REFUSE,
    }
    .install(&dir.path().join("data/agent-env/plugins"), "noisy");
    let (code, _, err) = check(dir.path(), &work);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("warning: plugin agentenv-noisy wrote 1 line(s) to stdout that are not protocol messages (first: 'debug: opening the store')"),
        "{err}"
    );
}

/// Ctrl-C during `store check` lets the case running end (it removes what it made), skips the rest
/// and exits 130.
#[test]
fn a_store_check_stopped_by_a_signal_skips_the_rest_and_exits_130() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let work = write_setup(dir.path(), "agentenv-slow:SlowStore", "{}");
    ShellStore {
        package: "agentenv-slow",
        class: "SlowStore",
        kind: "object",
        on_open: "",
        on_call: &format!("sleep 0.2; {REFUSE}"),
    }
    .install(&dir.path().join("data/agent-env/plugins"), "slow");
    let mut cmd = Command::new(AGENT_ENV);
    cmd.env_clear();
    let mut child = IsolatedDirs {
        home: dir.path().join("home"),
        xdg_data: dir.path().join("data"),
        xdg_state: dir.path().join("state"),
        xdg_config: dir.path().join("home/.config"),
        plugins: dir.path().join("data/agent-env/plugins"),
    }
    .apply(&mut cmd)
    .args(["store", "check", "object"])
    .current_dir(&work)
    .env("PATH", "/usr/bin:/bin")
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut header = String::new();
    stdout.read_line(&mut header).unwrap();
    assert!(header.starts_with("Checking the object store"), "{header}");
    // SAFETY: sends a signal to the child this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{rest}{stderr}");
    assert!(rest.contains("not run: the check was stopped"), "{rest}");
    assert!(
        stderr.contains("Stopping once the case running has removed what it made"),
        "{stderr}"
    );
}

/// A store plugin written by hand in `sh` that declares `config_keys` ["root", "bucket"] and
/// `required_keys` ["root"] in its `initialize` answer and opens whatever table it is given, as a
/// plugin that does not check its own table does; its config table is `config`.
fn by_hand_store(dir: &std::path::Path, config: &str) -> std::path::PathBuf {
    let plugins = dir.join("data/agent-env/plugins");
    let script = dir.join("qa-store.sh");
    std::fs::write(
        &script,
        r#"#!/bin/sh
while IFS= read -r line; do
  rest=${line#*\"id\":}
  id=${rest%%[!0-9]*}
  [ -n "$id" ] || continue
  case "$line" in
    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocol":1,"plugin":{"name":"agentenv-qa","version":"1"},"contributions":[],"stores":[{"class":"QaStore","kind":"object","config_keys":["root","bucket"],"required_keys":["root"]}]}}\n' "$id" ;;
    *'"method":"store.open"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"handle":"h1"}}\n' "$id" ;;
    *'"method":"shutdown"'*) printf '{"jsonrpc":"2.0","id":%s,"result":null}\n' "$id" ;;
    *) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"not here"}}\n' "$id" ;;
  esac
done
"#,
    )
    .unwrap();
    std::fs::create_dir_all(plugins.join("qa")).unwrap();
    std::fs::write(
        plugins.join("qa/agent-env-plugin.toml"),
        format!(
            "[plugin]\nname = \"agentenv-qa\"\nversion = \"1\"\nexec = [\"/bin/sh\", \"{}\"]\nprotocol = [1, 1]\n\n[provides.stores]\nQaStore = \"object\"\n",
            script.display()
        ),
    )
    .unwrap();
    let work = dir.join("work");
    std::fs::create_dir_all(work.join(".agentenv")).unwrap();
    std::fs::write(
        work.join(".agentenv/config.toml"),
        format!("[stores.object]\nimpl = \"agentenv-qa:QaStore\"\nconfig = {config}\n"),
    )
    .unwrap();
    work
}

fn run_in(dir: &std::path::Path, work: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let mut cmd = Command::new(AGENT_ENV);
    cmd.env_clear();
    let out = IsolatedDirs {
        home: dir.join("home"),
        xdg_data: dir.join("data"),
        xdg_state: dir.join("state"),
        xdg_config: dir.join("home/.config"),
        plugins: dir.join("data/agent-env/plugins"),
    }
    .apply(&mut cmd)
    .args(args)
    .current_dir(work)
    .env("PATH", "/usr/bin:/bin")
    .output()
    .unwrap();
    (
        out.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The keys a hand-written plugin declares for its store class in `initialize` are held to by the
/// host, as an SDK's store class holds them (in its words): a required key missing and a key it does not take are
/// config errors naming the table, the key and the store, from `store check` and `config check`
/// alike, though the plugin itself would open the store.
#[test]
fn the_keys_a_plugin_store_class_declares_are_checked_by_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let work = by_hand_store(dir.path(), "{ bucket = \"qa\" }");
    let missing = "[stores.object.config] The config table for 'agentenv-qa:QaStore' lacks the required key 'root'; it takes root, bucket (the keys the plugin agentenv-qa declares for QaStore in its initialize answer)";
    for args in [&["store", "check", "object"][..], &["config", "check"][..]] {
        let (code, out) = run_in(dir.path(), &work, args);
        assert_eq!(code, Some(1), "{args:?}: {out}");
        assert!(out.contains(missing), "{args:?}: {out}");
    }

    let work = by_hand_store(dir.path(), "{ root = \"/r\", buckt = \"qa\" }");
    let (code, out) = run_in(dir.path(), &work, &["config", "check"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("[stores.object.config] The config table for 'agentenv-qa:QaStore' has unknown key 'buckt'; it takes root, bucket; did you mean 'bucket' for 'buckt'?"),
        "{out}"
    );

    // A table that keeps to them opens.
    let work = by_hand_store(dir.path(), "{ root = \"/r\", bucket = \"qa\" }");
    let (code, out) = run_in(dir.path(), &work, &["config", "check"]);
    assert_eq!(code, Some(0), "{out}");
}
