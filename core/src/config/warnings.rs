//! Warnings about what agent-env does not read, in the reference's order: misplaced section keys, keys set both
//! beside and inside a `config` table, a misspelled `[plugins]`, then unread tables and keys with a "Did you
//! mean" hint.

use super::schema::{self, Node};
use super::tables::toml_key;
use crate::similar::best_match;
use toml::{Table, Value};

/// The cutoff for "Did you mean" hints on keys and tables.
pub const HINT_CUTOFF: f64 = 0.75;
/// The cutoff for a top-level table taken for a misspelled `[plugins]`.
pub const PLUGINS_CUTOFF: f64 = 0.85;

#[derive(Default)]
struct Buckets {
    misplaced: Vec<String>,
    duplicated: Vec<String>,
    plugins: Vec<String>,
    unread: Vec<String>,
}

/// Every warning about the document, in order.
pub fn warnings(table: &Table) -> Vec<String> {
    let mut out = Buckets::default();
    for (key, value) in table {
        match schema::top_level(key) {
            Some(node) => walk(&[key.as_str()], node, value, &mut out),
            None => stray_top_level(key, value, &mut out),
        }
    }
    let Buckets {
        misplaced,
        duplicated,
        plugins,
        unread,
    } = out;
    misplaced
        .into_iter()
        .chain(duplicated)
        .chain(plugins)
        .chain(unread)
        .collect()
}

fn stray_top_level(key: &str, value: &Value, out: &mut Buckets) {
    if !matches!(value, Value::Table(_)) {
        let takes = schema::table_taking(key)
            .map(|t| format!("; [{t}] takes a key of that name"))
            .unwrap_or_default();
        out.unread.push(format!(
            "The top-level key '{key}' is outside every table, and agent-env does not read it{takes}."
        ));
        return;
    }
    if best_match(key, ["plugins"], PLUGINS_CUTOFF).is_some() {
        out.plugins.push(format!(
            "agent-env does not read [{}]: a plugin's settings go under [plugins.<package>]. Did you mean [plugins]?",
            toml_key(key)
        ));
        return;
    }
    let hint = best_match(key, schema::top_level_names(), HINT_CUTOFF)
        .map(|m| format!(" Did you mean [{m}]?"))
        .unwrap_or_default();
    out.unread.push(format!(
        "agent-env does not read [{}]: it has no such table, and a plugin's own settings go under [plugins.<package>].{hint}",
        toml_key(key)
    ));
}

fn walk(path: &[&str], node: Node, value: &Value, out: &mut Buckets) {
    let Value::Table(table) = value else {
        // A string seam is an alias or impl; any other shape is the section's own error, not a warning.
        return;
    };
    match node {
        Node::Leaf | Node::FreeForm => {}
        Node::Named(child) => {
            for (key, v) in table {
                let mut p = path.to_vec();
                p.push(key);
                walk(&p, *child, v, out);
            }
        }
        Node::Table(_) | Node::Seam => {
            let config = match (node, table.get("config")) {
                (Node::Seam, Some(Value::Table(c))) => Some(c),
                _ => None,
            };
            for (key, v) in table {
                if let Some(child) = node.child(key) {
                    let mut p = path.to_vec();
                    p.push(key);
                    walk(&p, child, v, out);
                    continue;
                }
                let here = path_name(path);
                if config.is_some_and(|c| c.contains_key(key)) {
                    out.duplicated.push(format!(
                        "[{here}] sets '{key}' both beside its config table and inside it; only [{here}.config] {key} is read."
                    ));
                } else if schema::top_level(key).is_some() {
                    out.misplaced.push(format!(
                        "[{here}] has a key named '{key}', which is also a top-level section — a bare key binds to the table above it. Did you mean [{key}]?"
                    ));
                } else if schema::refuses_unknown_keys(path) {
                    // The section's own problem names it.
                } else {
                    let hint = best_match(key, node.keys(), HINT_CUTOFF)
                        .map(|m| format!(" Did you mean '{m}'?"))
                        .unwrap_or_default();
                    out.unread.push(format!(
                        "[{here}] has a key named '{key}', which agent-env does not read.{hint}"
                    ));
                }
            }
        }
    }
}

fn path_name(path: &[&str]) -> String {
    path.iter()
        .map(|s| toml_key(s))
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warn(text: &str) -> Vec<String> {
        warnings(&toml::from_str(text).unwrap())
    }

    #[test]
    fn the_reference_warnings() {
        assert_eq!(
            warn("[plugin]\nx = 1\n[envs]\nimplz = []\n"),
            [
                "agent-env does not read [plugin]: a plugin's settings go under [plugins.<package>]. Did you mean [plugins]?",
                "[envs] has a key named 'implz', which agent-env does not read. Did you mean 'impls'?",
            ]
        );
        assert_eq!(
            warn("[bogus]\na = 1\n"),
            ["agent-env does not read [bogus]: it has no such table, and a plugin's own settings go under [plugins.<package>]."]
        );
        assert_eq!(
            warn("x = 1\nport = 2\n"),
            [
                "The top-level key 'x' is outside every table, and agent-env does not read it.",
                "The top-level key 'port' is outside every table, and agent-env does not read it; [explorer] takes a key of that name.",
            ]
        );
    }

    #[test]
    fn misplaced_and_duplicated_keys_come_first() {
        let w = warn(
            "[sandbox]\ndefault = 'local'\nenvs = 1\n[stores.document]\nimpl = 'm:C'\npath = 'a'\nconfig = { path = 'b' }\n[envs]\nimplz = 1\n",
        );
        assert_eq!(
            w,
            [
                "[sandbox] has a key named 'envs', which is also a top-level section — a bare key binds to the table above it. Did you mean [envs]?",
                "[stores.document] sets 'path' both beside its config table and inside it; only [stores.document.config] path is read.",
                "[envs] has a key named 'implz', which agent-env does not read. Did you mean 'impls'?",
            ]
        );
    }

    #[test]
    fn free_form_tables_are_not_descended_into() {
        assert!(warn("[plugins.x]\nanything = 1\n[model.params]\nt = 1\n[stores.object]\nimpl = 'a:B'\nconfig = { zzz = 1 }\n[sandbox.providers.v]\nconfig = { q = 1 }\n").is_empty());
        assert_eq!(
            warn("[sandbox.providers.v]\nconfg = {}\n"),
            ["[sandbox.providers.v] has a key named 'confg', which agent-env does not read. Did you mean 'config'?"]
        );
    }
}
