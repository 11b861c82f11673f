//! What to do when an installer fails, from what it said: pip and Go name the cause ("No matching
//! distribution", "missing go.sum entry", a connection refused) but not what to do about it here. The
//! SDKs are published to the registries a team runs, not to PyPI or the Go module proxy, so a project
//! made by `agent-env plugin new` without `--sdk` installs only where its SDK can be found.

use std::path::Path;

use super::source::{Installer, Spec};

/// The Python SDK's distribution name.
const PYTHON_SDK: &str = "agent-env-plugin-sdk";
/// The Go SDK's module path.
const GO_SDK: &str = "github.com/agent-env/agent-env/plugin-sdk-go";
/// What keeps Go from checking the SDK against the public checksum database, which does not know it.
const GO_NOSUMDB: &str = "GONOSUMDB=github.com/agent-env/*";

/// Advice for the specs an installer failed on, from the end of what it said (`said`): at most one
/// sentence per installer, each for a cause it named.
pub fn after_failed_install(specs: &[Spec], said: &str) -> Vec<String> {
    let mut advice = Vec::new();
    if specs.iter().any(|s| s.installer == Installer::Pip) {
        advice.extend(pip_advice(specs, said));
    }
    if let Some(go) = specs.iter().find(|s| s.installer == Installer::Go) {
        advice.extend(go_advice(go, said));
    }
    advice
}

/// What pip's failure says to do: the SDK not on the index, the index holding other versions, the
/// index serving no build tools, or no index reached.
fn pip_advice(specs: &[Spec], said: &str) -> Option<String> {
    let index = said
        .lines()
        .find_map(|l| l.trim().strip_prefix("Looking in indexes: "))
        .unwrap_or("the index it was given");
    if let Some(line) = unsatisfied(said, PYTHON_SDK) {
        let versions = from_versions(line);
        let project = specs
            .iter()
            .find(|s| s.path.as_deref().is_some_and(python_sdk_by_name))?;
        return Some(match versions {
            "none" => python_sdk_missing(&project.text),
            versions => format!(
                "{index} holds {PYTHON_SDK} {versions}, and {} asks for {}: publish that version to the index, or change the requirement in its pyproject.toml",
                project.text,
                requirement(line).unwrap_or(PYTHON_SDK)
            ),
        });
    }
    if unsatisfied(said, "setuptools").is_some() {
        return Some(format!(
            "{index} serves no setuptools, which pip needs to build a project folder: check its address (a wrong one serves nothing), or serve setuptools there too"
        ));
    }
    let unreachable = [
        "Failed to establish a new connection",
        "Connection refused",
        "Name or service not known",
        "Temporary failure in name resolution",
        "No route to host",
    ];
    if unreachable.iter().any(|m| said.contains(m)) {
        return Some(format!(
            "pip could not reach {index}: check that it is up and that the address (--index-url) is right"
        ));
    }
    None
}

/// The line in which pip says no version of `name` satisfies a requirement.
fn unsatisfied<'a>(said: &'a str, name: &str) -> Option<&'a str> {
    said.lines().find(|line| {
        let lower = line.to_ascii_lowercase().replace('_', "-");
        lower.contains("could not find a version that satisfies the requirement")
            && requirement(&lower).is_some_and(|r| {
                let end = r
                    .find(|c: char| !(c.is_ascii_alphanumeric() || "-.".contains(c)))
                    .unwrap_or(r.len());
                r[..end] == *name
            })
    })
}

/// The requirement pip's "satisfies the requirement X (from …)" line names.
fn requirement(line: &str) -> Option<&str> {
    let rest = line.split_once("the requirement ")?.1;
    rest.split_whitespace().next()
}

/// What pip's "(from versions: …)" lists: `none`, or the versions the index holds.
fn from_versions(line: &str) -> &str {
    line.split_once("(from versions: ")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map_or("none", |(versions, _)| versions.trim())
}

/// What Go's failure says to do: tidy a go.sum, leave the checksum database out, or find the SDK.
fn go_advice(spec: &Spec, said: &str) -> Option<String> {
    let folder = spec.path.as_deref()?;
    if said.contains("missing go.sum entry") {
        return Some(format!(
            "{}'s go.sum lacks entries for what it requires: run `go mod tidy` in that folder, then add it again",
            folder.display()
        ));
    }
    if said.contains("sum.golang.org") {
        return Some(format!(
            "Go checks every module against the public checksum database (sum.golang.org), which knows nothing of the SDK your proxy serves: set {GO_NOSUMDB} (GOPRIVATE would skip your proxy too), then add it again"
        ));
    }
    let fetch_failed = [
        "404",
        "410",
        "not found",
        "connection refused",
        "no such host",
    ]
    .iter()
    .any(|m| said.to_ascii_lowercase().contains(m));
    (said.contains(GO_SDK) && fetch_failed && go_sdk_by_name(folder))
        .then(|| go_sdk_missing(folder))
}

/// Whether the project's `pyproject.toml` requires the Python SDK without a direct reference.
fn python_sdk_by_name(folder: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(folder.join("pyproject.toml")) else {
        return false;
    };
    let Ok(doc) = text.parse::<toml::Table>() else {
        return false;
    };
    let dependencies = doc
        .get("project")
        .and_then(|p| p.get("dependencies"))
        .and_then(toml::Value::as_array);
    dependencies.into_iter().flatten().any(|dependency| {
        dependency.as_str().is_some_and(|requirement| {
            let name_end = requirement
                .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
                .unwrap_or(requirement.len());
            let name = requirement[..name_end]
                .replace('_', "-")
                .to_ascii_lowercase();
            name == PYTHON_SDK && !requirement.contains('@')
        })
    })
}

/// Whether the module's `go.mod` requires the Go SDK with no `replace` pointing elsewhere (a
/// `replace` line, or one in a `replace ( … )` block).
fn go_sdk_by_name(folder: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(folder.join("go.mod")) else {
        return false;
    };
    let mut block: Option<&str> = None;
    let (mut required, mut replaced) = (false, false);
    for line in text.lines().map(str::trim) {
        let directive = match block {
            Some(_) if line.starts_with(')') => {
                block = None;
                continue;
            }
            Some(open) => open,
            None => match line.split_once('(') {
                Some((word, rest)) if rest.trim().is_empty() => {
                    block = Some(word.trim());
                    continue;
                }
                _ => line.split_whitespace().next().unwrap_or(""),
            },
        };
        if line.contains(GO_SDK) {
            match directive {
                "require" => required = true,
                "replace" => replaced = true,
                _ => {}
            }
        }
    }
    required && !replaced
}

fn python_sdk_missing(spec: &str) -> String {
    format!(
        "{spec} depends on the Python SDK by name ({PYTHON_SDK}), which pip finds only on an index that \
         holds it (it is not on PyPI): install the SDK with it from a checkout of agent-env, \
         `agent-env plugin add CHECKOUT/plugin-sdk-py {spec}`; or publish the SDK to your index and \
         pass --index-url; or point the dependency at a checkout in pyproject.toml \
         (\"{PYTHON_SDK} @ file:///PATH/TO/CHECKOUT/plugin-sdk-py\")"
    )
}

fn go_sdk_missing(folder: &Path) -> String {
    format!(
        "{} depends on the Go SDK by module path ({GO_SDK}), which Go fetches only from a proxy that \
         holds it (it is not published): point it at a checkout of agent-env with `go mod edit \
         -replace {GO_SDK}=CHECKOUT/plugin-sdk-go` and `go mod tidy` in that folder, or set GOPROXY \
         to a proxy that holds it (with {GO_NOSUMDB}); then add it again",
        folder.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(installer: Installer, folder: &Path) -> Spec {
        Spec {
            text: "./proj".into(),
            installer,
            path: Some(folder.to_path_buf()),
            name: None,
        }
    }

    fn project(file: &str, text: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(file), text).unwrap();
        dir
    }

    const PIP_NO_SDK: &str = "Looking in indexes: http://127.0.0.1:9/simple\nERROR: Could not find a version that satisfies the requirement agent-env-plugin-sdk>=0.1.0 (from p) (from versions: none)\nERROR: No matching distribution found for agent-env-plugin-sdk>=0.1.0\n";

    #[test]
    fn a_python_project_needing_the_sdk_by_name_is_told_where_to_get_it() {
        let dir = project(
            "pyproject.toml",
            "[project]\nname = \"p\"\ndependencies = [\"Agent_Env-Plugin-SDK>=0.1.0\"]\n",
        );
        let advice = after_failed_install(&[spec(Installer::Pip, dir.path())], PIP_NO_SDK);
        assert_eq!(advice.len(), 1, "{advice:?}");
        assert!(
            advice[0].contains("agent-env plugin add CHECKOUT/plugin-sdk-py ./proj"),
            "{}",
            advice[0]
        );
        // The index holds the SDK, of another version than asked for.
        let other_version = PIP_NO_SDK.replace(
            ">=0.1.0 (from p) (from versions: none)",
            ">=0.2.0 (from p) (from versions: 0.1.0)",
        );
        assert_eq!(
            after_failed_install(&[spec(Installer::Pip, dir.path())], &other_version),
            ["http://127.0.0.1:9/simple holds agent-env-plugin-sdk 0.1.0, and ./proj asks for agent-env-plugin-sdk>=0.2.0: publish that version to the index, or change the requirement in its pyproject.toml"]
        );
    }

    #[test]
    fn pips_other_causes_get_their_own_advice_or_none() {
        let dir = project(
            "pyproject.toml",
            "[project]\ndependencies = [\"agent-env-plugin-sdk\"]\n",
        );
        let specs = [spec(Installer::Pip, dir.path())];
        let no_setuptools = "Looking in indexes: http://127.0.0.1:9/simpel\nERROR: Could not find a version that satisfies the requirement setuptools>=61 (from versions: none)\n";
        let advice = after_failed_install(&specs, no_setuptools);
        assert!(
            advice[0].starts_with("http://127.0.0.1:9/simpel serves no setuptools"),
            "{advice:?}"
        );
        let down = "Looking in indexes: http://127.0.0.1:9/simple\nWARNING: Retrying … NewConnectionError('Failed to establish a new connection: [Errno 111] Connection refused')\n";
        let advice = after_failed_install(&specs, down);
        assert!(
            advice[0].starts_with("pip could not reach http://127.0.0.1:9/simple"),
            "{advice:?}"
        );
        assert!(after_failed_install(&specs, "ERROR: some other failure\n").is_empty());
    }

    #[test]
    fn a_python_project_pointing_at_the_sdk_or_not_needing_it_gets_no_advice() {
        let at_checkout = project(
            "pyproject.toml",
            "[project]\ndependencies = [\"agent-env-plugin-sdk @ file:///src/plugin-sdk-py\"]\n",
        );
        let other = project(
            "pyproject.toml",
            "[project]\ndependencies = [\"agent-env-plugin-sdk-extras\"]\n",
        );
        let specs = [
            spec(Installer::Pip, at_checkout.path()),
            spec(Installer::Pip, other.path()),
        ];
        assert!(after_failed_install(&specs, PIP_NO_SDK).is_empty());
    }

    #[test]
    fn a_go_module_needing_the_sdk_without_a_replace_is_told_how_to_point_it() {
        let not_found = "go: github.com/agent-env/agent-env/plugin-sdk-go@v0.1.0: reading https://proxy.golang.org/github.com/agent-env/agent-env/plugin-sdk-go/@v/v0.1.0.mod: 404 Not Found\n";
        let by_name = project(
            "go.mod",
            "module example.com/p\n\ngo 1.22\n\nrequire github.com/agent-env/agent-env/plugin-sdk-go v0.1.0\n",
        );
        let advice = after_failed_install(&[spec(Installer::Go, by_name.path())], not_found);
        assert_eq!(advice.len(), 1, "{advice:?}");
        assert!(advice[0].contains("go mod edit -replace"), "{}", advice[0]);
        for replaced in [
            "module example.com/p\n\nrequire (\n\tgithub.com/agent-env/agent-env/plugin-sdk-go v0.1.0\n)\n\nreplace github.com/agent-env/agent-env/plugin-sdk-go => /src/plugin-sdk-go\n",
            "module example.com/p\n\nrequire github.com/agent-env/agent-env/plugin-sdk-go v0.1.0\n\nreplace (\n\tgithub.com/agent-env/agent-env/plugin-sdk-go => /src/plugin-sdk-go\n)\n",
        ] {
            let replaced = project("go.mod", replaced);
            assert!(after_failed_install(&[spec(Installer::Go, replaced.path())], not_found).is_empty());
        }
        // Go's other causes, whatever the go.mod.
        let tidy = after_failed_install(
            &[spec(Installer::Go, by_name.path())],
            "main.go:3:8: missing go.sum entry for module providing package github.com/agent-env/agent-env/plugin-sdk-go/agentenv\n",
        );
        assert!(
            tidy[0].contains("run `go mod tidy` in that folder"),
            "{tidy:?}"
        );
        let sumdb = after_failed_install(
            &[spec(Installer::Go, by_name.path())],
            "verifying module: github.com/agent-env/agent-env/plugin-sdk-go@v0.1.0: Get \"https://sum.golang.org/lookup/…\": dial tcp: lookup sum.golang.org: no such host\n",
        );
        assert!(
            sumdb[0].contains("GONOSUMDB=github.com/agent-env/*"),
            "{sumdb:?}"
        );
    }
}
