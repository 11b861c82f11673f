//! What to do when an installer fails on a project that depends on an agent-env SDK by name. The
//! SDKs are published to the registries a team runs, not to PyPI or the Go module proxy, so a
//! project made by `agent-env plugin new` without `--sdk` installs only where its SDK can be found;
//! pip's and Go's own errors ("No matching distribution", "missing go.sum entry") do not say why.

use std::path::Path;

use super::source::{Installer, Spec};

/// The Python SDK's distribution name.
const PYTHON_SDK: &str = "agent-env-plugin-sdk";
/// The Go SDK's module path.
const GO_SDK: &str = "github.com/agent-env/agent-env/plugin-sdk-go";

/// Advice for each local project among `specs` that depends on an SDK by name only (no folder or
/// URL that says where it is), for a problem report after its installer failed.
pub fn after_failed_install(specs: &[Spec]) -> Vec<String> {
    specs
        .iter()
        .filter_map(|spec| {
            let folder = spec.path.as_deref()?;
            match spec.installer {
                Installer::Pip if python_sdk_by_name(folder) => Some(python_advice(&spec.text)),
                Installer::Go if go_sdk_by_name(folder) => Some(go_advice(folder)),
                _ => None,
            }
        })
        .collect()
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

/// Whether the module's `go.mod` requires the Go SDK with no `replace` pointing elsewhere.
fn go_sdk_by_name(folder: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(folder.join("go.mod")) else {
        return false;
    };
    let mentions = |word: &str| {
        text.lines().any(|line| {
            let line = line.trim_start();
            line.starts_with(word) && line.contains(GO_SDK)
        })
    };
    let required = mentions("require") || text.lines().any(|l| l.trim_start().starts_with(GO_SDK));
    required && !mentions("replace")
}

fn python_advice(spec: &str) -> String {
    format!(
        "{spec} depends on the Python SDK by name ({PYTHON_SDK}), which pip finds only on an index that \
         holds it (it is not on PyPI): install the SDK with it from a checkout of agent-env, \
         `agent-env plugin add CHECKOUT/plugin-sdk-py {spec}`; or publish the SDK to your index and \
         pass --index-url; or point the dependency at a checkout in pyproject.toml \
         (\"{PYTHON_SDK} @ file:///PATH/TO/CHECKOUT/plugin-sdk-py\")"
    )
}

fn go_advice(folder: &Path) -> String {
    format!(
        "{} depends on the Go SDK by module path ({GO_SDK}), which Go fetches only from a proxy that \
         holds it (it is not published): point it at a checkout of agent-env with `go mod edit \
         -replace {GO_SDK}=CHECKOUT/plugin-sdk-go` and `go mod tidy` in that folder, or set GOPROXY \
         to a proxy that holds it; then add it again",
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

    #[test]
    fn a_python_project_needing_the_sdk_by_name_is_told_where_to_get_it() {
        let dir = project(
            "pyproject.toml",
            "[project]\nname = \"p\"\ndependencies = [\"Agent_Env-Plugin-SDK>=0.1.0\"]\n",
        );
        let advice = after_failed_install(&[spec(Installer::Pip, dir.path())]);
        assert_eq!(advice.len(), 1, "{advice:?}");
        assert!(
            advice[0].contains("agent-env plugin add CHECKOUT/plugin-sdk-py ./proj"),
            "{}",
            advice[0]
        );
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
        assert!(after_failed_install(&specs).is_empty());
    }

    #[test]
    fn a_go_module_needing_the_sdk_without_a_replace_is_told_how_to_point_it() {
        let by_name = project(
            "go.mod",
            "module example.com/p\n\ngo 1.22\n\nrequire github.com/agent-env/agent-env/plugin-sdk-go v0.1.0\n",
        );
        let advice = after_failed_install(&[spec(Installer::Go, by_name.path())]);
        assert_eq!(advice.len(), 1, "{advice:?}");
        assert!(advice[0].contains("go mod edit -replace"), "{}", advice[0]);
        let replaced = project(
            "go.mod",
            "module example.com/p\n\nrequire (\n\tgithub.com/agent-env/agent-env/plugin-sdk-go v0.1.0\n)\n\nreplace github.com/agent-env/agent-env/plugin-sdk-go => /src/plugin-sdk-go\n",
        );
        assert!(after_failed_install(&[spec(Installer::Go, replaced.path())]).is_empty());
    }
}
