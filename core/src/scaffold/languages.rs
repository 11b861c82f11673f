//! The files of each language's project, from the templates beside this module.

use std::path::{Path, PathBuf};

use super::{render, Kind, Language, Names, ScaffoldFile};

const README: &str = include_str!("templates/README.md.tmpl");

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
    let what = match kind {
        Kind::Step => format!(
            "It gives one task step, `{}`: it scores whether a step's `text` has at least `min_words` words \
             into `metadata.verifications[<verifier_id>]`, which is how a run scores its task.",
            names.contribution
        ),
    };
    let verify_step = match kind {
        Kind::Step => format!(
            " --step '{{\"type\": \"{}\", \"id\": \"s\", \"text\": \"one two three\"}}'",
            names.contribution
        ),
    };
    let vars_base: Vec<(&str, &str)> = vec![
        ("name", &names.package),
        ("step_type", &names.contribution),
        ("class", &names.class),
        ("module", &names.module),
        ("rust_sdk", &rust_sdk),
        ("python_sdk", &python_sdk),
        ("go_replace", &go_replace),
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
        Language::Go => "Build and test it:\n\n```bash\ngo vet ./... && go test ./...\n```",
    };
    let mut readme_vars = vars_base.clone();
    readme_vars.extend([
        ("language", language.title()),
        ("what", what.as_str()),
        ("commands", commands),
        ("verify_step", verify_step.as_str()),
    ]);
    let mut out = vec![file("README.md".into(), README, &readme_vars)];
    let v = &vars_base;
    match (language, kind) {
        (Language::Rust, Kind::Step) => out.extend([
            file(
                "Cargo.toml".into(),
                include_str!("templates/rust/Cargo.toml.tmpl"),
                v,
            ),
            // Under src/, not at the top: `plugin add` copies a folder with a manifest on top as it is,
            // and builds a crate with `cargo install`, which is what this one needs.
            file(
                "src/agent-env-plugin.toml".into(),
                include_str!("templates/rust/step-manifest.toml.tmpl"),
                v,
            ),
            file(
                "src/main.rs".into(),
                include_str!("templates/rust/step-main.rs.tmpl"),
                v,
            ),
            file(
                "tests/step.rs".into(),
                include_str!("templates/rust/step-test.rs.tmpl"),
                v,
            ),
        ]),
        (Language::Python, Kind::Step) => out.extend([
            file(
                "pyproject.toml".into(),
                include_str!("templates/python/pyproject.toml.tmpl"),
                v,
            ),
            file(
                format!("{}.toml", names.package),
                include_str!("templates/python/step-manifest.toml.tmpl"),
                v,
            ),
            file(format!("src/{}/__init__.py", names.module), "", v),
            file(
                format!("src/{}/plugin.py", names.module),
                include_str!("templates/python/step-plugin.py.tmpl"),
                v,
            ),
            file(
                "tests/test_plugin.py".into(),
                include_str!("templates/python/step-test.py.tmpl"),
                v,
            ),
        ]),
        (Language::Go, Kind::Step) => out.extend([
            file("go.mod".into(), include_str!("templates/go/go.mod.tmpl"), v),
            file(
                "main.go".into(),
                include_str!("templates/go/step-main.go.tmpl"),
                v,
            ),
            file(
                "main_test.go".into(),
                include_str!("templates/go/step-test.go.tmpl"),
                v,
            ),
        ]),
    }
    out
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
