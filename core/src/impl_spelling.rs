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

/// The section of docs/migrating-from-python.md that says how a Python plugin becomes one here.
pub const PORTING_SECTION: &str =
    "\"A plugin is a program with a manifest\" in docs/migrating-from-python.md";

/// Why a store's `impl = "<package>:<Class>"` names no installed plugin, and what to write instead:
/// the package that does provide the class when one installed does; for a Python module path
/// (`agentenv_x.stores:Class`, the original's form) that a Python store class is not loaded here;
/// otherwise how a plugin's store is named. `config check`, `store check` and a run say this one
/// sentence.
pub fn store_package_not_installed<'m>(
    manifests: impl IntoIterator<Item = &'m Manifest>,
    kind: &str,
    package: &str,
    class: &str,
) -> String {
    let impl_name = format!("{package}:{class}");
    if let Some(provider) = store_provider(manifests, kind, class) {
        let instead = write_instead(provider, class, "impl = ");
        return format!(
            "Cannot import impl '{impl_name}': no installed plugin package named '{package}'{instead}"
        );
    }
    if package.contains('.') {
        return format!(
            "Cannot import impl '{impl_name}': '{package}' is a Python module path, and this agent-env \
             does not load Python store classes: a store written in Python is a plugin (`agent-env plugin \
             new NAME --lang python --kind store --store {kind}` sets one up), named \
             impl = \"<package>:<Class>\" once `agent-env plugin add` installed it; see {PORTING_SECTION}"
        );
    }
    format!(
        "Cannot import impl '{impl_name}': no installed plugin package named '{package}'; a plugin's \
         store is named '<package>:<Class>', with the package as `agent-env plugin list` prints it"
    )
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

    #[test]
    fn a_python_module_path_is_said_to_be_no_store_here() {
        let all = [demo()];
        let said = store_package_not_installed(
            &all,
            "object",
            "agentenv_openciv3.stores",
            "ContentAddressedObjectStore",
        );
        assert_eq!(
            said,
            "Cannot import impl 'agentenv_openciv3.stores:ContentAddressedObjectStore': 'agentenv_openciv3.stores' is a Python module path, and this agent-env does not load Python store classes: a store written in Python is a plugin (`agent-env plugin new NAME --lang python --kind store --store object` sets one up), named impl = \"<package>:<Class>\" once `agent-env plugin add` installed it; see \"A plugin is a program with a manifest\" in docs/migrating-from-python.md"
        );
        // A module path whose class an installed plugin provides is spelled as that plugin's.
        let said = store_package_not_installed(&all, "secret", "demo_7.stores", "DemoSecrets");
        assert!(
            said.ends_with("no installed plugin package named 'demo_7.stores'; demo-7 provides DemoSecrets: write impl = \"demo-7:DemoSecrets\""),
            "{said}"
        );
        let said = store_package_not_installed(&all, "object", "acme", "Cas");
        assert!(
            said.ends_with("no installed plugin package named 'acme'; a plugin's store is named '<package>:<Class>', with the package as `agent-env plugin list` prints it"),
            "{said}"
        );
    }
}
