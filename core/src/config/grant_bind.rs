//! The local object store's grant server listening beyond this machine: `grant_bind_host` set to an
//! address other than loopback (`0.0.0.0`, `::`, a LAN or public address) lets other machines reach the
//! server and use any grant URL they get hold of. `config check` warns of it, saying how to keep the
//! server to this machine; loopback (the default) and `grants = "off"` say nothing.

use std::net::IpAddr;

use super::configured_store::store_spec;
use super::document::ConfigDocument;
use super::store_selection::selection;
use crate::stores::local::fs_object;
use crate::stores::StoreKind;

/// The address the configured local object store's grant server binds, when it grants and the
/// address is not loopback. A setting that does not read as an address is the check's problem.
fn exposed_address(doc: &ConfigDocument) -> Option<(String, IpAddr)> {
    let chosen = selection(doc, "object").ok()?;
    if crate::stores::local_builtin(StoreKind::Object, &chosen.impl_name) != Some(fs_object::CLASS)
    {
        return None;
    }
    let spec = store_spec(&chosen, &doc.env, None).ok()?;
    if spec.config.get("grants").and_then(|g| g.as_str()) == Some("off") {
        return None;
    }
    let written = spec.config.get("grant_bind_host")?.as_str()?;
    // An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) is the IPv4 one.
    let address = written.trim().parse::<IpAddr>().ok()?.to_canonical();
    (!address.is_loopback()).then(|| (written.to_string(), address))
}

/// The warning for a grant server that listens beyond this machine, if it does.
pub fn exposed_grant_server(doc: &ConfigDocument) -> Option<String> {
    let (written, address) = exposed_address(doc)?;
    Some(warning(&written, address))
}

fn warning(written: &str, address: IpAddr) -> String {
    let reach = if address.is_unspecified() {
        "every network address of this machine".to_string()
    } else {
        format!("{address}, which other machines on its network reach")
    };
    format!(
        "[stores.object.config] grant_bind_host = '{written}' makes the local object store's grant server listen on {reach}: any of them can reach the server and, with a grant URL it gets hold of, read or write the store's objects while the grant lasts; set grant_bind_host = \"127.0.0.1\" (the default) to keep it to this machine, or to the one address your sandboxes reach it by, or grants = \"off\" if nothing needs grants"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn said(config: &str) -> Option<String> {
        let doc = ConfigDocument::from_text(config, Path::new("/p/.agentenv/config.toml"));
        exposed_grant_server(&doc)
    }

    fn local(config: &str) -> String {
        format!("[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = {{ {config} }}\n")
    }

    #[test]
    fn an_address_beyond_loopback_is_warned_of() {
        let all = said(&local("grant_bind_host = \"0.0.0.0\"")).unwrap();
        assert!(
            all.starts_with("[stores.object.config] grant_bind_host = '0.0.0.0' makes the local object store's grant server listen on every network address of this machine: "),
            "{all}"
        );
        assert!(all.contains("grant_bind_host = \"127.0.0.1\""), "{all}");
        assert!(said(&local("grant_bind_host = \"::\""))
            .unwrap()
            .contains("every network address"));
        let lan = said(&local("grant_bind_host = \"192.168.1.20\"")).unwrap();
        assert!(
            lan.contains("listen on 192.168.1.20, which other machines on its network reach"),
            "{lan}"
        );
    }

    #[test]
    fn loopback_no_grants_and_other_stores_say_nothing() {
        assert_eq!(said(&local("grant_bind_host = \"127.0.0.1\"")), None);
        assert_eq!(said(&local("grant_bind_host = \"::1\"")), None);
        assert_eq!(said(&local("grant_bind_host = \"::ffff:127.0.0.1\"")), None);
        assert_eq!(said(&local("")), None);
        assert_eq!(said(""), None);
        assert_eq!(
            said(&local("grant_bind_host = \"0.0.0.0\", grants = \"off\"")),
            None
        );
        // Not an address: the store's own check says so, as a problem.
        assert_eq!(said(&local("grant_bind_host = \"nowhere\"")), None);
        assert_eq!(
            said("[stores.object]\nimpl = \"acme:LocalFilesystemObjectStore\"\nconfig = { grant_bind_host = \"0.0.0.0\" }\n"),
            None
        );
    }
}
