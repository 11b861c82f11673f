//! The core's version against plugins' requirements, as users of the Python original rely on it: a
//! bundle whose package needs another agent-env is listed as invalid and never run, and a plugin that
//! declares the floor the original advises (`agentenv-framework>=0.9`) is compatible.

use serde_json::Value;

use crate::support::run::Sandboxed;

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Installs a plugin whose only contribution is a bundle `name`, requiring `requirement` of the core.
fn bundle_plugin(s: &Sandboxed, package: &str, requirement: &str, name: &str) {
    let dir = s.install_manifest(
        package,
        &format!(
            "[plugin]\nname = \"{package}\"\nversion = \"1.0.0\"\nexec = [\"{package}\"]\nprotocol = [1, 1]\nrequires = {{ agentenv-framework = \"{requirement}\" }}\n\n[provides.bundles]\n{name} = \"bundles/{name}\"\n"
        ),
    );
    let root = dir.parent().unwrap().join("bundles").join(name);
    std::fs::create_dir_all(root.join("tasks")).unwrap();
    std::fs::write(
        root.join("tasks/t.json"),
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box", "sandbox_mode": "vm"}]"#,
    )
    .unwrap();
    std::fs::write(root.join("README.md"), "A bundle.\n").unwrap();
}

fn contribution(report: &Value, package: &str, name: &str) -> Value {
    report["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == package)
        .and_then(|p| {
            p["contributions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == name)
                .cloned()
        })
        .unwrap_or_else(|| panic!("{package} {name} in {report}"))
}

#[test]
fn a_bundle_whose_plugin_needs_another_core_is_listed_invalid_and_refused() {
    let s = Sandboxed::new();
    bundle_plugin(&s, "agentenv-old", ">=99.0", "oldb");
    let needs = format!("agentenv-old needs agentenv-framework>=99.0 (installed: {VERSION})");

    let check = s.run(&["plugin", "check", "--json"]);
    assert_eq!(check.code, 1, "{}", check.both());
    let report: Value = serde_json::from_str(&check.stdout).unwrap();
    let c = contribution(&report, "agentenv-old", "oldb");
    assert_eq!(c["status"], "failed");
    assert_eq!(c["code"], "incompatible-core");
    assert_eq!(c["reason"], needs.as_str());

    let list = s.run(&["run"]);
    assert_eq!(list.code, 0, "{}", list.both());
    let row = list
        .stdout
        .lines()
        .find(|l| l.starts_with("oldb "))
        .unwrap_or_else(|| panic!("{}", list.stdout));
    let cells: Vec<&str> = row.split("  ").filter(|c| !c.is_empty()).collect();
    assert_eq!(cells[1].trim(), "agentenv-old 1.0.0", "{row}");
    assert_eq!(cells[2].trim(), "invalid", "{row}");
    assert_eq!(cells[3].trim(), needs, "{row}");

    for args in [&["run", "oldb"][..], &["run", "oldb", "--dry-run"][..]] {
        let r = s.run(args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.both());
        assert!(
            r.stderr.contains(&format!("agentenv-old/oldb: {needs}")),
            "{}",
            r.stderr
        );
        assert!(!r.stdout.contains("step 1/1"), "{}", r.stdout);
    }
    assert!(!s.local_db().exists(), "nothing was written");
}

#[test]
fn a_plugin_declaring_the_originals_floor_is_compatible() {
    let s = Sandboxed::new();
    bundle_plugin(&s, "agentenv-floor", ">=0.9", "floorb");
    bundle_plugin(&s, "agentenv-compatible", "~=0.9", "compatb");
    bundle_plugin(&s, "agentenv-pinned", "==0.9.1364", "pinnedb");

    let check = s.run(&["plugin", "check", "--json"]);
    let report: Value = serde_json::from_str(&check.stdout).unwrap();
    assert_eq!(report["agent_env"]["version"], VERSION);
    assert_eq!(
        contribution(&report, "agentenv-floor", "floorb")["status"],
        "active"
    );
    assert_eq!(
        contribution(&report, "agentenv-compatible", "compatb")["status"],
        "active"
    );
    let pinned = contribution(&report, "agentenv-pinned", "pinnedb");
    assert_eq!(pinned["code"], "incompatible-core");
    assert_eq!(
        pinned["reason"],
        format!("agentenv-pinned needs agentenv-framework==0.9.1364 (installed: {VERSION})")
    );

    let r = s.run(&["run", "floorb"]);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stdout_has("  tasks/t.json v1: unscored, ");
}

#[test]
fn the_core_continues_the_originals_version_line() {
    let version = semver::Version::parse(VERSION).unwrap();
    assert!(
        version >= semver::Version::new(0, 10, 0),
        "{VERSION} must meet a floor in the original's 0.9 line"
    );
}
