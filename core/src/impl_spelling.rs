//! How an impl written in the original's `module:Class` form is spelled here: when an installed plugin
//! provides the class, the package it goes by, so a message can say what to write instead. It reads
//! only manifests, so the stores layer (a plugin store's impl) and config alike use it.

use agent_env_protocol::manifest::Manifest;

/// The installed plugin whose manifest lists `class` under `[provides.<group>]` (`task_steps`,
/// `explorer_plugins`, …).
pub fn provider_in_group<'m>(
    manifests: impl IntoIterator<Item = &'m Manifest>,
    group: &str,
    class: &str,
) -> Option<&'m Manifest> {
    manifests.into_iter().find(|m| {
        m.provides
            .get(group)
            .is_some_and(|entries| entries.values().any(|e| e.class == class))
    })
}

/// The installed plugin whose manifest lists `class` under `[provides.stores]` as a `kind` store.
pub fn store_provider<'m>(
    manifests: impl IntoIterator<Item = &'m Manifest>,
    kind: &str,
    class: &str,
) -> Option<&'m Manifest> {
    manifests
        .into_iter()
        .find(|m| m.stores.get(class).is_some_and(|k| k == kind))
}

/// `; <package> provides <class>: write <key>"<package>:<class>"`, where `key` is what comes before
/// the value (`impl = ` for a store, nothing for an item of an `impls` list).
pub fn write_instead(provider: &Manifest, class: &str, key: &str) -> String {
    let package = &provider.name;
    format!("; {package} provides {class}: write {key}\"{package}:{class}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo() -> Manifest {
        Manifest::parse(
            std::path::Path::new("/x/agent-env-plugin.toml"),
            "[plugin]\nname = \"demo-7\"\nversion = \"1.0.0\"\nexec = [\"./p\"]\nprotocol = [1, 1]\n[provides.task_steps]\nenv_probe = \"EnvProbe\"\n[provides.stores]\nDemoSecrets = \"secret\"\n",
        )
        .expect("a manifest")
    }

    #[test]
    fn finds_the_package_providing_a_class() {
        let all = [demo()];
        let step = provider_in_group(&all, "task_steps", "EnvProbe").expect("provided");
        assert_eq!(
            write_instead(step, "EnvProbe", ""),
            "; demo-7 provides EnvProbe: write \"demo-7:EnvProbe\""
        );
        assert!(provider_in_group(&all, "explorer_plugins", "EnvProbe").is_none());
        let store = store_provider(&all, "secret", "DemoSecrets").expect("provided");
        assert_eq!(
            write_instead(store, "DemoSecrets", "impl = "),
            "; demo-7 provides DemoSecrets: write impl = \"demo-7:DemoSecrets\""
        );
        assert!(store_provider(&all, "object", "DemoSecrets").is_none());
    }
}
