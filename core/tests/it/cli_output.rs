//! Every command that prints ends quietly when its reader goes away (`agent-env … | head -c1`): no
//! panic, no exit 101. A closed stdout is the reader's choice, not a failure: the command finishes and
//! exits with the code it exits with when its output is read.

use std::io::Read;
use std::process::{Child, Stdio};

use crate::support::run::{fixture, Sandboxed};

/// A sandbox with the working fixture plugin, a plugin that writes a stray line to stdout (so
/// `plugin list` and `plugin check` print their noise warning) and a config file, so the commands
/// have something to print.
fn sandbox() -> Sandboxed {
    let s = Sandboxed::new();
    let noisy = s.script(
        "noisy.sh",
        r#"#!/bin/sh
echo "hello from a stray print"
IFS= read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"plugin":{"name":"agentenv-noisy","version":"1"},"contributions":[{"group":"envs","name":"noisy_env","type":"noisy_env","class":"NoisyEnv","methods":["from_dict"]}]}}'
while IFS= read -r line; do
  rest=${line#*\"id\":}
  id=${rest%%[!0-9]*}
  [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"result":null}\n' "$id"
done
"#,
    );
    s.install_manifest(
        "noisy",
        &format!(
            "[plugin]\nname = \"agentenv-noisy\"\nversion = \"1\"\nexec = [\"/bin/sh\", \"{}\"]\nprotocol = [1, 1]\n\n[provides.envs]\nnoisy_env = \"NoisyEnv\"\n",
            noisy.display()
        ),
    );
    s.install_manifest(
        "works",
        &format!(
            "[plugin]\nname = \"agentenv-fixture-works\"\nversion = \"0.3.0\"\nexec = [\"{}\"]\nprotocol = [1, 1]\n\n[provides.task_steps]\necho_step = \"EchoStep\"\n\n[provides.stores]\nMemoryObjectStore = \"object\"\n",
            fixture("fixture-works").display()
        ),
    );
    s.write(
        ".agentenv/config.toml",
        "[stores.document]\nimpl = \"LocalSqliteDocumentStore\"\n\n[plugins.agentenv-fixture-works]\ngreeting = \"hi\"\n",
    );
    s
}

/// Every command line that writes to stdout.
fn printing_commands(s: &Sandboxed) -> Vec<Vec<String>> {
    let folder = s.plugins().join("works").display().to_string();
    [
        "--version",
        "--help",
        "plugin list",
        "plugin list --json",
        "plugin list --no-load",
        "plugin show agentenv-fixture-works",
        "plugin show agentenv-fixture-works --json",
        "plugin check",
        "plugin check --json",
        "plugin remove --dry-run agentenv-fixture-works",
        "config show",
        "config show --json",
        "config explain stores.document",
        "config explain stores.document --json",
        "config debug",
        "config debug --json",
        "config sources",
        "config sources --json",
        "config check",
        "config check --json",
        "store check object",
        "store check object --json",
        "store check document",
        "run",
        "run hello --dry-run",
        "run hello",
        "task list",
        "task list --json",
        "completions bash",
        "man",
        "man run",
    ]
    .iter()
    .map(|line| line.split(' ').map(str::to_string).collect())
    .chain([
        vec![
            "plugin".to_string(),
            "add".to_string(),
            "--dry-run".to_string(),
            folder,
        ],
        vec!["store".to_string(), "get".to_string(), stored_object(s)],
    ])
    .collect()
}

fn spawn(s: &Sandboxed, args: &[String]) -> Child {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    s.command(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agent-env")
}

/// Exit code and stderr of a child whose stdout has been dealt with.
fn finish(child: Child) -> (Option<i32>, String) {
    let out = child.wait_with_output().expect("wait for agent-env");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[track_caller]
fn assert_quiet(args: &[String], how: &str, code: Option<i32>, stderr: &str) {
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "agent-env {} ({how}) panicked or complained about the pipe:\n{stderr}",
        args.join(" ")
    );
    assert_ne!(code, Some(101), "agent-env {} ({how})", args.join(" "));
}

#[test]
fn every_printing_command_ends_quietly_on_a_closed_stdout() {
    let s = sandbox();
    for args in printing_commands(&s) {
        // Read in full: the exit code the command has when its output is read.
        let read = spawn(&s, &args).wait_with_output().expect("run agent-env");
        assert!(
            !read.stdout.is_empty(),
            "agent-env {} printed nothing: {}",
            args.join(" "),
            String::from_utf8_lossy(&read.stderr)
        );
        let expected = read.status.code();

        // The reader is gone before the first write: every write fails.
        let mut child = spawn(&s, &args);
        drop(child.stdout.take());
        let (code, stderr) = finish(child);
        assert_quiet(&args, "stdout closed at once", code, &stderr);
        assert_eq!(
            code,
            expected,
            "agent-env {}: a closed stdout changes no exit code\n{stderr}",
            args.join(" ")
        );

        // `| head -c1`: one byte is read, then the reader goes.
        let mut child = spawn(&s, &args);
        let mut stdout = child.stdout.take().expect("stdout");
        let mut byte = [0u8; 1];
        let _ = stdout.read(&mut byte);
        drop(stdout);
        let (code, stderr) = finish(child);
        assert_quiet(&args, "stdout closed after one byte", code, &stderr);
    }
    assert!(s.sandboxes_left().is_empty(), "{:?}", s.sandboxes_left());
}

/// A stdout that fails for another reason than its reader going (a full disk) loses output a script
/// relies on: the command says so and exits non-zero, 0 never.
#[test]
fn a_stdout_on_a_full_disk_fails_the_command() {
    let s = Sandboxed::new();
    // A run's lines go through the run's own view, its `--json` document through the command's.
    for args in [
        &["config", "show", "--json"][..],
        &["run", "hello"],
        &["run", "hello", "--json"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let out = s
            .command(args)
            .stdout(full)
            .output()
            .expect("run agent-env");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("could not write the output to stdout: No space left on device"),
            "{args:?}: {stderr}"
        );
    }
}

/// An object in the sandbox's local object store, and its URL.
fn stored_object(s: &Sandboxed) -> String {
    let object = s.state().join("object_store/notes/a.txt");
    std::fs::create_dir_all(object.parent().unwrap()).unwrap();
    std::fs::write(&object, "an object's bytes\n").unwrap();
    format!("file://{}", object.display())
}

/// `store get` streams an object to stdout through the same writer as every other command: a
/// stdout on a full disk fails it, said as every command says it.
#[test]
fn store_get_to_a_stdout_on_a_full_disk_fails() {
    let s = Sandboxed::new();
    let url = stored_object(&s);
    for args in [
        &["store", "get", &url][..],
        &["store", "get", &url, "-o", "-"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let out = s
            .command(args)
            .stdout(full)
            .output()
            .expect("run agent-env");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("could not write the output to stdout: No space left on device"),
            "{args:?}: {stderr}"
        );
    }
}

/// A stdout that was never open (`>&-`) loses the output as a full disk does: said, and never exit 0
/// (the Rust runtime puts /dev/null there, which would take the output without a word); an object
/// `store get` streams there too.
#[test]
fn a_stdout_that_was_never_open_fails_the_command() {
    use std::os::unix::process::CommandExt;
    let s = Sandboxed::new();
    let url = stored_object(&s);
    for args in [
        &["run", "hello", "--json"][..],
        &["config", "show"],
        &["store", "get", &url],
        &["store", "get", &url, "-o", "-"],
    ] {
        let mut cmd = s.command(args);
        // SAFETY: close is async-signal-safe; it runs in the child, after its stdio is set up.
        unsafe {
            cmd.pre_exec(|| {
                libc::close(libc::STDOUT_FILENO);
                Ok(())
            });
        }
        let out = cmd.output().expect("run agent-env");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr
                .contains("could not write the output to stdout: Bad file descriptor (os error 9)"),
            "{args:?}: {stderr}"
        );
    }
}

/// The commands that warn on stderr (unsafe paths, a plugin's stray stdout lines) warn through the
/// same writer: a closed stderr, or both streams closed, changes nothing but what is seen.
#[test]
fn warnings_end_quietly_on_a_closed_stderr() {
    let s = sandbox();
    for line in [
        "plugin list",
        "plugin list --json",
        "plugin check",
        "plugin check --json",
    ] {
        let args: Vec<String> = line.split(' ').map(str::to_string).collect();
        let read = spawn(&s, &args).wait_with_output().expect("run agent-env");
        let warned = String::from_utf8_lossy(&read.stderr);
        assert!(
            warned.contains("Warning: plugin agentenv-noisy wrote 1 line(s) to stdout"),
            "agent-env {line} did not warn about the noise:\n{warned}"
        );
        let expected = read.status.code();

        let mut child = spawn(&s, &args);
        drop(child.stderr.take());
        let out = child.wait_with_output().expect("wait for agent-env");
        assert_eq!(
            out.status.code(),
            expected,
            "agent-env {line}, stderr closed"
        );
        assert!(!out.stdout.is_empty(), "agent-env {line}, stderr closed");

        let mut child = spawn(&s, &args);
        drop(child.stdout.take());
        drop(child.stderr.take());
        let status = child.wait().expect("wait for agent-env");
        assert_eq!(status.code(), expected, "agent-env {line}, both closed");
    }
}

/// A `--json` command that fails before it prints its document prints an error document instead, so
/// a script reading stdout always gets one JSON document; a command with an error document of its own
/// (`run`) prints only that one.
#[test]
fn a_json_command_that_fails_prints_one_error_document() {
    let s = Sandboxed::new();
    for args in [
        &["task", "get", "nope", "--json"][..],
        &["task", "get-instance", "nope", "--json"],
        &["plugin", "show", "agentenv-nope", "--json"],
        &["artifact", "get", "nope", "--json"],
        &["run", "./nope", "--json"],
    ] {
        let r = s.run(args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.both());
        let doc: serde_json::Value = serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: one JSON document ({e}): {}", r.stdout));
        assert_eq!(doc["status"], "error", "{args:?}: {doc:#}");
        assert_eq!(doc["exit_code"], 1, "{args:?}: {doc:#}");
        let message = doc["error"].as_str().unwrap();
        assert!(
            r.stderr.contains(&format!("Error: {message}")),
            "{args:?}: {}",
            r.stderr
        );
    }
    // Without --json nothing goes to stdout.
    assert_eq!(s.run(&["task", "get", "nope"]).stdout, "");
}

/// A command line written for the Python agent-env gets clap's usage error (exit 2) and a hint at what
/// this agent-env does instead; a plain typo gets clap's own suggestion alone.
#[test]
fn the_python_agent_envs_commands_get_a_hint() {
    let s = Sandboxed::new();
    for (args, hint) in [
        (&["task", "create", "t.json"][..], "hint: a task here is a JSON file of steps: `agent-env task put FILE --id ID` stores one"),
        (&["eval", "run", "smoke"], "hint: an eval here is a bundle file, evals/NAME.toml"),
        // A root option's value is not taken for the command.
        (&["--color", "never", "task", "create", "t.json"], "hint: a task here is a JSON file of steps"),
        (&["plugin", "remove", "--installer", "pip", "agentenv-x"], "hint: `agent-env plugin remove PACKAGE` takes no --installer"),
    ] {
        let r = s.run(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.both());
        assert!(r.stderr.contains(hint), "{args:?}: {}", r.stderr);
    }
    let typo = s.run(&["task", "lisst"]);
    assert_eq!(typo.code, 2);
    assert!(!typo.stderr.contains("hint:"), "{}", typo.stderr);
}
