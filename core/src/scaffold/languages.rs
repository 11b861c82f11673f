//! The files of each language's project, from the templates beside this module.

use std::path::{Path, PathBuf};

use super::{render, Kind, Language, Names, ScaffoldFile, StoreKind};

const README: &str = include_str!("templates/README.md.tmpl");

/// Where the README says the SDK comes from, and what to do when it cannot be had there.
fn sdk_note(language: Language, checkout: Option<&str>) -> String {
    let (package, manifest) = match language {
        Language::Rust => ("agent-env-plugin-sdk", "Cargo.toml"),
        Language::Python => ("agent-env-plugin-sdk", "pyproject.toml"),
        Language::Go => ("github.com/agent-env/agent-env/plugin-sdk-go", "go.mod"),
    };
    let registry = language.sdk_registry();
    match checkout {
        Some(path) => format!(
            "`{manifest}` takes its SDK, `{package}`, from the agent-env checkout at `{path}`; point it \
             at a published version when you ship the plugin."
        ),
        None => format!(
            "`{manifest}` takes its SDK, `{package}`, by name from {registry}. Where that registry does not \
             have it, publish it there ({} says how), or build against a checkout of agent-env: {}.",
            language.sdk_publishing(),
            language.sdk_from_checkout()
        ),
    }
}

/// The project's files for `language` and `kind`; `sdk` is the SDK folder of a checkout, if the
/// dependency should point there instead of at the registry.
pub(super) fn files(
    language: Language,
    kind: Kind,
    names: &Names,
    sdk: Option<&Path>,
) -> Vec<ScaffoldFile> {
    let sdk_text = sdk.map(|p| p.display().to_string());
    let rust_sdk = match &sdk_text {
        Some(path) => format!("agent-env-plugin-sdk = {{ path = {} }}", toml_string(path)),
        // The Rust SDK is released with the core, under the same version.
        None => format!("agent-env-plugin-sdk = \"{}\"", env!("CARGO_PKG_VERSION")),
    };
    let python_sdk = match sdk {
        Some(path) => format!("agent-env-plugin-sdk @ {}", file_url(path)),
        None => "agent-env-plugin-sdk>=0.1.0".to_string(),
    };
    let go_replace = match &sdk_text {
        Some(path) => format!(
            "\n// Build against the SDK of an agent-env checkout until you depend on a published version.\nreplace github.com/agent-env/agent-env/plugin-sdk-go => {path}\n"
        ),
        None => String::new(),
    };
    let command = names.command();
    let framework_requirement = framework_requirement();
    let what = match kind {
        Kind::Step => format!(
            "It gives one task step, `{}`: it scores whether a step's `text` has at least `min_words` words \
             into `metadata.verifications[<verifier_id>]`, which is how a run scores its task.",
            names.contribution
        ),
        Kind::Store(store) => store_what(store, language, &names.class),
        Kind::Cli => format!(
            "It gives one command, `agent-env {command} TEXT…`, which prints how many words its arguments hold."
        ),
    };
    let usage = match kind {
        Kind::Step => String::new(),
        Kind::Store(StoreKind::Secret) => format!(
            "\n\nTo use the store, select it in `.agentenv/config.toml`:\n\n```toml\n[stores.secret]\n\
             impl = \"{name}:{class}\"\nconfig = {{ path = \"~/.config/{name}/secrets.json\" }}\n```\n\n\
             then write its secrets file and run agent-env's secret kit against the store. The kit reads two \
             secrets it expects every store it checks to hold, so put them in beside your own; a config's \
             `secret:NAME` reference reads the file's `NAME`.\n\n```bash\nmkdir -p ~/.config/{name}\n\
             printf '%s\\n' '{{\"conformance_present\": \"value-1\", \"conformance_present_empty\": \"\"}}' > ~/.config/{name}/secrets.json\n\
             chmod 600 ~/.config/{name}/secrets.json\nagent-env store check secret\n```",
            class = names.class,
            name = names.package
        ),
        Kind::Store(store) => format!(
            "\n\nTo use the store, select it in `.agentenv/config.toml`:\n\n```toml\n[stores.{kind}]\n\
             impl = \"{name}:{class}\"\nconfig = {{ root = \"~/.local/share/{name}\" }}\n```\n\n\
             then run agent-env's {kind} kit against it. {leftovers}\n\n```bash\nagent-env store check {kind}\n```",
            kind = store.name(),
            class = names.class,
            name = names.package,
            leftovers = match store {
                StoreKind::Object => {
                    "The kit writes its objects under a fresh `agent-env-kit/<hex>/` prefix, and they stay \
                     there: an object store has no delete."
                }
                _ => "Each of its cases works in a collection of its own and drops it when it ends.",
            }
        ),
        Kind::Cli => format!("\n\nThen run it: `agent-env {command} one two three` prints 3."),
    };
    let verify_step = match kind {
        Kind::Step => format!(
            " --step '{{\"type\": \"{}\", \"id\": \"s\", \"text\": \"one two three\"}}'",
            names.contribution
        ),
        Kind::Store(_) | Kind::Cli => String::new(),
    };
    let store_kind = match kind {
        Kind::Store(store) => store.name(),
        Kind::Step | Kind::Cli => "",
    };
    let vars_base: Vec<(&str, &str)> = vec![
        ("name", &names.package),
        ("step_type", &names.contribution),
        ("class", &names.class),
        ("module", &names.module),
        ("rust_sdk", &rust_sdk),
        ("python_sdk", &python_sdk),
        ("go_replace", &go_replace),
        ("command", &command),
        ("store_kind", store_kind),
        ("framework_requirement", &framework_requirement),
    ];
    let file = |path: String, template: &str, vars: &[(&str, &str)]| ScaffoldFile {
        path: PathBuf::from(path),
        text: render(template, vars),
    };
    let commands = match language {
        Language::Rust => "Build and test it:\n\n```bash\ncargo test\n```",
        Language::Python => {
            "Test it (in a virtual environment):\n\n```bash\npython3 -m venv .venv && .venv/bin/pip install -e '.[test]'\n.venv/bin/python -m pytest\n```"
        }
        Language::Go => "Build and test it (`go mod tidy` fetches the SDK and writes `go.sum`, which Go needs before it builds):\n\n```bash\ngo mod tidy\ngo vet ./... && go test ./...\n```",
    };
    let sdk_note = sdk_note(language, sdk_text.as_deref());
    let mut readme_vars = vars_base.clone();
    readme_vars.extend([
        ("language", language.title()),
        ("what", what.as_str()),
        ("commands", commands),
        ("sdk_note", sdk_note.as_str()),
        ("verify_step", verify_step.as_str()),
        ("usage", usage.as_str()),
    ]);
    let mut out = vec![file("README.md".into(), README, &readme_vars)];
    let v = &vars_base;
    let prefix = match kind {
        Kind::Step => "step",
        Kind::Store(_) => "store",
        Kind::Cli => "cli",
    };
    match language {
        Language::Rust => {
            out.push(file(
                "Cargo.toml".into(),
                include_str!("templates/rust/Cargo.toml.tmpl"),
                v,
            ));
            // Under src/, not at the top: `plugin add` copies a folder with a manifest on top as it is,
            // and builds a crate with `cargo install`, which is what this one needs.
            out.push(file(
                "src/agent-env-plugin.toml".into(),
                rust_template(kind, "manifest"),
                v,
            ));
            out.push(file("src/main.rs".into(), rust_template(kind, "main"), v));
            out.push(file(
                ".gitignore".into(),
                include_str!("templates/rust/gitignore.tmpl"),
                v,
            ));
            if matches!(kind, Kind::Store(_)) {
                out.push(file("src/lib.rs".into(), rust_template(kind, "lib"), v));
            }
            if kind != Kind::Cli {
                out.push(file(
                    format!("tests/{prefix}.rs"),
                    rust_template(kind, "test"),
                    v,
                ));
            }
        }
        Language::Python => out.extend([
            file(
                "pyproject.toml".into(),
                include_str!("templates/python/pyproject.toml.tmpl"),
                v,
            ),
            file(
                format!("{}.toml", names.package),
                python_template(kind, "manifest"),
                v,
            ),
            // pip builds a project folder in place: `plugin add .` leaves `build/` and `*.egg-info` here.
            file(
                ".gitignore".into(),
                include_str!("templates/python/gitignore.tmpl"),
                v,
            ),
            file(format!("src/{}/__init__.py", names.module), "", v),
            file(
                format!("src/{}/plugin.py", names.module),
                python_template(kind, "plugin"),
                v,
            ),
            file(
                "tests/test_plugin.py".into(),
                python_template(kind, "test"),
                v,
            ),
        ]),
        Language::Go => out.extend([
            file("go.mod".into(), include_str!("templates/go/go.mod.tmpl"), v),
            file("main.go".into(), go_template(kind, "main"), v),
            file("main_test.go".into(), go_template(kind, "test"), v),
        ]),
    }
    out
}

/// The Rust template of a kind's file (`manifest`, `main`, `lib`, `test`). The store kinds share the
/// manifest (it names the kind) and `main.rs`; each has its own store and test.
fn rust_template(kind: Kind, part: &str) -> &'static str {
    match (kind, part) {
        (Kind::Step, "manifest") => include_str!("templates/rust/step-manifest.toml.tmpl"),
        (Kind::Step, "main") => include_str!("templates/rust/step-main.rs.tmpl"),
        (Kind::Step, _) => include_str!("templates/rust/step-test.rs.tmpl"),
        (Kind::Store(_), "manifest") => include_str!("templates/rust/store-manifest.toml.tmpl"),
        (Kind::Store(_), "main") => include_str!("templates/rust/store-main.rs.tmpl"),
        (Kind::Store(StoreKind::Secret), "lib") => {
            include_str!("templates/rust/secret-lib.rs.tmpl")
        }
        (Kind::Store(StoreKind::Secret), _) => include_str!("templates/rust/secret-test.rs.tmpl"),
        (Kind::Store(StoreKind::Object), "lib") => {
            include_str!("templates/rust/object-lib.rs.tmpl")
        }
        (Kind::Store(StoreKind::Object), _) => include_str!("templates/rust/object-test.rs.tmpl"),
        (Kind::Store(StoreKind::Document), "lib") => {
            include_str!("templates/rust/document-lib.rs.tmpl")
        }
        (Kind::Store(StoreKind::Document), _) => {
            include_str!("templates/rust/document-test.rs.tmpl")
        }
        (Kind::Cli, "manifest") => include_str!("templates/rust/cli-manifest.toml.tmpl"),
        (Kind::Cli, _) => include_str!("templates/rust/cli-main.rs.tmpl"),
    }
}

/// The Python template of a kind's file (`manifest`, `plugin`, `test`); the store kinds share the
/// manifest.
fn python_template(kind: Kind, part: &str) -> &'static str {
    match (kind, part) {
        (Kind::Step, "manifest") => include_str!("templates/python/step-manifest.toml.tmpl"),
        (Kind::Step, "plugin") => include_str!("templates/python/step-plugin.py.tmpl"),
        (Kind::Step, _) => include_str!("templates/python/step-test.py.tmpl"),
        (Kind::Store(_), "manifest") => include_str!("templates/python/store-manifest.toml.tmpl"),
        (Kind::Store(StoreKind::Secret), "plugin") => {
            include_str!("templates/python/secret-plugin.py.tmpl")
        }
        (Kind::Store(StoreKind::Secret), _) => include_str!("templates/python/secret-test.py.tmpl"),
        (Kind::Store(StoreKind::Object), "plugin") => {
            include_str!("templates/python/object-plugin.py.tmpl")
        }
        (Kind::Store(StoreKind::Object), _) => include_str!("templates/python/object-test.py.tmpl"),
        (Kind::Store(StoreKind::Document), "plugin") => {
            include_str!("templates/python/document-plugin.py.tmpl")
        }
        (Kind::Store(StoreKind::Document), _) => {
            include_str!("templates/python/document-test.py.tmpl")
        }
        (Kind::Cli, "manifest") => include_str!("templates/python/cli-manifest.toml.tmpl"),
        (Kind::Cli, "plugin") => include_str!("templates/python/cli-plugin.py.tmpl"),
        (Kind::Cli, _) => include_str!("templates/python/cli-test.py.tmpl"),
    }
}

/// The Go template of a kind's file (`main`, `test`).
fn go_template(kind: Kind, part: &str) -> &'static str {
    match (kind, part) {
        (Kind::Step, "main") => include_str!("templates/go/step-main.go.tmpl"),
        (Kind::Step, _) => include_str!("templates/go/step-test.go.tmpl"),
        (Kind::Store(StoreKind::Secret), "main") => {
            include_str!("templates/go/secret-main.go.tmpl")
        }
        (Kind::Store(StoreKind::Secret), _) => include_str!("templates/go/secret-test.go.tmpl"),
        (Kind::Store(StoreKind::Object), "main") => {
            include_str!("templates/go/object-main.go.tmpl")
        }
        (Kind::Store(StoreKind::Object), _) => include_str!("templates/go/object-test.go.tmpl"),
        (Kind::Store(StoreKind::Document), "main") => {
            include_str!("templates/go/document-main.go.tmpl")
        }
        (Kind::Store(StoreKind::Document), _) => include_str!("templates/go/document-test.go.tmpl"),
        (Kind::Cli, "main") => include_str!("templates/go/cli-main.go.tmpl"),
        (Kind::Cli, _) => include_str!("templates/go/cli-test.go.tmpl"),
    }
}

/// What the README says a store project gives, and how its test checks it.
fn store_what(store: StoreKind, language: Language, class: &str) -> String {
    let gives = match store {
        StoreKind::Secret => {
            return format!(
                "It gives one secret store, `{class}`: the secrets of a JSON file that maps each name to its value."
            )
        }
        StoreKind::Object => format!(
            "It gives one object store, `{class}`: write-once objects kept as files under a folder, each \
             written to a temporary file first and then moved into place, so no reader sees half an object."
        ),
        StoreKind::Document => format!(
            "It gives one document store, `{class}`: collections of JSON documents, each kept in a JSON file \
             of its own under a folder and rewritten whole, under a lock, by every change."
        ),
    };
    let kind = store.name();
    let test = match (store, language) {
        (_, Language::Rust) | (StoreKind::Object, _) => {
            format!("Its test runs agent-env's {kind} kit, from the SDK, against the store in-process.")
        }
        _ => format!(
            "Its test runs agent-env's {kind} kit against the plugin as agent-env starts it, with \
             `agent-env store check {kind}` in a home of its own: it needs `agent-env` on `PATH` (or \
             `AGENT_ENV_BIN`), and is skipped without it (or fails, when `CI` is set)."
        ),
    };
    format!("{gives} {test}")
}

/// The project's `requires` on agent-env: this agent-env's version as its floor, to the minor
/// (`>=0.10` from 0.10.3), so `plugin show` reports what the plugin was written against and an older
/// agent-env says it is too old rather than failing on what it lacks.
fn framework_requirement() -> String {
    let version = env!("CARGO_PKG_VERSION");
    let mut parts = version.split('.');
    match (parts.next(), parts.next()) {
        (Some(major), Some(minor)) => format!(">={major}.{minor}"),
        _ => format!(">={version}"),
    }
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    let escaped: String = text
        .chars()
        .flat_map(|c| match c {
            '"' => vec!['\\', '"'],
            '\\' => vec!['\\', '\\'],
            c => vec![c],
        })
        .collect();
    format!("\"{escaped}\"")
}

/// A `file://` URL for an absolute path (bytes outside the unreserved set percent-encoded).
fn file_url(path: &Path) -> String {
    let mut url = String::from("file://");
    for byte in path.display().to_string().bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            url.push(byte as char);
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}
