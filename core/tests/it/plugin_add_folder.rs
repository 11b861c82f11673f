//! Black-box: `plugin add` of a plugin folder: the plan, the check in a fresh process, the roll-back byte for
//! byte, adding what is there already, refusing agent-env itself, the lock, and an interrupted change.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::plugins::Sandbox;

fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/install")
        .join(name)
}

/// Every file and folder under `root` with its mode and bytes, for byte-for-byte comparisons.
fn tree(root: &Path) -> Vec<(PathBuf, u32, Vec<u8>)> {
    let mut out = Vec::new();
    if !root.exists() {
        return out;
    }
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            let bytes = if meta.is_file() {
                std::fs::read(&p).unwrap()
            } else {
                Vec::new()
            };
            if meta.is_dir() {
                stack.push(p.clone());
            }
            out.push((p, meta.permissions().mode(), bytes));
        }
    }
    out.sort();
    out
}

fn output(sb: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let out = sb.run(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A copy of the `folder-plugin` fixture in `<sandbox>/<folder>`, its manifest and script as `edit`
/// returns them from the fixture's.
fn edited_folder_plugin(
    sb: &Sandbox,
    folder: &str,
    edit: impl FnOnce(&str, &str) -> (String, String),
) -> PathBuf {
    let fixture = fixture_dir("folder-plugin");
    let read = |name: &str| std::fs::read_to_string(fixture.join(name)).unwrap();
    let (manifest, script) = edit(&read("agent-env-plugin.toml"), &read("plugin.sh"));
    let src = sb.dir().join(folder);
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("agent-env-plugin.toml"), manifest).unwrap();
    std::fs::write(src.join("plugin.sh"), script).unwrap();
    std::fs::set_permissions(
        src.join("plugin.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    src
}

/// An existing plugin that must survive a failed change untouched.
fn existing_plugin(sb: &Sandbox) {
    let path = sb.plugin_dir_manifest(
        "keep-me",
        "[plugin]\nname = \"keep-me\"\nversion = \"1.0\"\nexec = [\"./x\"]\nprotocol = [1, 1]\n",
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
}

#[test]
fn a_plugin_folder_is_copied_checked_and_added_once() {
    let sb = Sandbox::new();
    let src = fixture_dir("folder-plugin");
    let spec = src.to_str().unwrap();
    let (code, out, _) = output(&sb, &["plugin", "add", spec, "--dry-run"]);
    assert_eq!(code, 0);
    assert!(out.contains("Will copy: "), "{out}");
    assert!(out.ends_with("Dry run: nothing was changed.\n"), "{out}");
    assert!(
        tree(&sb.plugins_dir()).is_empty(),
        "a dry run changes nothing"
    );

    let (code, out, err) = output(&sb, &["plugin", "add", spec, "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("  agentenv-folder-demo: task_steps demo_step active\n"),
        "{out}"
    );
    assert!(
        out.ends_with("Added. `agent-env plugin list` shows every installed plugin.\n"),
        "{out}"
    );
    let installed = sb.plugins_dir().join("agentenv-folder-demo");
    assert_eq!(
        std::fs::read(installed.join("plugin.sh")).unwrap(),
        std::fs::read(src.join("plugin.sh")).unwrap()
    );
    let report = sb.json(&["plugin", "show", "agentenv-folder-demo", "--json"], 0);
    assert_eq!(report["plugins"][0]["contributions"][0]["status"], "active");

    let before = tree(&sb.plugins_dir());
    let (code, out, _) = output(&sb, &["plugin", "add", spec, "-y"]);
    assert_eq!(code, 0);
    // The plan says the installed copy is replaced; the copy turns out the same.
    assert!(
        out.contains(&format!(
            "Will replace: {} with a copy of {}",
            installed.display(),
            src.display()
        )),
        "{out}"
    );
    assert!(out.contains("Nothing changed: "), "{out}");
    assert_eq!(before, tree(&sb.plugins_dir()));
}

/// `installed` lists the packages by name, as `plugin list` does: a Python package (its manifest in
/// the venv `plugin add` keeps) among folder plugins takes its place by its name, not after them.
#[test]
fn add_json_lists_the_installed_packages_by_name() {
    let sb = Sandbox::new();
    let share = sb.plugins_dir().join(".python/share/agent-env/plugins");
    std::fs::create_dir_all(&share).unwrap();
    std::fs::write(
        share.join("agentenv-aaa-python.toml"),
        "[plugin]\nname = \"agentenv-aaa-python\"\nversion = \"1.0\"\nexec = [\"../../../bin/agentenv-aaa-python\"]\nprotocol = [1, 1]\n",
    )
    .unwrap();
    sb.plugin_dir_manifest(
        "agentenv-zzz",
        "[plugin]\nname = \"agentenv-zzz\"\nversion = \"2.0\"\nexec = [\"./x\"]\nprotocol = [1, 1]\n",
    );
    let src = fixture_dir("folder-plugin");
    let doc = sb.json(&["plugin", "add", src.to_str().unwrap(), "-y", "--json"], 0);
    let names: Vec<&str> = doc["installed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "agentenv-aaa-python",
            "agentenv-folder-demo",
            "agentenv-zzz"
        ],
        "{doc:#}"
    );
}

/// A folder whose manifest runs files outside it by absolute paths (a venv's interpreter and a
/// script elsewhere, as a one-file Python plugin's `--agent-env-manifest` prints them) is added, with
/// a warning naming each of them: the installed copy goes on running them where they are.
#[test]
fn exec_paths_outside_the_folder_are_warned_about_and_added() {
    let sb = Sandbox::new();
    let venv_bin = sb.dir().join("venv/bin");
    std::fs::create_dir_all(&venv_bin).unwrap();
    std::os::unix::fs::symlink("/bin/sh", venv_bin.join("sh")).unwrap();
    let elsewhere = sb.dir().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::copy(
        fixture_dir("folder-plugin").join("plugin.sh"),
        elsewhere.join("plugin.sh"),
    )
    .unwrap();
    let interpreter = venv_bin.join("sh");
    let script = elsewhere.join("plugin.sh");
    let src = edited_folder_plugin(&sb, "crash", |manifest, script_text| {
        (
            manifest.replace(
                "exec = [\"./plugin.sh\"]",
                &format!(
                    "exec = [\"{}\", \"{}\"]",
                    interpreter.display(),
                    script.display()
                ),
            ),
            script_text.to_string(),
        )
    });
    let warning = format!(
        "warning: agentenv-folder-demo's exec names {} and {}, outside the folder being added ({}): the installed plugin depends on them staying there (moved or removed, the plugin no longer starts), and a copy of it does not work on a machine without them; to add it whole, put what it runs in the folder and name it in exec by its path there (exec = [\"./plugin.py\"], a script with a #! line)",
        interpreter.display(),
        script.display(),
        src.display()
    );
    let (code, out, err) = output(&sb, &["plugin", "add", src.to_str().unwrap(), "-y"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains(&warning), "{err}");
    assert!(
        out.ends_with("Added. `agent-env plugin list` shows every installed plugin.\n"),
        "{out}"
    );
    let doc = sb.json(&["plugin", "add", src.to_str().unwrap(), "-y", "--json"], 0);
    assert!(
        doc["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str() == Some(warning.as_str())),
        "{doc:#}"
    );
    // A folder that runs only what it holds (and the system's own interpreters) is not warned about.
    let whole = fixture_dir("folder-plugin");
    let (code, out, err) = output(&sb, &["plugin", "add", whole.to_str().unwrap(), "-y"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("outside the folder"), "{err}");
}

/// A folder whose manifest runs a file inside it by its absolute path (the script beside the
/// manifest, as a one-file Python plugin's `--agent-env-manifest` prints it) is added, with a warning:
/// the installed copy runs the file in the folder it was added from, never its own copy.
#[test]
fn an_absolute_exec_path_inside_the_folder_is_warned_about_and_added() {
    let sb = Sandbox::new();
    let src = sb.dir().join("sp");
    let script = src.join("plugin.sh");
    let src = edited_folder_plugin(&sb, "sp", |manifest, script_text| {
        (
            manifest.replace(
                "exec = [\"./plugin.sh\"]",
                &format!("exec = [\"/bin/sh\", \"{}\"]", script.display()),
            ),
            script_text.to_string(),
        )
    });
    let warning = format!(
        "warning: agentenv-folder-demo's exec names {} by its absolute path in the folder being added ({}): the installed plugin runs that file where it is, not the copy in the plugins directory, so it depends on {} staying there (moved or removed, the plugin no longer starts; edited, it is refused as changed until `agent-env plugin approve agentenv-folder-demo`); to run the copy, make plugin.sh the first element of exec, by its path relative to the manifest (exec = [\"./plugin.sh\"], a script with a #! line, made executable): only the first element of exec is found relative to the manifest",
        script.display(),
        src.display(),
        src.display()
    );
    let (code, out, err) = output(&sb, &["plugin", "add", src.to_str().unwrap(), "-y"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains(&warning), "{err}");
    assert!(!err.contains("outside the folder"), "{err}");
    let doc = sb.json(&["plugin", "add", src.to_str().unwrap(), "-y", "--json"], 0);
    assert!(
        doc["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str() == Some(warning.as_str())),
        "{doc:#}"
    );
    // What the warning says: the source folder's file is the one that runs, and moved away, the
    // plugin no longer starts.
    std::fs::rename(&src, sb.dir().join("sp-moved")).unwrap();
    let (_, out, err) = output(&sb, &["plugin", "list"]);
    assert!(
        out.contains("demo_step") && out.contains("failed"),
        "{out}{err}"
    );
    // A folder whose exec names only what it holds by relative paths is not warned about.
    let whole = fixture_dir("folder-plugin");
    let (code, out, err) = output(&sb, &["plugin", "add", whole.to_str().unwrap(), "-y"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("in the folder being added"), "{err}");
}

#[test]
fn a_plugin_that_prints_to_stdout_is_added_with_a_warning() {
    let sb = Sandbox::new();
    let src = edited_folder_plugin(&sb, "noisy-src", |manifest, script| {
        let noisy = script.replacen("answered=0\n", "answered=0\necho 'loading the model'\n", 1);
        assert_ne!(noisy, script);
        (manifest.to_string(), noisy)
    });
    let (code, out, err) = output(&sb, &["plugin", "add", src.to_str().unwrap(), "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains(
            "warning: plugin agentenv-folder-demo wrote 1 line(s) to stdout that are not protocol messages (first: 'loading the model')"
        ),
        "{err}"
    );
    assert!(out.ends_with("Added. `agent-env plugin list` shows every installed plugin.\n"));
}

#[test]
fn a_failing_check_is_rolled_back_byte_for_byte_unless_kept() {
    let sb = Sandbox::new();
    existing_plugin(&sb);
    let src = sb.dir().join("broken-src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("agent-env-plugin.toml"),
        "[plugin]\nname = \"agentenv-broken\"\nversion = \"0.1.0\"\nexec = [\"./missing\"]\nprotocol = [1, 1]\n[provides.task_steps]\nbroken_step = \"B\"\n",
    )
    .unwrap();
    let before = tree(&sb.plugins_dir());
    let (code, out, err) = output(&sb, &["plugin", "add", src.to_str().unwrap(), "--yes"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("  agentenv-broken: task_steps broken_step failed ("),
        "{out}"
    );
    assert!(
        err.contains(
            "problem: agentenv-broken: task_steps broken_step did not take effect (failed)"
        ),
        "{err}"
    );
    // The problem names the installed copy, which is what failed (as the check's line above it
    // does); the note below it names the folder that was added, where the change is made.
    let installed = sb.plugins_dir().join("agentenv-broken");
    assert!(
        err.contains(&format!(
            "its executable {}/missing does not exist; fix 'exec' in {}/agent-env-plugin.toml",
            installed.display(),
            installed.display()
        )),
        "{err}"
    );
    assert!(
        out.contains(&format!("{}/missing", installed.display())),
        "{out}"
    );
    assert!(
        err.contains(&format!(
            "note: {} above is the installed copy of {}, which is removed now; make the change in {} and add it again",
            installed.display(),
            src.display(),
            src.display()
        )),
        "{err}"
    );
    assert!(
        out.contains("Restoring the environment as it was.\n"),
        "{out}"
    );
    assert_eq!(
        before,
        tree(&sb.plugins_dir()),
        "restored byte for byte, modes included"
    );

    let (code, out, _) = output(
        &sb,
        &["plugin", "add", src.to_str().unwrap(), "--yes", "--keep"],
    );
    assert_eq!(code, 1);
    assert!(out.contains("Kept as installed (--keep).\n"), "{out}");
    assert!(sb
        .plugins_dir()
        .join("agentenv-broken/agent-env-plugin.toml")
        .is_file());
}

/// A plugin that does not answer its check names, in the check's line and in the problem below it,
/// the installed copy that was started; the note after them names the folder that was added.
#[test]
fn a_plugin_that_hangs_at_its_check_is_named_where_it_was_started() {
    let mut sb = Sandbox::new();
    sb.set("AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT", "1");
    let src = edited_folder_plugin(&sb, "work/fp", |m, _| {
        (m.to_string(), "#!/bin/sh\n# Reads every request and answers none (shell built-ins only).\nwhile IFS= read -r line; do :; done\n".to_string())
    });
    let (code, out, err) = output(&sb, &["plugin", "add", src.to_str().unwrap(), "-y"]);
    assert_eq!(code, 1, "{out}{err}");
    let installed = sb.plugins_dir().join("agentenv-folder-demo");
    let started = format!(
        "plugin agentenv-folder-demo ({}/plugin.sh) did not answer initialize within 1 s",
        installed.display()
    );
    assert!(out.contains(&started), "{out}");
    let problem = err
        .lines()
        .find(|l| l.starts_with("problem: "))
        .unwrap_or_default();
    assert!(problem.contains(&started), "{err}");
    assert!(!problem.contains(&src.display().to_string()), "{err}");
    assert!(
        err.contains(&format!(
            "note: {} above is the installed copy of {}, which is removed now; make the change in {} and add it again",
            installed.display(),
            src.display(),
            src.display()
        )),
        "{err}"
    );
}

/// A tmpfs mounted at a folder while it lives.
struct Mounted(PathBuf);

impl Mounted {
    /// Mounts a read-only tmpfs at `at`; `None` where this process cannot (not root, no `mount`).
    fn read_only(at: &Path) -> Option<Mounted> {
        std::fs::create_dir_all(at).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs"])
            .arg(at)
            .output()
            .is_ok_and(|out| out.status.success());
        mounted.then(|| Mounted(at.to_path_buf()))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// A plugins directory that cannot be written: the problem names it, not the folder being added
/// (which is writable), and no note sends the user to change that folder. The read-only plugins
/// directory is a tmpfs mounted so, which needs root and `mount`: without them the test says so
/// and passes.
#[test]
fn a_plugins_directory_that_cannot_be_written_is_the_folder_the_problem_names() {
    let sb = Sandbox::new();
    let src = edited_folder_plugin(&sb, "work/fp", |m, s| (m.to_string(), s.to_string()));
    let Some(_mounted) = Mounted::read_only(&sb.plugins_dir()) else {
        eprintln!("skipped: a read-only tmpfs cannot be mounted here (needs root and mount)");
        return;
    };
    let (code, out, err) = output(&sb, &["plugin", "add", src.to_str().unwrap(), "-y"]);
    assert_eq!(code, 1, "{out}{err}");
    let installed = sb.plugins_dir().join("agentenv-folder-demo");
    assert!(
        err.contains(&format!(
            "problem: could not finish the change: cannot write {}",
            installed.display()
        )),
        "{err}"
    );
    assert!(!err.contains(&src.display().to_string()), "{err}");
    assert!(
        !format!("{out}{err}").contains("make the change in"),
        "{out}{err}"
    );
}

#[test]
fn agent_env_itself_is_refused_before_anything_runs() {
    let sb = Sandbox::new();
    for spec in [
        "agentenv-framework",
        "agentenv_framework>=0.2",
        "agent-env @ git+https://example.invalid/x",
        "agentenv-protocol",
    ] {
        let (code, out, err) = output(&sb, &["plugin", "add", spec, "--yes"]);
        assert_eq!(code, 1);
        assert!(out.is_empty(), "{out}");
        assert_eq!(
            err,
            format!("Error: {spec} is agent-env itself; upgrade it with the installer that owns the environment\n")
        );
    }
    assert!(!sb.plugins_dir().join(".python").exists());
}

#[test]
fn without_a_terminal_or_yes_it_refuses_and_changes_nothing() {
    let sb = Sandbox::new();
    let src = fixture_dir("folder-plugin");
    let (code, _, err) = output(&sb, &["plugin", "add", src.to_str().unwrap()]);
    // The command line lacks --yes, as with --json (exit 2 both ways).
    assert_eq!(code, 2);
    assert!(err.contains("there is no terminal; pass --yes"), "{err}");
    assert!(tree(&sb.plugins_dir()).is_empty());
}

/// Runs `args` on a terminal (stdin too, so it asks `Proceed?`), sends `signal` once the question is
/// up, and returns the exit code and what the terminal showed (each `\r\n` back to `\n`).
fn interrupted_at_the_question(sb: &Sandbox, args: &[&str], signal: i32) -> (i32, String) {
    let (mut child, screen) = agent_env_test_support::terminal::all_on_a_terminal(sb.command(args));
    agent_env_test_support::deadline::wait_until(
        std::time::Duration::from_secs(60),
        "the question",
        || screen.so_far().contains("Proceed? [y/N] "),
    );
    // SAFETY: sends a signal to the child we started.
    unsafe { libc::kill(child.id() as i32, signal) };
    let code = child.wait().unwrap().code().unwrap_or(-1);
    (code, screen.finish().replace("\r\n", "\n"))
}

/// Ctrl-C at `Proceed?` ends the command as a signal ends the others: a notice on a line of its own
/// below the question that nothing was installed (or removed), exit 128 + the signal's number (130
/// for Ctrl-C, 143 for SIGTERM, 129 for a hangup), and nothing changed.
#[test]
fn ctrl_c_at_the_question_changes_nothing_and_says_so() {
    let sb = Sandbox::new();
    existing_plugin(&sb);
    let before = tree(&sb.plugins_dir());
    let src = fixture_dir("folder-plugin");
    let (code, shown) =
        interrupted_at_the_question(&sb, &["plugin", "add", src.to_str().unwrap()], libc::SIGINT);
    assert_eq!(code, 130, "{shown:?}");
    assert!(
        shown.ends_with("Proceed? [y/N] \nInterrupted at the question: nothing was installed.\n"),
        "{shown:?}"
    );
    assert_eq!(before, tree(&sb.plugins_dir()));
    let (code, shown) =
        interrupted_at_the_question(&sb, &["plugin", "add", src.to_str().unwrap()], libc::SIGHUP);
    assert_eq!(code, 129, "{shown:?}");
    assert!(
        shown.ends_with("Proceed? [y/N] \nInterrupted at the question: nothing was installed.\n"),
        "{shown:?}"
    );
    assert_eq!(before, tree(&sb.plugins_dir()));
    // Ctrl-\ too, which would otherwise end the process where it stood.
    let (code, shown) = interrupted_at_the_question(
        &sb,
        &["plugin", "add", src.to_str().unwrap()],
        libc::SIGQUIT,
    );
    assert_eq!(code, 131, "{shown:?}");
    assert!(
        shown.ends_with("Proceed? [y/N] \nInterrupted at the question: nothing was installed.\n"),
        "{shown:?}"
    );
    assert_eq!(before, tree(&sb.plugins_dir()));
    // The change lock went with the process: the next change goes ahead.
    let (code, _, err) = output(&sb, &["plugin", "add", src.to_str().unwrap(), "--yes"]);
    assert_eq!(code, 0, "{err}");

    let before = tree(&sb.plugins_dir());
    let (code, shown) = interrupted_at_the_question(
        &sb,
        &["plugin", "remove", "agentenv-folder-demo"],
        libc::SIGTERM,
    );
    assert_eq!(code, 143, "{shown:?}");
    assert!(
        shown.ends_with("Proceed? [y/N] \nInterrupted at the question: nothing was removed.\n"),
        "{shown:?}"
    );
    assert_eq!(before, tree(&sb.plugins_dir()));
}

/// Runs `args` with stdin and stdout on a terminal of its own (its controlling terminal when
/// `controlling`, so closing it sends SIGHUP; otherwise only the reads and writes see it gone) and
/// stderr on a pipe, closes the terminal once `Proceed?` is asked, and returns the exit code and the
/// stderr.
fn terminal_closed_at_the_question(
    sb: &Sandbox,
    args: &[&str],
    controlling: bool,
) -> (i32, String) {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::process::CommandExt;
    // Both ends closed on exec: no other process (a command another test starts meanwhile, or the
    // command itself) may hold the terminal open once the test closes it.
    // SAFETY: posix_openpt opens a new fd, which the OwnedFd then owns alone.
    let leader = unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(fd >= 0, "no pseudo-terminal");
        OwnedFd::from_raw_fd(fd)
    };
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: the leader is open; ptsname_r writes at most `name.len()` bytes into `name`.
    let named = unsafe {
        use std::os::fd::AsRawFd;
        libc::unlockpt(leader.as_raw_fd()) == 0
            && libc::ptsname_r(leader.as_raw_fd(), name.as_mut_ptr(), name.len()) == 0
    };
    assert!(named, "the terminal's name");
    // SAFETY: ptsname_r wrote a NUL-terminated name into `name`.
    let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
    let follower: OwnedFd = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(name.to_str().unwrap())
        .unwrap()
        .into();
    let mut cmd = sb.command(args);
    cmd.stdin(follower.try_clone().unwrap())
        .stdout(follower)
        .stderr(std::process::Stdio::piped());
    if controlling {
        // SAFETY: setsid and ioctl are async-signal-safe; fd 0 is the terminal by then.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() == -1 || libc::ioctl(0, libc::TIOCSCTTY, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    let mut stderr = child.stderr.take().unwrap();
    let reading = std::thread::spawn(move || {
        let mut said = String::new();
        let _ = stderr.read_to_string(&mut said);
        said
    });
    let mut screen = std::fs::File::from(leader);
    let mut shown = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&shown).contains("Proceed? [y/N] ") {
        let n = screen.read(&mut buf).expect("the question");
        assert!(n > 0, "{}", String::from_utf8_lossy(&shown));
        shown.extend_from_slice(&buf[..n]);
    }
    // The window closes.
    drop(screen);
    let code = child.wait().unwrap().code().unwrap_or(-1);
    (code, reading.join().unwrap())
}

/// A terminal that closes at `Proceed?` stops the command as its hangup does (exit 129, nothing
/// installed), and the lines the gone terminal could not take are not called a failure to write the
/// output: only the notice reaches a stderr that is elsewhere.
#[test]
fn a_terminal_that_closes_at_the_question_is_a_hangup_and_no_failed_output() {
    let sb = Sandbox::new();
    existing_plugin(&sb);
    let before = tree(&sb.plugins_dir());
    let src = fixture_dir("folder-plugin");
    for controlling in [true, false] {
        let (code, stderr) = terminal_closed_at_the_question(
            &sb,
            &["plugin", "add", src.to_str().unwrap()],
            controlling,
        );
        assert_eq!(code, 129, "controlling terminal {controlling}: {stderr}");
        assert_eq!(
            stderr, "Interrupted at the question: nothing was installed.\n",
            "controlling terminal {controlling}"
        );
        assert_eq!(before, tree(&sb.plugins_dir()));
    }
}

#[test]
fn a_second_change_is_refused_while_the_lock_is_held() {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let sb = Sandbox::new();
    let state = sb.dir().join("home/.local/state/agent-env/locks");
    std::fs::create_dir_all(&state).unwrap();
    // The lock's name: the first 16 hex digits of sha256(plugins dir path).
    let digest = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(
            sb.plugins_dir().as_os_str().as_encoded_bytes(),
        ))
    };
    let path = state.join(format!("plugin-{}.lock", &digest[..16]));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&path)
        .unwrap();
    assert_eq!(
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    let src = fixture_dir("folder-plugin");
    let busy = "Error: another `agent-env plugin add` or `remove` is changing this environment; run this after it finishes, or pass --wait to wait for it\n";
    let (code, _, err) = output(&sb, &["plugin", "add", src.to_str().unwrap(), "--yes"]);
    assert_eq!((code, err.as_str()), (1, busy));
    let (code, _, err) = output(&sb, &["plugin", "remove", "whatever", "--yes"]);
    assert_eq!((code, err.as_str()), (1, busy));
    // Approving changes the pins a rollback would put back: it waits its turn too.
    let (code, _, err) = output(&sb, &["plugin", "approve", "whatever"]);
    assert_eq!((code, err.as_str()), (1, busy));

    // With --wait the change waits, says so once (naming the pid the holder wrote in the lock
    // file, as a change that holds it does), and goes ahead when the lock is let go.
    std::io::Write::write_all(&mut &file, b"4242\n").unwrap();
    let mut waiting = sb
        .command(&["plugin", "add", src.to_str().unwrap(), "--yes", "--wait"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(waiting.stderr.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut first).unwrap();
    assert!(
        first.starts_with("waiting for another `agent-env plugin add` or `remove` to finish changing this environment (pid 4242 holds "),
        "{first}"
    );
    assert!(waiting.try_wait().unwrap().is_none(), "it waits");
    // With --json too the wait is said on stderr, a second in (and is in the document's notes).
    let mut waiting_json = sb
        .command(&[
            "plugin",
            "add",
            src.to_str().unwrap(),
            "--yes",
            "--wait",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut json_stderr = std::io::BufReader::new(waiting_json.stderr.take().unwrap());
    let mut json_first = String::new();
    std::io::BufRead::read_line(&mut json_stderr, &mut json_first).unwrap();
    assert!(
        json_first.starts_with("waiting for another `agent-env plugin add` or `remove`"),
        "{json_first}"
    );
    assert!(tree(&sb.plugins_dir()).is_empty());
    drop(file);
    let rest = std::io::read_to_string(stderr).unwrap();
    let status = waiting.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{first}{rest}");
    let json_pid = waiting_json.id();
    let json_out = waiting_json.wait_with_output().unwrap();
    assert_eq!(json_out.status.code(), Some(0), "{json_first}");
    let doc: serde_json::Value = serde_json::from_slice(&json_out.stdout).unwrap();
    // The two adds of one folder take turns: whichever goes second finds it installed.
    assert!(
        doc["outcome"] == "added" || doc["outcome"] == "unchanged",
        "{doc:#}"
    );
    assert!(!rest.contains("waiting for another"), "said once: {rest}");
    assert!(!tree(&sb.plugins_dir()).is_empty());
    // The change that held it last (either waiter) wrote its own pid there.
    let pid: u32 = std::fs::read_to_string(&path)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(pid == waiting.id() || pid == json_pid, "{pid}");
}

#[test]
fn the_lock_file_is_private() {
    let sb = Sandbox::new();
    let (code, _, err) = output(&sb, &["plugin", "remove", "nothing-here", "--yes"]);
    assert_eq!(code, 1, "{err}");
    let locks = sb.dir().join("home/.local/state/agent-env/locks");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&locks), 0o700);
    let files: Vec<PathBuf> = std::fs::read_dir(&locks)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1);
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("plugin-") && name.ends_with(".lock") && name.len() == 28,
        "{name}"
    );
    assert_eq!(mode(&files[0]), 0o600);
}

#[test]
fn an_interrupted_install_lets_the_installer_finish_then_restores() {
    interrupted_install(libc::SIGINT);
}

/// The terminal closing during a change is an interrupt like Ctrl-C: the change is rolled back.
#[test]
fn a_hangup_during_an_install_restores_like_ctrl_c() {
    interrupted_install(libc::SIGHUP);
}

/// `plugin add` of a crate whose (fake) installer waits, sent `signal` while it runs.
fn interrupted_install(signal: i32) {
    let mut sb = Sandbox::new();
    existing_plugin(&sb);
    let before = tree(&sb.plugins_dir());
    // A crate folder, and a fake `cargo` that writes into the plugins directory, says it started, then waits.
    let krate = sb.dir().join("crate");
    std::fs::create_dir_all(&krate).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"agentenv-slow\"\n",
    )
    .unwrap();
    let started = sb.dir().join("started");
    let release = sb.dir().join("release");
    let fake_bin = sb.dir().join("fake-bin");
    std::fs::create_dir_all(&fake_bin).unwrap();
    let body = format!(
        "#!/bin/sh\n/bin/mkdir -p '{plugins}/.cargo/bin'\necho half > '{plugins}/.cargo/bin/agentenv-slow'\n: > '{started}'\nwhile [ ! -e '{release}' ]; do /bin/sleep 0.05; done\n",
        plugins = sb.plugins_dir().display(),
        started = started.display(),
        release = release.display()
    );
    std::fs::write(fake_bin.join("cargo"), body).unwrap();
    std::fs::set_permissions(
        fake_bin.join("cargo"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    sb.path.insert(0, fake_bin);
    let child = sb
        .command(&["plugin", "add", krate.to_str().unwrap(), "--yes"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while !started.exists() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    unsafe { libc::kill(child.id() as i32, signal) };
    // The installer is still running: it was let finish.
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(sb.plugins_dir().join(".cargo/bin/agentenv-slow").exists());
    std::fs::write(&release, "").unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // 128 + the signal's number, as every command a signal stops.
    assert_eq!(out.status.code(), Some(128 + signal), "{stdout}{stderr}");
    assert!(
        stderr.contains("Interrupted; letting the installer finish"),
        "{stderr}"
    );
    assert!(
        stdout.contains("Interrupted; restoring the environment as it was.\n"),
        "{stdout}"
    );
    assert_eq!(before, tree(&sb.plugins_dir()));
}

#[test]
fn nothing_installs_a_plugin_implicitly() {
    let sb = Sandbox::new();
    let cfg = sb.dir().join("work/.agentenv");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("config.toml"),
        "[stores.document]\nimpl = \"agentenv-not-installed:Store\"\n[envs]\nimpls = [\"agentenv-not-installed:Env\"]\n",
    )
    .unwrap();
    let task = sb.dir().join("work/task.json");
    std::fs::write(&task, r#"{"id":"t","steps":[{"type":"grade_essay"}]}"#).unwrap();
    for args in [
        vec!["plugin", "list"],
        vec!["plugin", "check"],
        vec!["config", "show"],
        vec!["run", task.to_str().unwrap()],
    ] {
        let _ = sb.run(&args);
    }
    assert!(
        tree(&sb.plugins_dir()).is_empty(),
        "no command but `plugin add` installs anything"
    );
}

#[test]
fn plugin_list_warns_about_a_manifest_others_can_write() {
    let sb = Sandbox::new();
    let manifest = sb.plugin_dir_manifest(
        "loose",
        "[plugin]\nname = \"loose\"\nversion = \"1\"\nexec = [\"./x\"]\nprotocol = [1, 1]\n[provides.task_steps]\nloose_step = \"L\"\n",
    );
    let out = sb.run(&["plugin", "list", "--json", "--no-load"]);
    assert!(String::from_utf8_lossy(&out.stderr).is_empty());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.get("warnings").is_none(), "no key when all is well");
    std::fs::set_permissions(&manifest, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = sb.run(&["plugin", "list", "--json", "--no-load"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "Warning: {} can be written by other users (mode 0666)",
            manifest.display()
        )),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["format_version"], 1);
    assert!(
        doc["warnings"][0].as_str().unwrap().contains("chmod go-w"),
        "{doc:#}"
    );
}

/// A plugin source whose manifest declares `name`, written as TOML's literal string.
fn source_named(sb: &Sandbox, name: &str) -> PathBuf {
    let src = sb.dir().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("agent-env-plugin.toml"),
        format!("[plugin]\nname = '{name}'\nversion = \"0.1.0\"\nexec = [\"/bin/true\"]\nprotocol = [1, 1]\n[provides.task_steps]\nx_step = \"X\"\n"),
    )
    .unwrap();
    src
}

#[test]
fn a_manifest_name_that_leaves_the_plugins_directory_is_refused_and_nothing_is_touched() {
    let sb = Sandbox::new();
    let victim = sb.dir().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("other.txt"), "KEEP\n").unwrap();
    let victim_abs = victim.display().to_string();
    for name in ["../victim", "../../victim", victim_abs.as_str(), ".cargo"] {
        let src = source_named(&sb, name);
        let (code, out, err) = output(&sb, &["plugin", "add", src.to_str().unwrap(), "--yes"]);
        assert_ne!(code, 0, "{name}: {out}{err}");
        assert!(
            err.contains(&src.join("agent-env-plugin.toml").display().to_string())
                && err.contains(&format!("{name:?}"))
                // The manifest's own rule refuses it first; the plugins directory's rule
                // (`install::folder_name`) stands behind it.
                && err.contains("is not a package name"),
            "{name}: {err}"
        );
        assert_eq!(
            std::fs::read_to_string(victim.join("other.txt")).unwrap(),
            "KEEP\n",
            "{name}"
        );
        assert_eq!(
            std::fs::read_dir(&victim).unwrap().count(),
            1,
            "{name}: nothing is written beside it"
        );
        assert!(tree(&sb.plugins_dir()).is_empty(), "{name}: {out}");
    }
}

#[test]
fn a_store_only_plugin_is_added() {
    let sb = Sandbox::new();
    let src = fixture_dir("store-only-plugin");
    let (code, out, err) = output(&sb, &["plugin", "add", src.to_str().unwrap(), "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("  agentenv-store-only: stores ShelfObjectStore (object store)\n"),
        "{out}"
    );
    assert!(
        out.ends_with("Added. `agent-env plugin list` shows every installed plugin.\n"),
        "{out}"
    );
    assert!(sb
        .plugins_dir()
        .join("agentenv-store-only/agent-env-plugin.toml")
        .is_file());
    // `plugin show` lists what it declares, as `plugin list` does.
    let (code, shown, _) = output(&sb, &["plugin", "show", "agentenv-store-only"]);
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("\n  stores:   object store ShelfObjectStore (each started when [stores.<kind>] impl names it as agentenv-store-only:<Class>)\n"),
        "{shown}"
    );
}

/// A plugin source folder: `manifest` and the executable script `plugin.sh` it starts.
fn plugin_source(manifest: &str, script: &str) -> tempfile::TempDir {
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("agent-env-plugin.toml"), manifest).unwrap();
    let path = src.path().join("plugin.sh");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    src
}

#[test]
fn a_plugin_with_no_contributions_and_no_stores_is_rolled_back() {
    let sb = Sandbox::new();
    existing_plugin(&sb);
    let before = tree(&sb.plugins_dir());
    let src = plugin_source(
        "[plugin]\nname = \"agentenv-empty\"\nversion = \"0.1.0\"\nexec = [\"./plugin.sh\"]\nprotocol = [1, 1]\n",
        "#!/bin/sh\nexit 0\n",
    );
    let (code, out, err) = output(
        &sb,
        &["plugin", "add", src.path().to_str().unwrap(), "--yes"],
    );
    assert_ne!(code, 0, "{out}{err}");
    assert!(
        err.contains(
            "problem: agentenv-empty declares no contributions and no stores, so it is not an agent-env plugin"
        ),
        "{err}"
    );
    assert_eq!(before, tree(&sb.plugins_dir()), "rolled back");
}

#[test]
fn a_store_the_plugin_declares_but_does_not_give_is_rolled_back() {
    let sb = Sandbox::new();
    let src = edited_folder_plugin(&sb, "ghost-src", |manifest, script| {
        (
            format!("{manifest}\n[provides.stores]\nGhostStore = \"object\"\n"),
            script.to_string(),
        )
    });
    let (code, out, err) = output(&sb, &["plugin", "add", src.to_str().unwrap(), "--yes"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(
            "problem: agentenv-folder-demo did not start as its manifest says (manifest): "
        ) && err.contains("GhostStore"),
        "{err}"
    );
    assert!(tree(&sb.plugins_dir()).is_empty(), "{out}");
}

/// A package that declares only stores is started by the check all the same: one that cannot answer
/// `initialize` is not added.
#[test]
fn a_store_only_plugin_that_cannot_start_is_rolled_back() {
    let sb = Sandbox::new();
    existing_plugin(&sb);
    let before = tree(&sb.plugins_dir());
    let src = plugin_source(
        "[plugin]\nname = \"agentenv-broken-store\"\nversion = \"0.1.0\"\nexec = [\"./plugin.sh\"]\nprotocol = [1, 1]\n[provides.stores]\nBroken = \"secret\"\n",
        "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'nonexistent'\" >&2\nexit 1\n",
    );
    let (code, out, err) = output(
        &sb,
        &["plugin", "add", src.path().to_str().unwrap(), "--yes"],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(
            "problem: agentenv-broken-store did not start as its manifest says (initialize): "
        ) && err.contains("No module named 'nonexistent'"),
        "{err}"
    );
    assert_eq!(before, tree(&sb.plugins_dir()), "rolled back");
}

/// A folder whose manifest would not load is refused with the manifest's own fault (file, line,
/// column, what is wrong) before anything is copied.
#[test]
fn a_manifest_that_does_not_load_is_refused_with_its_fault() {
    let sb = Sandbox::new();
    let src = tempfile::tempdir().unwrap();
    std::fs::write(
        src.path().join("agent-env-plugin.toml"),
        "[plugin]\nname = \"agentenv-typo\"\nversion = \"0.1.0\"\nexec = [\"./plugin.sh\"]\nprotocol = [1, 1]\n\n[provides.task_step]\nx = \"X\"\n",
    )
    .unwrap();
    let (code, out, err) = output(
        &sb,
        &["plugin", "add", src.path().to_str().unwrap(), "--yes"],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("its manifest does not load: ")
            && err.contains("agent-env-plugin.toml:7:11: unknown field 'task_step'"),
        "{err}"
    );
    assert!(tree(&sb.plugins_dir()).is_empty(), "nothing copied: {out}");
}

/// A change that waits for the lock says so only once the wait has lasted a second, as a run's wait
/// for a bundle's locks does: changes started together take it from each other for moments. Read
/// then, the line names the pid the holder has written by then.
#[test]
fn only_a_wait_that_lasts_for_the_change_lock_is_said_and_it_names_the_holder() {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let sb = Sandbox::new();
    let locks = sb.dir().join("home/.local/state/agent-env/locks");
    std::fs::create_dir_all(&locks).unwrap();
    let digest = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(
            sb.plugins_dir().as_os_str().as_encoded_bytes(),
        ))
    };
    let path = locks.join(format!("plugin-{}.lock", &digest[..16]));
    let hold = || {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .mode(0o600)
            .open(&path)
            .unwrap();
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_eq!(rc, 0);
        file
    };
    let src = fixture_dir("folder-plugin");
    let add = ["plugin", "add", src.to_str().unwrap(), "--yes", "--wait"];

    let held = hold();
    let brief = sb
        .command(&add)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    drop(held);
    let out = brief.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("waiting for"), "{stderr}");

    // The holder writes its pid after the waiter started: the line, said a second in, names it.
    let held = hold();
    let mut waiting = sb
        .command(&add)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(&held, "4242").unwrap();
    let mut stderr = std::io::BufReader::new(waiting.stderr.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut first).unwrap();
    assert!(
        first.starts_with("waiting for another `agent-env plugin add` or `remove` to finish changing this environment (pid 4242 holds "),
        "{first}"
    );
    drop(held);
    let rest = std::io::read_to_string(stderr).unwrap();
    assert_eq!(waiting.wait().unwrap().code(), Some(0), "{first}{rest}");
    assert!(!rest.contains("waiting for"), "said once: {rest}");
}

/// A folder whose exec names its script first and a data file after it, both by absolute paths into
/// the folder: the warning advises the script by its relative path (only the first element is found
/// relative to the manifest) and leaves the data file for the plugin to find, never `./settings.json`.
#[test]
fn an_absolute_data_file_argument_is_not_advised_as_the_script() {
    let sb = Sandbox::new();
    let src = sb.dir().join("sd");
    let script = src.join("plugin.sh");
    let settings = src.join("settings.json");
    let src = edited_folder_plugin(&sb, "sd", |manifest, script_text| {
        (
            manifest.replace(
                "exec = [\"./plugin.sh\"]",
                &format!(
                    "exec = [\"{}\", \"--settings\", \"{}\"]",
                    script.display(),
                    settings.display()
                ),
            ),
            script_text.to_string(),
        )
    });
    std::fs::write(&settings, "{}").unwrap();
    let (code, out, err) = output(&sb, &["plugin", "add", src.to_str().unwrap(), "-y"]);
    assert_eq!(code, 0, "{out}{err}");
    let warning = format!(
        "warning: agentenv-folder-demo's exec names {} and {} by their absolute path in the folder being added ({}): the installed plugin uses those files where they are, not the copy in the plugins directory, so it depends on {} staying there (moved or removed, the plugin no longer starts; edited, it is refused as changed until `agent-env plugin approve agentenv-folder-demo`); to run the copy, name plugin.sh in exec by its path relative to the manifest (exec = [\"./plugin.sh\", …]), and have the plugin find settings.json relative to its own file (or through a setting or an environment variable) rather than by an absolute path: only the first element of exec is found relative to the manifest",
        script.display(),
        settings.display(),
        src.display(),
        src.display()
    );
    assert!(err.contains(&warning), "{err}");
    assert!(!err.contains("./settings.json"), "{err}");
}
