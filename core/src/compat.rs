//! Compatibility before any spawn: a plugin's `requires` on the core packages and its protocol range.
//!
//! The core package `agentenv-framework` is agent-env itself, at [`crate::VERSION`]. The protocol package
//! `agentenv-framework-protocol` has no release of its own here; its version is the protocol integer written
//! as a semantic version, `"<PROTOCOL_VERSION>.0.0"` (protocol 1 is `1.0.0`), so `>=1` and `<2` mean what a
//! plugin author expects.

use agent_env_protocol::manifest::{Manifest, Requirement};
use agent_env_protocol::names::{canonical_name, CORE_PACKAGE, PROTOCOL_PACKAGE};
use agent_env_protocol::version::{ProtocolRange, PROTOCOL_VERSION};

/// The version a core package is installed at, as requirements compare it.
pub fn installed_version(canonical_package: &str) -> Option<String> {
    match canonical_package {
        CORE_PACKAGE => Some(crate::VERSION.to_string()),
        PROTOCOL_PACKAGE => Some(format!("{PROTOCOL_VERSION}.0.0")),
        _ => None,
    }
}

/// Why the manifest's requirements exclude this agent-env, as the report says it:
/// `needs agentenv-framework>=1.0 (installed: 0.10.0); agentenv-framework-protocol<1 (installed: 1.0.0)`.
/// `None` when every requirement is met.
pub fn incompatibility(manifest: &Manifest) -> Option<String> {
    let unmet = unmet(manifest);
    (!unmet.is_empty()).then(|| format!("needs {}", unmet.join("; ")))
}

/// The requirements on core packages, by canonical package name (`agentenv-framework` first).
pub fn sorted_core_requirements(manifest: &Manifest) -> Vec<&Requirement> {
    let mut reqs: Vec<&Requirement> = manifest.core_requirements().collect();
    reqs.sort_by_key(|r| canonical_name(&r.package));
    reqs
}

/// Every unmet requirement of the manifest, as `<package><requirement> (installed: <version>)`,
/// in the manifest's order, then the protocol range when it does not meet ours.
pub fn unmet(manifest: &Manifest) -> Vec<String> {
    let mut out = Vec::new();
    for req in sorted_core_requirements(manifest) {
        let package = canonical_name(&req.package);
        let Some(installed) = installed_version(&package) else {
            continue;
        };
        let Ok(version) = semver::Version::parse(&installed) else {
            continue;
        };
        if !req.req.matches(&version) {
            out.push(format!("{package}{} (installed: {installed})", req.text));
        }
    }
    out.extend(unmet_protocol(manifest));
    out
}

/// The manifest's protocol range when it has no version in common with ours, as
/// `agent-env protocol <range> (installed: <ours>)`.
pub fn unmet_protocol(manifest: &Manifest) -> Option<String> {
    let ours = ProtocolRange::ours();
    ours.negotiate(&manifest.protocol).is_none().then(|| {
        format!(
            "agent-env protocol {} (installed: {ours})",
            manifest.protocol
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn manifest(requires: &str, protocol: &str) -> Manifest {
        let text = format!(
            "[plugin]\nname = \"p\"\nversion = \"1\"\nexec = [\"x\"]\nprotocol = {protocol}\nrequires = {{ {requires} }}\n"
        );
        Manifest::parse(Path::new("m.toml"), &text).unwrap()
    }

    #[test]
    fn unmet_requirements_are_listed_in_order() {
        let m = manifest(
            "agentenv-framework = \">=99.0\", agentenv_framework_protocol = \"<1\", other = \">=5\"",
            "[1, 1]",
        );
        assert_eq!(
            incompatibility(&m).unwrap(),
            format!(
                "needs agentenv-framework>=99.0 (installed: {}); agentenv-framework-protocol<1 (installed: 1.0.0)",
                crate::VERSION
            )
        );
        assert_eq!(
            incompatibility(&manifest("agentenv-framework = \">=0.0.1\"", "[1, 3]")),
            None
        );
        assert_eq!(
            unmet(&manifest("", "[2, 3]")),
            vec!["agent-env protocol 2-3 (installed: 1)".to_string()]
        );
    }
}
