//! Why a chain of sandbox provider names (`--sandbox`, `[sandbox] default`) picks no provider here:
//! the sandbox layer's sentence, and, for a name an installed plugin declares under
//! `[provides.sandbox_providers]`, that this agent-env does not use plugins' sandbox providers yet
//! (the report loads such a provider as `active`, so the plain "no provider of that name" would
//! contradict it).

use agent_env_protocol::manifest::Manifest;

/// `--sandbox 'myprov': no sandbox provider of that name is available; the built-in one is 'local'
/// ('myprov' is a sandbox provider of the plugin agentenv-boxes, and this agent-env does not use
/// plugins' sandbox providers yet)`. `source` names where the chain was written.
pub fn no_provider_here(source: &str, chain: &str, manifests: &[Manifest]) -> String {
    let mut text = crate::sandbox::no_provider(source, chain);
    let of_plugins: Vec<String> = chain
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .filter_map(|name| {
            let package = providing_package(name, manifests)?;
            Some(format!(
                "'{name}' is a sandbox provider of the plugin {package}"
            ))
        })
        .collect();
    if !of_plugins.is_empty() {
        text.push_str(&format!(
            " ({}, and this agent-env does not use plugins' sandbox providers yet)",
            of_plugins.join("; ")
        ));
    }
    text
}

/// The first installed package whose manifest declares `name` under `[provides.sandbox_providers]`.
fn providing_package<'m>(name: &str, manifests: &'m [Manifest]) -> Option<&'m str> {
    manifests
        .iter()
        .find(|m| {
            m.provides
                .get("sandbox_providers")
                .is_some_and(|providers| providers.contains_key(name))
        })
        .map(|m| m.name.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(text: &str) -> Manifest {
        Manifest::parse(std::path::Path::new("/p/agent-env-plugin.toml"), text).unwrap()
    }

    #[test]
    fn a_plugins_provider_is_said_to_be_unused_here() {
        let boxes = manifest(
            "[plugin]\nname = \"agentenv-boxes\"\nversion = \"1\"\nexec = [\"x\"]\nprotocol = [1, 1]\n[provides.sandbox_providers]\nmyprov = \"MyProv\"\n",
        );
        assert_eq!(
            no_provider_here("--sandbox", "docker, myprov", &[boxes]),
            "--sandbox 'docker, myprov': no sandbox provider of that name is available; the built-in one is 'local' ('myprov' is a sandbox provider of the plugin agentenv-boxes, and this agent-env does not use plugins' sandbox providers yet)"
        );
        assert_eq!(
            no_provider_here("--sandbox", "docker", &[]),
            crate::sandbox::no_provider("--sandbox", "docker")
        );
    }
}
