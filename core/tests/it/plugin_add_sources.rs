//! Black-box: `plugin add` from a local Python wheel and a Python project folder (pip into the managed
//! venv), a local crate (`cargo install --offline`), a local Go module (`go install`, no proxy), then
//! `plugin remove` of each. One test per source, since each builds something.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::plugins::Sandbox;
use crate::support::run::copy_dir;

fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/install")
        .join(name)
}

/// The real PATH, when it has `tool`: installers need their own tools too (a linker, a shell, pyenv shims).
/// What a command printed, stdout then stderr, for a message's assertion.
fn both(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn dir_of(tool: &str) -> Option<Vec<PathBuf>> {
    which::which(tool).ok()?;
    Some(std::env::split_paths(&std::env::var_os("PATH")?).collect())
}

fn add_ok(sb: &Sandbox, spec: &str, package: &str, line: &str) -> std::process::Output {
    add_ok_with(sb, &[spec], package, line)
}

/// `plugin add --yes` with `args` (the specs and any options) adds `package`, which prints `line`;
/// returns what the add printed.
fn add_ok_with(sb: &Sandbox, args: &[&str], package: &str, line: &str) -> std::process::Output {
    let mut command = vec!["plugin", "add", "--yes"];
    command.extend_from_slice(args);
    let out = sb.run(&command);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains(line), "{stdout}");
    assert!(stdout.ends_with("Added. `agent-env plugin list` shows every installed plugin.\n"));
    let report = sb.json(&["plugin", "show", package, "--json"], 0);
    assert_eq!(
        report["plugins"][0]["contributions"][0]["status"], "active",
        "{report:#}"
    );
    out
}

fn remove_ok(sb: &Sandbox, package: &str) {
    let out = sb.run(&["plugin", "remove", package, "--yes"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.ends_with("Removed.\n"), "{stdout}");
    let out = sb.run(&["plugin", "show", package, "--json"]);
    assert_eq!(out.status.code(), Some(1), "gone after remove");
}

#[test]
fn a_local_python_wheel_goes_into_the_managed_venv() {
    let Some(sb) = offline_pip_sandbox() else {
        eprintln!("skipped: no python3");
        return;
    };
    let wheel = make_wheel(&sb, "dist", None);
    let dry = sb.stdout(&["plugin", "add", &wheel, "--dry-run"], 0);
    assert!(dry.contains(" -m pip install "), "{dry}");
    assert!(!sb.plugins_dir().join(".python").exists());
    add_ok(
        &sb,
        &wheel,
        "agentenv-pydemo",
        "  agentenv-pydemo: task_steps py_step active\n",
    );
    assert!(sb
        .plugins_dir()
        .join(".python/share/agent-env/plugins/agentenv-pydemo.toml")
        .is_file());
    let again = sb.stdout(&["plugin", "add", &wheel, "--yes"], 0);
    assert!(again.contains("Nothing changed: "), "{again}");

    // Its code is pinned with its console script: an edit in site-packages is refused until approved.
    let installed = site_packages(&sb).join("agentenv_pydemo/__init__.py");
    let original = std::fs::read_to_string(&installed).unwrap();
    std::fs::write(&installed, format!("{original}\nTAMPERED = True\n")).unwrap();
    let check = sb.run(&["plugin", "check"]);
    let said = String::from_utf8_lossy(&check.stdout);
    assert!(said.contains("[tampered]"), "{said}");
    assert!(said.contains("agentenv_pydemo/__init__.py"), "{said}");
    sb.stdout(&["plugin", "approve", "agentenv-pydemo", "--yes"], 0);
    let check = sb.run(&["plugin", "check"]);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    std::fs::write(&installed, original).unwrap();
    sb.stdout(&["plugin", "approve", "agentenv-pydemo", "--yes"], 0);

    // The plugin's code changed under the same version: pip keeps the installed one unless asked.
    let edited = sb.dir().join("edited");
    copy_dir(&fixture_dir("py-plugin"), &edited);
    let module = edited.join("src/agentenv_pydemo/__init__.py");
    let mut code = std::fs::read_to_string(&module).unwrap();
    code.push_str("\nEDITED = True\n");
    std::fs::write(&module, code).unwrap();
    let out = Command::new("python3")
        .arg(fixture_dir("make_wheel.py"))
        .arg(&edited)
        .arg(sb.dir().join("dist-edited"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let edited_wheel = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let kept = sb.stdout(&["plugin", "add", &edited_wheel, "--yes"], 0);
    assert!(kept.contains("add it again with --reinstall"), "{kept}");
    // Added again: the package's files changed though its manifest did not.
    add_ok_with(
        &sb,
        &[&edited_wheel, "--reinstall"],
        "agentenv-pydemo",
        "  agentenv-pydemo: task_steps py_step active\n",
    );
    let module = site_packages(&sb).join("agentenv_pydemo/__init__.py");
    assert!(std::fs::read_to_string(module).unwrap().contains("EDITED"));
    remove_ok(&sb, "agentenv-pydemo");
}

/// A Python plugin an older agent-env pinned (its console script alone, under the unnormalised path
/// `…/share/agent-env/plugins/../../../bin/x`) still starts, but the report says its manifest and code
/// are not pinned and how to pin them; `approve` with nothing changed lists them as newly pinned, not
/// the console script twice, and pins them: an edit of its code is refused from then on.
#[test]
fn a_python_plugin_an_older_agent_env_pinned_is_warned_of_until_approved() {
    let Some(sb) = offline_pip_sandbox() else {
        eprintln!("skipped: no python3");
        return;
    };
    let wheel = make_wheel(&sb, "dist", None);
    add_ok(
        &sb,
        &wheel,
        "agentenv-pydemo",
        "  agentenv-pydemo: task_steps py_step active\n",
    );
    let venv = sb.plugins_dir().join(".python");
    let manifest = venv.join("share/agent-env/plugins/agentenv-pydemo.toml");
    let code = site_packages(&sb).join("agentenv_pydemo/__init__.py");
    let old_path = format!(
        "{}/share/agent-env/plugins/../../../bin/agentenv-pydemo",
        venv.display()
    );
    crate::plugin_pins::pin_as_an_older_agent_env(&sb.plugins_dir(), "agentenv-pydemo", &old_path);

    let warning = format!(
        "Warning: agentenv-pydemo 0.1.0 was pinned by an older agent-env, which pinned fewer of its files: 2 files it starts from are not pinned, so a change to them goes unnoticed ({}, {}); run `agent-env plugin approve agentenv-pydemo` to pin them as they are now [pins-outdated]",
        manifest.display(),
        code.display()
    );
    for args in [
        &["plugin", "check"][..],
        &["plugin", "list"],
        &["plugin", "show", "agentenv-pydemo"],
        &["plugin", "show", "agentenv-pydemo", "--json"],
    ] {
        let out = sb.run(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", both(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&warning), "{args:?}: {stderr}");
    }
    let check = sb.json(&["plugin", "check", "--json"], 0);
    assert_eq!(check["ok"], true, "{check:#}");
    assert!(
        check["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("[pins-outdated]")),
        "{check:#}"
    );
    // Its code edited: not pinned, so it still starts (the warning said so).
    let original = std::fs::read_to_string(&code).unwrap();
    std::fs::write(&code, format!("{original}\nEDITED = True\n")).unwrap();
    let report = sb.json(&["plugin", "show", "agentenv-pydemo", "--json"], 0);
    assert_eq!(
        report["plugins"][0]["contributions"][0]["status"], "active",
        "{report:#}"
    );
    std::fs::write(&code, &original).unwrap();

    // Nothing changed: two files newly pinned, none changed, the console script not listed.
    let asked = sb.run(&["plugin", "approve", "agentenv-pydemo"]);
    assert_eq!(asked.status.code(), Some(2), "{}", both(&asked));
    let stdout = String::from_utf8_lossy(&asked.stdout);
    assert!(
        stdout.starts_with("agentenv-pydemo 0.1.0: 2 files newly pinned, not pinned before (agent-env pins more of a package's files than it did):\n"),
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    assert!(!stdout.contains("bin/agentenv-pydemo"), "{stdout}");
    assert!(!stdout.contains("changed since"), "{stdout}");
    let approved = sb.json(
        &["plugin", "approve", "agentenv-pydemo", "--json", "--yes"],
        0,
    );
    let approved = &approved["approved"][0];
    assert_eq!(approved["changed"], serde_json::json!([]), "{approved:#}");
    assert_eq!(approved["unpinned"], serde_json::json!([]), "{approved:#}");
    assert_eq!(
        approved["newly_pinned"],
        serde_json::json!([manifest.display().to_string(), code.display().to_string()]),
        "{approved:#}"
    );

    // Pinned now: no warning, and an edit of its code is refused.
    let out = sb.run(&["plugin", "check"]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    assert!(!both(&out).contains("pins-outdated"), "{}", both(&out));
    std::fs::write(&code, format!("{original}\nTAMPERED = True\n")).unwrap();
    let out = sb.run(&["plugin", "check"]);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    assert!(both(&out).contains("[tampered]"), "{}", both(&out));
}

/// The managed venv's `site-packages`.
fn site_packages(sb: &Sandbox) -> PathBuf {
    std::fs::read_dir(sb.plugins_dir().join(".python/lib"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("site-packages")
}

/// pip knows a package by its distribution's name, which need not be the plugin's: `remove` takes
/// the plugin's name and uninstalls the distribution that installed its manifest.
#[test]
fn a_python_plugin_whose_distribution_has_another_name_is_removed_by_the_plugins_name() {
    let Some(sb) = offline_pip_sandbox() else {
        eprintln!("skipped: no python3");
        return;
    };
    let wheel = make_wheel(&sb, "dist", Some("acme-pydemo"));
    add_ok(
        &sb,
        &wheel,
        "agentenv-pydemo",
        "  agentenv-pydemo: task_steps py_step active\n",
    );
    let dry = sb.stdout(&["plugin", "remove", "agentenv-pydemo", "--dry-run"], 0);
    assert!(dry.contains("pip uninstall -y acme-pydemo"), "{dry}");
    assert!(dry.ends_with("Dry run: nothing was changed.\n"), "{dry}");
    remove_ok(&sb, "agentenv-pydemo");
}

/// The `py-plugin` fixture's wheel, built into `<sandbox>/<folder>` (with `distribution`, under
/// that name rather than the plugin's); its path.
fn make_wheel(sb: &Sandbox, folder: &str, distribution: Option<&str>) -> String {
    wheel_of(sb, folder, distribution.into_iter().collect())
}

/// The same wheel under `distribution`, without the plugin's manifest: a package that is no plugin.
fn make_wheel_without_manifest(sb: &Sandbox, folder: &str, distribution: &str) -> String {
    wheel_of(sb, folder, vec![distribution, "no-manifest"])
}

fn wheel_of(sb: &Sandbox, folder: &str, args: Vec<&str>) -> String {
    let out = Command::new("python3")
        .arg(fixture_dir("make_wheel.py"))
        .arg(fixture_dir("py-plugin"))
        .arg(sb.dir().join(folder))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A package kept by `add --keep` although it declares no manifest is removed by its name; a package
/// the managed venv itself needs is not.
#[test]
fn a_package_kept_without_a_manifest_can_be_removed() {
    let Some(sb) = offline_pip_sandbox() else {
        eprintln!("skipped: no python3");
        return;
    };
    let wheel = make_wheel_without_manifest(&sb, "dist", "acme-helpers");
    let kept = sb.run(&["plugin", "add", &wheel, "--yes", "--keep"]);
    let both = |out: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    assert!(
        both(&kept).contains("Kept as installed (--keep)."),
        "{}",
        both(&kept)
    );
    let dist_info = site_packages(&sb).join("acme_helpers-0.1.0.dist-info");
    assert!(dist_info.is_dir());
    let removed = sb.run(&["plugin", "remove", "Acme_Helpers", "--yes"]);
    assert_eq!(removed.status.code(), Some(0), "{}", both(&removed));
    assert!(
        both(&removed).contains(
            "note: acme-helpers is in agent-env's Python environment without an agent-env manifest"
        ),
        "{}",
        both(&removed)
    );
    assert!(!dist_info.exists());
    let refused = sb.run(&["plugin", "remove", "pip", "--yes"]);
    assert_eq!(refused.status.code(), Some(1), "{}", both(&refused));
    assert!(
        both(&refused).contains("pip is not a plugin: agent-env's Python environment needs it"),
        "{}",
        both(&refused)
    );
}

/// A sandbox whose pip finds nothing but what it is given (python3 on `PATH`, no index), or `None`
/// when there is no python3.
fn offline_pip_sandbox() -> Option<Sandbox> {
    let python = dir_of("python3")?;
    let mut sb = Sandbox::new();
    sb.path.extend(python);
    sb.set("PIP_NO_INDEX", "1")
        .set("PIP_DISABLE_PIP_VERSION_CHECK", "1");
    Some(sb)
}

/// The `py-project` fixture (a Python plugin project pip builds offline) copied to `<sandbox>/<folder>`,
/// where a test may edit it.
fn python_project(sb: &Sandbox, folder: &str) -> PathBuf {
    let project = sb.dir().join(folder);
    copy_dir(&fixture_dir("py-project"), &project);
    project
}

fn edit(file: &Path, change: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(file).unwrap();
    std::fs::write(file, change(text)).unwrap();
}

const PYPROJECT_LINE: &str = "  agentenv-pyproject: task_steps pyproject_step active\n";

#[test]
fn a_python_project_folder_added_again_changes_only_when_its_code_does() {
    let Some(sb) = offline_pip_sandbox() else {
        eprintln!("skipped: no python3");
        return;
    };
    let project = python_project(&sb, "project");
    let spec = project.to_str().unwrap();
    add_ok(&sb, spec, "agentenv-pyproject", PYPROJECT_LINE);

    // pip installs a folder afresh, rewriting the same code (and every bytecode cache, which
    // records its source's time): nothing changed, and there is no version to --reinstall past.
    let again = sb.stdout(&["plugin", "add", spec, "--yes"], 0);
    assert!(again.contains("\nNothing changed: "), "{again}");
    assert!(!again.contains("--reinstall"), "{again}");

    // Its code edited under the same version: added again, checked, the new code installed.
    let module = project.join("src/agentenv_pyproject/__init__.py");
    edit(&module, |code| code + "\nEDITED = True\n");
    add_ok(&sb, spec, "agentenv-pyproject", PYPROJECT_LINE);
    let installed = site_packages(&sb).join("agentenv_pyproject/__init__.py");
    assert!(std::fs::read_to_string(installed)
        .unwrap()
        .contains("EDITED"));

    // Its version bumped: the new version replaces the old one.
    edit(&project.join("pyproject.toml"), |text| {
        text.replace("version = \"0.1.0\"", "version = \"0.2.0\"")
    });
    add_ok(&sb, spec, "agentenv-pyproject", PYPROJECT_LINE);
    assert!(site_packages(&sb)
        .join("agentenv_pyproject-0.2.0.dist-info")
        .is_dir());
    assert!(!site_packages(&sb)
        .join("agentenv_pyproject-0.1.0.dist-info")
        .exists());
    let again = sb.stdout(&["plugin", "add", spec, "--yes"], 0);
    assert!(again.contains("\nNothing changed: "), "{again}");

    // Removed, then added again.
    remove_ok(&sb, "agentenv-pyproject");
    add_ok(&sb, spec, "agentenv-pyproject", PYPROJECT_LINE);
}

#[test]
fn pip_options_reach_the_pip_command() {
    // python3 makes the managed venv: the plan needs it on PATH.
    let Some(sb) = offline_pip_sandbox() else {
        eprintln!("skipped: no python3");
        return;
    };
    let dry = sb.stdout(
        &[
            "plugin",
            "add",
            "agentenv-somewhere",
            "--extra-index-url",
            "http://127.0.0.1:9/simple",
            "--reinstall",
            "--dry-run",
        ],
        0,
    );
    assert!(
        dry.contains(" install --no-input --extra-index-url http://127.0.0.1:9/simple --force-reinstall --no-deps agentenv-somewhere\n")
            && dry.contains(" install --no-input --extra-index-url http://127.0.0.1:9/simple agentenv-somewhere (only when "),
        "{dry}"
    );
    let out = sb.run(&[
        "plugin",
        "add",
        fixture_dir("folder-plugin").to_str().unwrap(),
        "--extra-index-url",
        "http://127.0.0.1:9/simple",
        "--dry-run",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--extra-index-url http://127.0.0.1:9/simple"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(1));

    // A private index's password is masked where the plan is shown, in words and in JSON.
    let shown = sb.run(&[
        "plugin",
        "add",
        "agentenv-somewhere",
        "--index-url",
        "http://alice:s3cr3tTOKEN@127.0.0.1:9/simple",
        "--dry-run",
        "--json",
    ]);
    let both = format!(
        "{}{}",
        String::from_utf8_lossy(&shown.stdout),
        String::from_utf8_lossy(&shown.stderr)
    );
    assert!(
        both.contains("http://alice:***@127.0.0.1:9/simple"),
        "{both}"
    );
    assert!(!both.contains("s3cr3tTOKEN"), "{both}");

    // However short: by its place in the URL, in words and in JSON.
    for json in [false, true] {
        let mut args = vec![
            "plugin",
            "add",
            "agentenv-somewhere",
            "--index-url",
            "http://alice:abc12@127.0.0.1:9/simple/",
            "--dry-run",
        ];
        if json {
            args.push("--json");
        }
        let shown = sb.run(&args);
        let both = format!(
            "{}{}",
            String::from_utf8_lossy(&shown.stdout),
            String::from_utf8_lossy(&shown.stderr)
        );
        assert!(
            both.contains("http://alice:***@127.0.0.1:9/simple/"),
            "{both}"
        );
        assert!(!both.contains("abc12"), "{both}");
    }

    // A token as the user name is masked too, and so is a refused URL's password.
    let token = sb.run(&[
        "plugin",
        "add",
        "agentenv-somewhere",
        "--index-url",
        "https://tok3nSECRET@127.0.0.1:9/simple",
        "--dry-run",
    ]);
    let both = format!(
        "{}{}",
        String::from_utf8_lossy(&token.stdout),
        String::from_utf8_lossy(&token.stderr)
    );
    assert!(both.contains("https://***@127.0.0.1:9/simple"), "{both}");
    let refused = sb.run(&[
        "plugin",
        "add",
        "x",
        "--extra-index-url",
        "u:s3cretPW@127.0.0.1:9/simple",
        "--dry-run",
    ]);
    let both = format!(
        "{}{}",
        String::from_utf8_lossy(&refused.stdout),
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(!both.contains("s3cretPW"), "{both}");

    // A URL pip could not read is refused before anything runs.
    let refused = sb.run(&[
        "plugin",
        "add",
        "agentenv-somewhere",
        "--index-url",
        "127.0.0.1:9/simple",
        "--dry-run",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--index-url '127.0.0.1:9/simple' is not an index pip can read"),
        "{stderr}"
    );
}

/// A sandbox whose `plugin add` can run cargo offline, with a cargo home of its own and this
/// machine's toolchain; none without cargo on `PATH`.
fn offline_cargo_sandbox() -> Option<Sandbox> {
    let cargo = dir_of("cargo")?;
    let mut sb = Sandbox::new();
    sb.path.extend(cargo);
    let rustup = std::env::var("RUSTUP_HOME")
        .unwrap_or_else(|_| format!("{}/.rustup", std::env::var("HOME").unwrap_or_default()));
    let home = sb.dir().join("cargo-home").display().to_string();
    sb.set("RUSTUP_HOME", &rustup)
        .set("CARGO_NET_OFFLINE", "true")
        .set("CARGO_HOME", &home);
    if let Ok(toolchain) = std::env::var("RUSTUP_TOOLCHAIN") {
        sb.set("RUSTUP_TOOLCHAIN", &toolchain);
    }
    Some(sb)
}

#[test]
fn a_local_crate_is_cargo_installed_and_its_manifest_written() {
    let Some(mut sb) = offline_cargo_sandbox() else {
        eprintln!("skipped: no cargo");
        return;
    };
    let target = sb.dir().join("cargo-target").display().to_string();
    sb.set("CARGO_TARGET_DIR", &target);
    // A copy, edited below.
    let src = sb.dir().join("rsdemo");
    copy_dir(&fixture_dir("rust-plugin"), &src);
    let added = add_ok(
        &sb,
        src.to_str().unwrap(),
        "agentenv-rsdemo",
        "  agentenv-rsdemo: task_steps rs_step active\n",
    );
    // agent-env finds the executable through the manifest it writes: cargo's advice to put its
    // folder on PATH would mislead.
    let stderr = String::from_utf8_lossy(&added.stderr);
    assert!(!stderr.contains("to your PATH"), "{stderr}");
    let manifest = std::fs::read_to_string(
        sb.plugins_dir()
            .join("agentenv-rsdemo/agent-env-plugin.toml"),
    )
    .unwrap();
    assert!(
        manifest.contains("exec = [\"../.cargo/bin/agentenv-rsdemo\"]"),
        "{manifest}"
    );
    // What an earlier install left in the package's folder (a folder plugin's executable, say)
    // goes when it is added again.
    let stale = sb.plugins_dir().join("agentenv-rsdemo/agentenv-rsdemo-old");
    std::fs::write(&stale, "an earlier install's executable").unwrap();
    // Its code edited under the same version: the rebuilt executable is the change, added again.
    edit(&src.join("src/main.rs"), |code| {
        code.replace(
            "let result = if answered",
            "let _edited = 1;\n        let result = if answered",
        )
        .replace("\"null\" } else", "\"{}\" } else")
    });
    add_ok(
        &sb,
        src.to_str().unwrap(),
        "agentenv-rsdemo",
        "  agentenv-rsdemo: task_steps rs_step active\n",
    );
    assert!(!stale.exists(), "the earlier install's file is left");
    let record = sb.plugins_dir().join(".cargo/.crates.toml");
    let listed = std::fs::read_to_string(&record).unwrap();
    assert!(listed.contains("agentenv-rsdemo"), "{listed}");
    remove_ok(&sb, "agentenv-rsdemo");
    assert!(!sb.plugins_dir().join(".cargo/bin/agentenv-rsdemo").exists());
    // cargo's record of what it installed no longer lists it.
    let listed = std::fs::read_to_string(&record).unwrap();
    assert!(!listed.contains("agentenv-rsdemo"), "{listed}");
}

#[test]
fn a_local_go_module_is_go_installed_into_its_plugin_folder() {
    let Some(go) = dir_of("go") else {
        eprintln!("skipped: no go");
        return;
    };
    let mut sb = Sandbox::new();
    sb.path.extend(go);
    // A build cache kept between runs under target/, so only the first run compiles the standard library.
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("install-go-cache");
    let gopath = sb.dir().join("gopath").display().to_string();
    sb.set("GOFLAGS", "-mod=mod")
        .set("GOPROXY", "off")
        .set("GOTOOLCHAIN", "local")
        .set("GOCACHE", cache.to_str().unwrap())
        .set("GOPATH", &gopath);
    let src = fixture_dir("go-plugin");
    add_ok(
        &sb,
        src.to_str().unwrap(),
        "agentenv-godemo",
        "  agentenv-godemo: task_steps go_step active\n",
    );
    let folder = sb.plugins_dir().join("agentenv-godemo");
    assert!(folder.join("agentenv-godemo").is_file());
    let leftovers: Vec<_> = std::fs::read_dir(sb.plugins_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".staging"))
        .collect();
    assert!(leftovers.is_empty(), "the staging folder is removed");
    remove_ok(&sb, "agentenv-godemo");

    // A module whose plugin sits beside a helper command: the plugin is installed, the helper said
    // and left out; the plugin's own folder is added alone with --installer go.
    let module = sb.dir().join("go-multi");
    let command = module.join("cmd/agentenv-godemo");
    std::fs::create_dir_all(&command).unwrap();
    std::fs::create_dir_all(module.join("cmd/helper")).unwrap();
    std::fs::copy(src.join("go.mod"), module.join("go.mod")).unwrap();
    std::fs::copy(src.join("main.go"), command.join("main.go")).unwrap();
    std::fs::write(
        module.join("cmd/helper/main.go"),
        "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"helper ready\") }\n",
    )
    .unwrap();
    let added = add_ok(
        &sb,
        module.to_str().unwrap(),
        "agentenv-godemo",
        "  agentenv-godemo: task_steps go_step active\n",
    );
    let said = String::from_utf8_lossy(&added.stderr);
    assert!(
        said.contains("note: the module also built helper, which is not installed"),
        "{said}"
    );
    assert!(!sb.plugins_dir().join("helper").exists());
    remove_ok(&sb, "agentenv-godemo");
    let added = add_ok_with(
        &sb,
        &[command.to_str().unwrap(), "--installer", "go"],
        "agentenv-godemo",
        "  agentenv-godemo: task_steps go_step active\n",
    );
    assert!(!String::from_utf8_lossy(&added.stderr).contains("helper"));
    remove_ok(&sb, "agentenv-godemo");
}

/// A package index of one wheel, served on loopback by Python's http.server (its folder listings are
/// the simple-index pages pip reads); stopped when dropped.
struct LocalIndex {
    server: std::process::Child,
    url: String,
}

impl LocalIndex {
    fn serving(wheel: &std::path::Path, project: &str, root: &std::path::Path) -> LocalIndex {
        let folder = root.join("simple").join(project);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(wheel, folder.join(wheel.file_name().unwrap())).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let server = Command::new("python3")
            .args([
                "-m",
                "http.server",
                "--bind",
                "127.0.0.1",
                &port.to_string(),
            ])
            .current_dir(root)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        LocalIndex {
            server,
            url: format!("http://127.0.0.1:{port}/simple/"),
        }
    }
}

impl Drop for LocalIndex {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

#[test]
fn a_python_plugin_installs_by_name_from_the_users_own_package_index() {
    let Some(python) = dir_of("python3") else {
        eprintln!("skipped: no python3");
        return;
    };
    let mut sb = Sandbox::new();
    sb.path.extend(python);
    sb.set("PIP_DISABLE_PIP_VERSION_CHECK", "1");
    let out = Command::new("python3")
        .arg(fixture_dir("make_wheel.py"))
        .arg(fixture_dir("py-plugin"))
        .arg(sb.dir().join("dist"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let wheel = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    let index = LocalIndex::serving(&wheel, "agentenv-pydemo", &sb.dir().join("index"));

    let dry = sb.stdout(
        &[
            "plugin",
            "add",
            "agentenv-pydemo",
            "--index-url",
            &index.url,
            "--dry-run",
        ],
        0,
    );
    assert!(
        dry.contains(&format!(
            " -m pip install --no-input --index-url {} agentenv-pydemo",
            index.url
        )),
        "{dry}"
    );
    let out = sb.run(&[
        "plugin",
        "add",
        "agentenv-pydemo",
        "--index-url",
        &index.url,
        "--yes",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("  agentenv-pydemo: task_steps py_step active\n"),
        "{stdout}"
    );

    // --index-url without a Python package to install is a mistake, said before anything runs.
    let src = sb.dir().join("folder-plugin");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("agent-env-plugin.toml"),
        "[plugin]\nname = \"agentenv-fp\"\nversion = \"1\"\nexec = [\"/bin/true\"]\nprotocol = [1, 1]\n[provides.envs]\nx = \"X\"\n",
    )
    .unwrap();
    let out = sb.run(&[
        "plugin",
        "add",
        src.to_str().unwrap(),
        "--index-url",
        &index.url,
        "--yes",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("it is where pip finds Python packages, and none of the specs is one"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Python library (no manifest) made from the `py-project` fixture at `<sandbox>/<folder>`: the
/// distribution `agentenv-pylib`, whose module `agentenv_pylib` holds `VALUE = 1`.
fn python_library(sb: &Sandbox, folder: &str) -> PathBuf {
    let library = python_project(sb, folder);
    std::fs::remove_file(library.join("agentenv-pyproject.toml")).unwrap();
    std::fs::remove_dir_all(library.join("src/agentenv_pyproject")).unwrap();
    std::fs::create_dir_all(library.join("src/agentenv_pylib")).unwrap();
    std::fs::write(
        library.join("src/agentenv_pylib/__init__.py"),
        "VALUE = 1\n",
    )
    .unwrap();
    edit(&library.join("pyproject.toml"), |text| {
        let without_scripts = text.split("[project.scripts]").next().unwrap().to_string();
        without_scripts.replace("\"agentenv-pyproject\"", "\"agentenv-pylib\"")
    });
    library
}

#[test]
fn a_python_project_whose_library_changed_is_added_again() {
    let Some(mut sb) = offline_pip_sandbox() else {
        eprintln!("skipped: no python3");
        return;
    };
    // pip keeps the wheel it built from a `NAME @ file://FOLDER` requirement in its cache and installs
    // that one again, however the folder changed; without a cache it builds the folder afresh.
    sb.set("PIP_NO_CACHE_DIR", "1");
    let library = python_library(&sb, "library");
    let project = python_project(&sb, "project");
    let requirement = format!("\"agentenv-pylib @ file://{}\"", library.display());
    edit(&project.join("pyproject.toml"), |text| {
        text.replace(
            "dependencies = []",
            &format!("dependencies = [{requirement}]"),
        )
    });
    let spec = project.to_str().unwrap();
    add_ok(&sb, spec, "agentenv-pyproject", PYPROJECT_LINE);
    let again = sb.stdout(&["plugin", "add", spec, "--yes"], 0);
    assert!(again.contains("\nNothing changed: "), "{again}");

    // Only the library changed, so none of the plugin's own files did; the plugin that imports it is
    // checked again, and the change stays.
    std::fs::write(
        library.join("src/agentenv_pylib/__init__.py"),
        "VALUE = 2\n",
    )
    .unwrap();
    add_ok(&sb, spec, "agentenv-pyproject", PYPROJECT_LINE);
    let installed = site_packages(&sb).join("agentenv_pylib/__init__.py");
    assert_eq!(std::fs::read_to_string(installed).unwrap(), "VALUE = 2\n");
}

/// What an add cannot do is said before anything runs, in a dry run too: an installer missing from
/// `PATH` (the sandbox's holds neither go nor cargo), and the managed Python environment left broken
/// by the Python it was made with going away.
#[test]
fn a_missing_installer_and_a_broken_python_environment_are_said_before_anything_runs() {
    let sb = Sandbox::new();
    let module = sb.dir().join("gomod");
    std::fs::create_dir_all(&module).unwrap();
    std::fs::write(module.join("go.mod"), "module example.com/x\n\ngo 1.22\n").unwrap();
    let out = sb.run(&["plugin", "add", module.to_str().unwrap(), "--dry-run"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("go is not on PATH: a Go module is built with `go install`"),
        "{stderr}"
    );

    let bin = sb.plugins_dir().join(".python/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink("/nonexistent/python3", bin.join("python")).unwrap();
    let out = sb.run(&["plugin", "add", "agentenv-x", "--dry-run"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is broken: its interpreter /nonexistent/python3 is gone"),
        "{stderr}"
    );
}

/// A bare word is a package's name even where a folder of that name is (run from the folder that
/// holds a plugin's source, `plugin add my-plugin` means the published one); a note says how to
/// add the folder instead.
#[test]
fn a_bare_word_is_a_package_name_even_beside_a_folder_of_that_name() {
    let Some(sb) = offline_pip_sandbox() else {
        eprintln!("skipped: no python3");
        return;
    };
    let folder = sb.dir().join("work/agentenv-local");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("agent-env-plugin.toml"),
        "[plugin]\nname = \"agentenv-local\"\nversion = \"1\"\nexec = [\"./x\"]\nprotocol = [1, 1]\n",
    )
    .unwrap();
    let out = sb.run(&["plugin", "add", "agentenv-local", "--dry-run"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("pip install --no-input agentenv-local"),
        "{stdout}"
    );
    assert!(
        stderr.contains("note: agentenv-local is read as a package's name; a folder of that name is here too: write ./agentenv-local to add the folder"),
        "{stderr}"
    );
    let out = sb.run(&["plugin", "add", "./agentenv-local", "--dry-run"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Will copy"));
}

/// A project that needs the Python SDK by name, where pip uses no index (`PIP_NO_INDEX`): the failure
/// says how to install the SDK's wheel with it, which works offline.
#[test]
fn a_python_project_needing_the_sdk_pip_cannot_find_is_told_where_to_get_it() {
    let sb = offline_pip_sandbox().expect("python3 on PATH");
    let project = python_project(&sb, "needs-sdk");
    edit(&project.join("pyproject.toml"), |text| {
        text.replace(
            "dependencies = []",
            "dependencies = [\"agent-env-plugin-sdk>=0.1.0\"]",
        )
    });
    let out = sb.run(&["plugin", "add", project.to_str().unwrap(), "--yes"]);
    let said = both(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("problem: the installer failed"), "{said}");
    assert!(
        said.contains(&format!(
            "hint: {0} needs the Python SDK (agent-env-plugin-sdk), and pip looked in no index (PIP_NO_INDEX is set): install the SDK's wheel with it, `agent-env plugin add PATH/TO/agent_env_plugin_sdk-VERSION-py3-none-any.whl {0}`",
            project.display()
        )),
        "{said}"
    );
}

/// Under `--json`, stdout is the one document: pip's lines (it writes its progress to stdout) go to
/// stderr, for `add` and `remove` both.
#[test]
fn a_python_projects_add_and_remove_under_json_keep_pips_lines_off_stdout() {
    let sb = offline_pip_sandbox().expect("python3 on PATH");
    let project = python_project(&sb, "json-project");
    let spec = project.to_str().unwrap();
    for args in [
        vec!["plugin", "add", spec, "--yes", "--json"],
        vec!["plugin", "remove", "agentenv-pyproject", "--yes", "--json"],
    ] {
        let out = sb.run(&args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}\n{stdout}{stderr}");
        let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
            panic!("{args:?}: stdout is not one JSON document ({e}):\n{stdout}")
        });
        assert_eq!(doc["format_version"], 1, "{stdout}");
        assert!(
            stderr.contains("agentenv-pyproject") || stderr.contains("agentenv_pyproject"),
            "pip's lines belong on stderr: {stderr}"
        );
    }
}

/// A package index on loopback that answers 401 to every request without the user `alice` and the
/// password `right-pass` (and 404 to one with them); stopped when dropped.
struct RefusingIndex {
    server: std::process::Child,
    port: u16,
}

impl RefusingIndex {
    const SERVER: &'static str = r#"
import base64, http.server, sys
good = "Basic " + base64.b64encode(b"alice:right-pass").decode()
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.headers.get("Authorization") != good:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="index"')
        else:
            self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

    fn start() -> RefusingIndex {
        let mut server = Command::new("python3")
            .args(["-c", Self::SERVER])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(server.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        RefusingIndex {
            server,
            port: line.trim().parse().unwrap(),
        }
    }
}

impl Drop for RefusingIndex {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// pip runs without prompts, and an index it could not use is named with the cause: one that refused
/// the credentials in its URL, one that wants credentials (pip says neither without a prompt: the
/// index is asked), one that is not there. A short password shows masked throughout.
#[test]
fn a_private_index_that_refuses_pip_or_is_down_is_named_with_the_cause() {
    let mut sb = offline_pip_sandbox().expect("python3 on PATH");
    // This test's pip looks at its index.
    sb.env.retain(|(k, _)| k != "PIP_NO_INDEX");
    sb.set("PIP_RETRIES", "0");
    let project = python_project(&sb, "needs-sdk");
    edit(&project.join("pyproject.toml"), |text| {
        text.replace(
            "dependencies = []",
            "dependencies = [\"agent-env-plugin-sdk>=0.1.0\"]",
        )
    });
    let index = RefusingIndex::start();
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cases = [
        (
            format!("http://alice:WRONG@127.0.0.1:{}/simple/", index.port),
            format!(
                "hint: http://alice:***@127.0.0.1:{}/simple/ refused the credentials in its URL (401 Unauthorized)",
                index.port
            ),
        ),
        (
            format!("http://127.0.0.1:{}/simple/", index.port),
            format!(
                "hint: http://127.0.0.1:{}/simple/ needs credentials (401 Unauthorized): put them in the URL (https://USER:TOKEN@host/...), they are masked",
                index.port
            ),
        ),
        (
            format!("http://127.0.0.1:{dead}/simple/"),
            format!(
                "hint: pip could not reach http://127.0.0.1:{dead}/simple/ (connection refused): check the address, or that it is up"
            ),
        ),
    ];
    for (url, hint) in cases {
        let out = sb.run(&[
            "plugin",
            "add",
            project.to_str().unwrap(),
            "--index-url",
            &url,
            "-y",
        ]);
        let said = both(&out);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(
            said.contains(" -m pip install --no-input --index-url "),
            "{said}"
        );
        assert!(said.contains(&hint), "{hint}\n{said}");
        assert!(
            !said.contains("WRONG") && !said.contains("serves no setuptools"),
            "{said}"
        );
    }
    // A CI job names its registry to pip in PIP_INDEX_URL, not on the command line: that index is
    // asked too.
    sb.set(
        "PIP_INDEX_URL",
        &format!("http://127.0.0.1:{}/simple/", index.port),
    );
    let out = sb.run(&["plugin", "add", project.to_str().unwrap(), "-y"]);
    let said = both(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "hint: http://127.0.0.1:{}/simple/ needs credentials (401 Unauthorized)",
            index.port
        )),
        "{said}"
    );
}

/// A crate made without `--sdk` needs the Rust SDK by name, which cargo cannot find on crates.io:
/// the failure says where to get it.
#[test]
fn a_rust_crate_needing_the_sdk_cargo_cannot_find_is_told_where_to_get_it() {
    let Some(sb) = offline_cargo_sandbox() else {
        eprintln!("skipped: no cargo");
        return;
    };
    let src = sb.dir().join("needs-sdk");
    copy_dir(&fixture_dir("rust-plugin"), &src);
    edit(&src.join("Cargo.toml"), |text| {
        format!("{text}\n[dependencies]\nagent-env-plugin-sdk = \"0.10.0\"\n")
    });
    let out = sb.run(&["plugin", "add", src.to_str().unwrap(), "-y"]);
    let said = both(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "hint: {} depends on the Rust SDK by name (agent-env-plugin-sdk), which is not on crates.io: build it against a checkout of agent-env",
            src.display()
        )),
        "{said}"
    );
}

/// A Go install shows the settings it inherits that decide where its modules come from, a proxy's
/// credentials masked.
#[test]
fn a_go_installs_plan_shows_its_module_proxy() {
    let Some(go) = dir_of("go") else {
        eprintln!("skipped: no go");
        return;
    };
    let mut sb = Sandbox::new();
    sb.path.extend(go);
    sb.set("GOPROXY", "https://me:tk1@proxy.example.internal,direct")
        .set("GONOSUMDB", "github.com/agent-env/*");
    let dry = sb.stdout(
        &[
            "plugin",
            "add",
            fixture_dir("go-plugin").to_str().unwrap(),
            "--dry-run",
        ],
        0,
    );
    assert!(
        dry.contains("Will run: cd ")
            && dry.contains(" && 'GOPROXY=https://me:***@proxy.example.internal,direct' 'GONOSUMDB=github.com/agent-env/*' GOBIN="),
        "{dry}"
    );
    assert!(!dry.contains("tk1"), "{dry}");
}

/// `--installer` naming one of the Python agent-env's installers is still clap's usage error (exit
/// 2, the installers there are listed), with a tip saying what installs a Python plugin here; any
/// other value gets clap's error alone.
#[test]
fn an_installer_of_the_python_agent_env_is_told_what_installs_python_plugins_here() {
    let sb = Sandbox::new();
    for original in ["uv-tool", "pipx", "uv-project"] {
        let out = sb.run(&["plugin", "add", "agentenv-x", "--installer", original]);
        assert_eq!(out.status.code(), Some(2), "{}", both(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with(&format!("error: invalid value '{original}' for '--installer <INSTALLER>'\n  [possible values: folder, pip, cargo, go]\n")),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!("  tip: {original} is an installer of the Python agent-env's: here pip installs a Python plugin into a virtual environment agent-env manages (.python in the plugins directory), not into one of yours; ")),
            "{stderr}"
        );
        assert!(stderr.contains("(or give --installer pip)"), "{stderr}");
        assert!(out.stdout.is_empty(), "{}", both(&out));
    }
    let other = sb.run(&["plugin", "add", "agentenv-x", "--installer", "npm"]);
    assert_eq!(other.status.code(), Some(2), "{}", both(&other));
    assert!(
        !String::from_utf8_lossy(&other.stderr).contains("tip:"),
        "{}",
        both(&other)
    );
}
