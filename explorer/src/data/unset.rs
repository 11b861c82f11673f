//! The environment variables a configured store's settings name (`env:NAME` with no default) that
//! this process does not have. A store left out for one is not mended by trying it again: a running
//! explorer keeps the environment it started with, so the answer says to set it and restart `up`.

use agent_env::config::references::{parse_reference, references_in};
use agent_env::config::store_selection::selection;
use agent_env::session::Session;

/// The unset variables the `kind` store's settings (`document`, `object`) name, each once, in the
/// order they are written.
pub fn unset_variables(session: &Session, kind: &str) -> Vec<String> {
    let Ok(chosen) = selection(session.config(), kind) else {
        return Vec::new();
    };
    let mut written = Vec::new();
    references_in(&toml::Value::Table(chosen.config), "", &mut written);
    let mut unset: Vec<String> = Vec::new();
    for (_key, text) in &written {
        let Some(reference) = parse_reference(text) else {
            continue;
        };
        let missing = reference.scheme == "env"
            && reference.default.is_none()
            && !reference.name.is_empty()
            && session.env().var_os(reference.name).is_none();
        if missing && !unset.iter().any(|n| n == reference.name) {
            unset.push(reference.name.to_string());
        }
    }
    unset
}
