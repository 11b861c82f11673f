//! Black-box: `plugin remove` refuses while something still uses the package (another plugin requires it,
//! the config names what only it provides, stored documents use its types), and `--force` removes anyway.

use crate::support::plugins::Sandbox;

const REFUSED: &str = "Error: not removed; fix the above, or pass --force to remove anyway\n";

fn grader(sb: &Sandbox) {
    sb.plugin_dir_manifest(
        "agentenv-grader",
        "[plugin]\nname = \"agentenv-grader\"\nversion = \"1.0\"\nexec = [\"./x\"]\nprotocol = [1, 1]\n\
         [provides.task_steps]\ngrade_essay = \"GradeEssay\"\n\
         [provides.sandbox_providers]\nfirecracker = \"Firecracker\"\n\
         [provides.stores]\nEssayStore = \"document\"\n",
    );
}

fn run(sb: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let out = sb.run(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn config(sb: &Sandbox, text: &str) {
    let dir = sb.dir().join("work/.agentenv");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

#[test]
fn another_plugin_requiring_it_blocks_until_forced() {
    let sb = Sandbox::new();
    grader(&sb);
    sb.plugin_dir_manifest(
        "agentenv-essays",
        "[plugin]\nname = \"agentenv-essays\"\nversion = \"1.0\"\nexec = [\"./x\"]\nprotocol = [1, 1]\n\
         requires = { agentenv_grader = \">=1.0\" }\n",
    );
    let (code, out, err) = run(&sb, &["plugin", "remove", "agentenv-grader", "--yes"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        err,
        format!("blocked: agentenv-grader is required by agentenv-essays\n{REFUSED}")
    );
    assert!(sb.plugins_dir().join("agentenv-grader").is_dir());
    // A script reads what blocks it among the problems the error sends it to.
    let (code, out, _) = run(
        &sb,
        &["plugin", "remove", "agentenv-grader", "--yes", "--json"],
    );
    assert_eq!(code, 1, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["outcome"], "refused", "{doc:#}");
    assert_eq!(
        doc["problems"],
        serde_json::json!(["agentenv-grader is required by agentenv-essays"]),
        "{doc:#}"
    );
    // Removing several, each blocker names the one it is about.
    sb.plugin_dir_manifest(
        "agentenv-spare",
        "[plugin]\nname = \"agentenv-spare\"\nversion = \"1.0\"\nexec = [\"./x\"]\nprotocol = [1, 1]\n",
    );
    let (code, _, err) = run(
        &sb,
        &[
            "plugin",
            "remove",
            "agentenv-spare",
            "agentenv-grader",
            "--yes",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("blocked: agentenv-grader: agentenv-grader is required by agentenv-essays"),
        "{err}"
    );
    // Removing both together is not blocked by each other.
    let (code, out, err) = run(
        &sb,
        &[
            "plugin",
            "remove",
            "agentenv-grader",
            "agentenv-essays",
            "--dry-run",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = run(
        &sb,
        &["plugin", "remove", "agentenv-grader", "--force", "--yes"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("warning: agentenv-grader is required by agentenv-essays\n"),
        "{err}"
    );
    assert!(out.ends_with("Removed.\n"), "{out}");
    assert!(!sb.plugins_dir().join("agentenv-grader").exists());
}

#[test]
fn config_naming_what_only_it_provides_blocks_and_its_table_stays() {
    let sb = Sandbox::new();
    grader(&sb);
    let text = "[sandbox]\ndefault = \"local,firecracker\"\n\
                [sandbox.providers.firecracker]\nimpl = \"agentenv_grader:Firecracker\"\n\
                [stores.document]\nimpl = \"agentenv-grader:EssayStore\"\n\
                [envs]\nimpls = [\"agentenv-grader:EssayEnv\"]\n\
                [runner]\nimpl = \"agentenv-grader:Runner\"\n\
                [plugins.agentenv-grader]\nrubric = \"strict\"\n";
    config(&sb, text);
    let (code, refused_out, err) = run(&sb, &["plugin", "remove", "agentenv-grader", "--yes"]);
    assert_eq!(code, 1);
    // A refused removal says nothing of what a removal leaves behind.
    assert!(!refused_out.contains("stays in the file"), "{refused_out}");
    for line in [
        "blocked: [sandbox] default = 'local,firecracker' names its sandbox provider\n",
        "blocked: [sandbox.providers.firecracker] configures its provider\n",
        "blocked: [sandbox.providers.firecracker] impl 'agentenv_grader:Firecracker' is from it\n",
        "blocked: [stores.document] impl 'agentenv-grader:EssayStore' is from it\n",
        "blocked: [envs] impls names 'agentenv-grader:EssayEnv' from it\n",
    ] {
        assert!(err.contains(line), "missing {line:?} in\n{err}");
    }
    assert!(err.ends_with(REFUSED), "{err}");
    // Nothing reads [runner], so naming the package there blocks nothing.
    assert!(!err.contains("[runner]"), "{err}");
    // A document has no lines above its error: the error names what blocks the removal itself.
    let (code, out, err) = run(
        &sb,
        &["plugin", "remove", "agentenv-grader", "--dry-run", "--json"],
    );
    assert_eq!(code, 1, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["outcome"], "refused", "{doc:#}");
    let error = doc["error"].as_str().unwrap();
    assert!(!error.contains("above"), "{doc:#}");
    assert!(
        error.starts_with("not removed while still in use ("),
        "{doc:#}"
    );
    assert!(
        error.contains("[stores.document] impl 'agentenv-grader:EssayStore' is from it"),
        "{doc:#}"
    );
    assert!(
        error.ends_with("); change what uses it, or pass --force to remove anyway"),
        "{doc:#}"
    );
    for problem in doc["problems"].as_array().unwrap() {
        assert!(error.contains(problem.as_str().unwrap()), "{doc:#}");
    }
    assert_eq!(err, format!("Error: {error}\n"));
    let (code, out, _) = run(
        &sb,
        &["plugin", "remove", "agentenv-grader", "--force", "--yes"],
    );
    assert_eq!(code, 0);
    assert!(
        out.contains("[plugins.agentenv-grader] table, if any, stays in the file"),
        "{out}"
    );
    let after = std::fs::read_to_string(sb.dir().join("work/.agentenv/config.toml")).unwrap();
    assert_eq!(after, text, "remove never edits the config");
}

/// Writes task documents `(key, id, step type)` into the local document store `db` (`local.db`: what bundle
/// runs recorded; `documents.db`: what `task put` stored).
fn stored_tasks(sb: &Sandbox, db: &str, tasks: &[(&str, &str, &str)]) {
    let dir = sb.dir().join("home/.local/state/agent-env/document_store");
    std::fs::create_dir_all(&dir).unwrap();
    let db = rusqlite::Connection::open(dir.join(db)).unwrap();
    db.execute_batch("CREATE TABLE docs_tasks (id TEXT PRIMARY KEY, doc TEXT NOT NULL);")
        .unwrap();
    for (key, id, ty) in tasks {
        let doc = format!(r#"{{"id":"{id}","steps":[{{"type":"{ty}"}}]}}"#);
        db.execute(
            "INSERT INTO docs_tasks (id, doc) VALUES (?1, ?2)",
            [key, &doc.as_str()],
        )
        .unwrap();
    }
}

#[test]
fn stored_tasks_using_its_step_types_block() {
    let sb = Sandbox::new();
    grader(&sb);
    stored_tasks(
        &sb,
        "documents.db",
        &[
            ("a1", "a", "grade_essay"),
            ("b1", "b", "grade_essay"),
            ("b2", "b", "grade_essay"),
            ("c1", "c", "other"),
            ("d1", "d", "grade_essay"),
        ],
    );
    let (code, _, err) = run(&sb, &["plugin", "remove", "agentenv-grader", "--yes"]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!("blocked: 3 stored tasks (4 versions) use its task step types (grade_essay): a, b (2 versions), d; removing it leaves them stored, but unable to run until a plugin provides grade_essay\n{REFUSED}")
    );
}

#[test]
fn tasks_bundle_runs_recorded_are_warned_of_not_blockers() {
    let sb = Sandbox::new();
    grader(&sb);
    // No command deletes these, and the bundle folder, not the record, is what runs again.
    stored_tasks(
        &sb,
        "local.db",
        &[
            ("a1", "@local/tmp/qa/wcb/a", "grade_essay"),
            ("c1", "@local/tmp/qa/wcb/c", "other"),
        ],
    );
    let (code, out, err) = run(&sb, &["plugin", "remove", "agentenv-grader", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        err,
        "warning: 1 stored task recorded by bundle runs uses its task step types (grade_essay): @local/tmp/qa/wcb/a; removing it leaves it stored, but unable to run until a plugin provides grade_essay\n"
    );
    assert!(out.ends_with("Removed.\n"), "{out}");
    assert!(!sb.plugins_dir().join("agentenv-grader").exists());
}

/// A local.db cut to 0 bytes beside its write-ahead log is not opened to look for uses (SQLite
/// would throw the log away, where its records may be left): the removal says it was not checked,
/// and both files stay as they were.
#[test]
fn an_emptied_local_store_is_not_opened_to_check_its_uses() {
    let sb = Sandbox::new();
    grader(&sb);
    let dir = sb.dir().join("home/.local/state/agent-env/document_store");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("local.db"), "").unwrap();
    std::fs::write(dir.join("local.db-wal"), vec![7u8; 4096]).unwrap();
    let (code, out, err) = run(&sb, &["plugin", "remove", "agentenv-grader", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("local.db is empty (0 bytes), so stored tasks were not checked"),
        "{err}"
    );
    assert_eq!(std::fs::metadata(dir.join("local.db")).unwrap().len(), 0);
    assert_eq!(
        std::fs::read(dir.join("local.db-wal")).unwrap(),
        vec![7u8; 4096]
    );
}

#[test]
fn what_is_not_a_plugin_here_is_refused() {
    let sb = Sandbox::new();
    let (code, _, err) = run(&sb, &["plugin", "remove", "agentenv-nothing", "--yes"]);
    assert_eq!(
        (code, err.as_str()),
        (
            1,
            "Error: no installed plugin package named 'agentenv-nothing' (installed: none)\n"
        )
    );
    let (code, _, err) = run(&sb, &["plugin", "remove", "agentenv_framework", "--yes"]);
    assert_eq!(
        (code, err.as_str()),
        (1, "Error: agentenv_framework is agent-env itself; uninstall it with the installer that owns it\n")
    );
    sb.path_manifest(
        "elsewhere",
        "[plugin]\nname = \"elsewhere\"\nversion = \"1\"\nexec = [\"x\"]\nprotocol = [1, 1]\n",
    );
    let (code, _, err) = run(&sb, &["plugin", "remove", "elsewhere", "--yes"]);
    assert_eq!(code, 1);
    assert!(err.contains("was not installed by agent-env"), "{err}");
}

#[test]
fn a_plugin_whose_manifest_does_not_load_can_still_be_removed() {
    let sb = Sandbox::new();
    // `exce` for `exec`: the manifest no longer parses, so the package provides nothing.
    sb.plugin_dir_manifest(
        "agentenv-typo",
        "[plugin]\nname = \"agentenv-typo\"\nversion = \"0.1.0\"\nexce = [\"./x\"]\nprotocol = [1, 1]\n",
    );
    let (code, out, err) = run(&sb, &["plugin", "remove", "agentenv_typo", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.starts_with("note: agentenv-typo's manifest does not load ("),
        "{err}"
    );
    assert!(
        err.contains("so nothing it provides is in effect and nothing that names it was checked"),
        "{err}"
    );
    assert!(out.ends_with("Removed.\n"), "{out}");
    assert!(!sb.plugins_dir().join("agentenv-typo").exists());
}

#[test]
fn the_note_about_the_configs_table_needs_a_config() {
    let sb = Sandbox::new();
    grader(&sb);
    let (code, out, err) = run(&sb, &["plugin", "remove", "agentenv-grader", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("table, if any"), "{out}");
}
