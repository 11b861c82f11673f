//! Black-box: `plugin new` refuses, as a bad value (exit 2), a name its project could not use, and
//! writes nothing; the name's checks themselves are unit tests of `scaffold::names`. With `--json`
//! it says what it wrote as one document.

use crate::support::run::Sandboxed;

#[test]
fn a_name_the_project_could_not_use_is_a_bad_value_and_writes_nothing() {
    let s = Sandboxed::new();
    for (name, lang, kind, why) in [
        (
            "agentenv-class",
            "python",
            "step",
            "'class' is a Python keyword, and the code names a module or function after it; choose a longer name, such as agentenv-class-plugin",
        ),
        (
            "agentenv-2fast",
            "rust",
            "step",
            "the part after 'agentenv-' must start with a letter",
        ),
        (
            "agentenv-run",
            "go",
            "cli",
            "'agent-env run' is one of agent-env's own commands, so the plugin's command would be skipped",
        ),
        ("My-Plugin", "go", "step", "it must start with a lowercase letter"),
    ] {
        let r = s.run(&["plugin", "new", name, "--lang", lang, "--kind", kind]);
        assert_eq!(r.code, 2, "{name}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr
                .starts_with(&format!("Error: '{name}' cannot be a plugin's package name: ")),
            "{name}: {}",
            r.stderr
        );
        assert!(r.stderr.contains(why), "{name}: {}", r.stderr);
        assert!(!s.home().join(name).exists(), "{name}: a folder was written");
    }
    let r = s.run(&["plugin", "new", "agentenv-class", "--lang", "rust"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(s.home().join("agentenv-class/Cargo.toml").is_file());
}

#[test]
fn without_sdk_it_says_before_the_next_steps_that_the_sdk_comes_from_the_teams_own_registry() {
    let s = Sandboxed::new();
    for (lang, registry, public) in [
        (
            "python",
            "your team's own package index",
            "it is not on PyPI",
        ),
        (
            "go",
            "your team's own Go module proxy",
            "the public Go module proxy does not serve it",
        ),
        ("rust", "your team's own Cargo registry", "crates.io"),
    ] {
        let name = format!("agentenv-sdk-{lang}");
        let r = s.run(&["plugin", "new", &name, "--lang", lang]);
        assert_eq!(r.code, 0, "{lang}: {}{}", r.stdout, r.stderr);
        let said = r
            .stdout
            .find(&format!("Its SDK installs by name from {registry}"))
            .unwrap_or_else(|| panic!("{lang}: {}", r.stdout));
        let next = r.stdout.find("\nNext: ").unwrap();
        assert!(
            said < next,
            "{lang}: said after the commands that need it: {}",
            r.stdout
        );
        for words in [public, "publish it there", "--sdk CHECKOUT"] {
            assert!(
                r.stdout.contains(words),
                "{lang}: no {words:?} in {}",
                r.stdout
            );
        }
        // The project's README says the same.
        let readme = std::fs::read_to_string(s.home().join(&name).join("README.md")).unwrap();
        assert!(readme.contains(registry), "{lang}: {readme}");
    }
}

/// The two command lines `plugin new` ends with work pasted in order: the first goes into the project's
/// folder, so the second adds `.`, not the folder's path from where the shell was.
#[test]
fn the_next_steps_work_pasted_in_order() {
    let s = Sandboxed::new();
    let r = s.run(&["plugin", "new", "agentenv-notes-doc", "--lang", "rust"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let next = r
        .stdout
        .find("\nNext: cd ./agentenv-notes-doc && ")
        .unwrap();
    let then = r
        .stdout
        .find("\nThen: agent-env plugin add . -y && agent-env plugin verify agentenv-notes-doc\n")
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(next < then, "{}", r.stdout);
}

/// A refused name is given one example of a name that would do, never two.
#[test]
fn a_refused_name_gets_one_example() {
    let s = Sandboxed::new();
    for args in [
        &[
            "pydoc", "--lang", "python", "--kind", "store", "--store", "document",
        ][..],
        &["agentenv-run", "--lang", "go", "--kind", "cli"][..],
        &["My-Plugin", "--lang", "go"][..],
    ] {
        let r = s.run(&[&["plugin", "new"][..], args].concat());
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        let examples = r.stderr.matches("such as ").count() + r.stderr.matches("e.g. ").count();
        assert_eq!(examples, 1, "{args:?}: {}", r.stderr);
    }
    let r = s.run(&[
        "plugin", "new", "pydoc", "--lang", "python", "--kind", "store", "--store", "document",
    ]);
    assert!(
        r.stderr
            .ends_with("; choose a longer name, such as pydoc-plugin\n"),
        "{}",
        r.stderr
    );
}

/// `--json`: one document naming the project, the folder written, its files and the commands to run
/// next, one a command; a name it cannot use prints the error document (exit 2).
#[test]
fn plugin_new_answers_in_json_for_a_script() {
    let s = Sandboxed::new();
    let r = s.run(&[
        "plugin",
        "new",
        "agentenv-json-store",
        "--lang",
        "python",
        "--kind",
        "store",
        "--store",
        "object",
        "--dir",
        "proj",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.both());
    let doc: serde_json::Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.both()));
    let mut keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "files",
            "folder",
            "format_version",
            "kind",
            "language",
            "name",
            "next",
            "notes",
            "path",
            "sdk",
            "store"
        ],
        "{doc}"
    );
    assert_eq!(doc["format_version"], 1);
    assert_eq!(doc["name"], "agentenv-json-store");
    assert_eq!(doc["language"], "python");
    assert_eq!(doc["kind"], "store");
    assert_eq!(doc["store"], "object");
    assert_eq!(doc["folder"], "proj");
    let path = std::fs::canonicalize(s.home().join("proj")).unwrap();
    assert_eq!(doc["path"], path.to_str().unwrap());
    assert_eq!(doc["sdk"], "registry");
    let files = doc["files"].as_array().unwrap();
    assert!(files.iter().any(|f| f == "README.md"), "{doc}");
    for file in files {
        assert!(
            s.home().join("proj").join(file.as_str().unwrap()).is_file(),
            "{file}"
        );
    }
    assert!(
        doc["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("Its SDK installs by name from your team's own package index"),
        "{doc}"
    );
    assert_eq!(
        doc["next"],
        serde_json::json!([
            "cd ./proj",
            "python3 -m venv .venv",
            ".venv/bin/pip install -e '.[test]'",
            ".venv/bin/python -m pytest",
            "agent-env plugin add . -y",
            "agent-env plugin verify agentenv-json-store"
        ])
    );

    let refused = s.run(&["plugin", "new", "My-Plugin", "--lang", "go", "--json"]);
    assert_eq!(refused.code, 2, "{}", refused.both());
    let doc: serde_json::Value =
        serde_json::from_str(&refused.stdout).unwrap_or_else(|e| panic!("{e}: {}", refused.both()));
    assert_eq!(doc["status"], "error", "{doc}");
    assert_eq!(doc["exit_code"], 2, "{doc}");
    assert!(
        doc["error"]
            .as_str()
            .unwrap()
            .starts_with("'My-Plugin' cannot be a plugin's package name: "),
        "{doc}"
    );
    assert!(!s.home().join("My-Plugin").exists());
}

/// A document store project in Go or Python tests itself by running the kit inside agent-env, which it
/// skips without agent-env: `plugin new` says so, so a green test that tested nothing is not a surprise.
#[test]
fn a_document_store_project_says_its_test_needs_agent_env() {
    let s = Sandboxed::new();
    for lang in ["go", "python"] {
        let name = format!("agentenv-doc-{lang}");
        let r = s.run(&[
            "plugin", "new", &name, "--lang", lang, "--kind", "store", "--store", "document",
        ]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        let note = r
            .stdout
            .find("put agent-env on PATH or set AGENT_ENV_BIN")
            .unwrap_or_else(|| panic!("{}", r.stdout));
        assert!(note < r.stdout.find("\nNext: ").unwrap(), "{}", r.stdout);
    }
    let r = s.run(&["plugin", "new", "agentenv-steps", "--lang", "go"]);
    assert!(!r.stdout.contains("AGENT_ENV_BIN"), "{}", r.stdout);
}

/// `plugin add .` builds a Python project in place (pip leaves `build/` and `*.egg-info` beside the
/// code) and cargo writes `target/`: the project a user commits ignores what building it writes.
#[test]
fn a_new_project_ignores_what_building_it_writes() {
    let s = Sandboxed::new();
    for (lang, dir, ignored) in [
        (
            "python",
            "py",
            &["build/", "*.egg-info/", "__pycache__/", ".venv/"][..],
        ),
        ("rust", "rs", &["/target/"][..]),
    ] {
        let name = format!("agentenv-ignores-{dir}");
        let r = s.run(&[
            "plugin", "new", &name, "--lang", lang, "--dir", dir, "--json",
        ]);
        assert_eq!(r.code, 0, "{}", r.both());
        let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert!(
            doc["files"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == ".gitignore"),
            "{doc}"
        );
        let text = std::fs::read_to_string(s.home().join(dir).join(".gitignore")).unwrap();
        for pattern in ignored {
            assert!(text.lines().any(|l| l == *pattern), "{lang}: {text}");
        }
    }
}
