//! `agent-env config explain PATH [--json]`: where one section or TOML path gets its value. A path below a
//! section is read from the layer that won the section; `plugins.<package>…` is read from the file and ends
//! with whose table it is; any other path is read from the file only.

use super::document::ConfigDocument;
use super::mask::mask_value;
use super::plugins::{plugin_tables, InstalledPackage, Owner, PluginTable};
use super::sections::{sections, FromEnvView, SectionView, ShadowedView, WinnerView};
use super::show::{inline_pairs_resolved, render_value_lines, ValueLines};
use super::store_keys::{builtin_class, default_of, not_taken};
use super::store_selection::ALIASED_SECTIONS;
use super::tables::toml_key;
use agent_env_protocol::names::canonical_name;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::{Table, Value};

/// The owner of a plugin path; in JSON the original's keys: `name`, `installed`, `version` and
/// `plugin` (whether the installed package is an agent-env plugin).
#[derive(Debug, Clone, Serialize)]
pub struct PluginOwner {
    #[serde(rename = "name")]
    pub package: String,
    pub installed: bool,
    pub version: Option<String>,
    pub plugin: bool,
    /// The sentence the text output ends with.
    #[serde(skip)]
    pub note: String,
}

/// One child of an ancestor path (`stores` covers four sections; `plugins` lists every table).
#[derive(Debug, Clone, Serialize)]
pub struct Child {
    pub path: String,
    pub section: Option<String>,
    pub value: Option<Value>,
    #[serde(rename = "where")]
    pub location: Option<String>,
    pub error: Option<String>,
    /// The owner label of a plugin table (`agentenv-browser (not installed)`).
    #[serde(skip)]
    pub label: Option<String>,
}

/// What `config explain --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    pub path: String,
    pub section: Option<String>,
    pub value: Option<Value>,
    pub winner: Option<WinnerView>,
    pub shadowed: Vec<ShadowedView>,
    pub error: Option<String>,
    pub file_only: bool,
    pub plugin: Option<PluginOwner>,
    pub children: Vec<Child>,
    /// What the section's store takes from the environment where its table is silent (an
    /// `S3ObjectStore`'s AWS variables), as `config show` lists it: the section's all, or the one
    /// setting the path names.
    pub from_env: Vec<FromEnvView>,
    /// A built-in store's relative path in the config file, by its key, as the store takes it (from
    /// the project's folder), as `config show` lists it: the section's all, or the one setting the
    /// path names.
    pub resolved_paths: BTreeMap<String, String>,
    /// A store section's line as `config show` prints it (`LocalSqliteDocumentStore  path=…`).
    #[serde(skip)]
    pub store_line: Option<String>,
    /// What the selected built-in store uses for the config key the path names when no layer sets
    /// it (`schema`: `public`), where the store exposes it.
    pub default: Option<DefaultView>,
    /// Why the selected built-in store does not read the config key the path names (a typo, most
    /// likely), as `config check` reports it.
    pub not_taken: Option<String>,
}

/// The value a built-in store uses for a key its table leaves unset.
#[derive(Debug, Clone, Serialize)]
pub struct DefaultView {
    /// The store's class (`PostgresDocumentStore`).
    pub class: String,
    pub value: Value,
    /// When the default applies besides (`neither AWS_REGION nor AWS_DEFAULT_REGION is set`).
    pub unless: Option<String>,
}

impl Explanation {
    fn empty(path: &str) -> Explanation {
        Explanation {
            path: path.to_string(),
            section: None,
            value: None,
            winner: None,
            shadowed: Vec::new(),
            error: None,
            file_only: false,
            plugin: None,
            children: Vec::new(),
            from_env: Vec::new(),
            resolved_paths: BTreeMap::new(),
            store_line: None,
            default: None,
            not_taken: None,
        }
    }
}

/// A path `config explain` cannot read: nothing given, or a part left empty between dots.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("config explain needs a section or a TOML path: a section's name and its keys joined by dots, such as 'stores.object.root' or 'document'")]
    Empty,
    #[error("'{path}' has an empty part (two dots together, or one at an end); a TOML path is a section's name and its keys joined by single dots, such as 'stores.object.root' (quote a key that holds a dot: plugins.\"acme.browser\")")]
    EmptySegment { path: String },
}

/// Splits a TOML path into segments; a quoted segment (`"acme.browser"`) is one key. A path with
/// nothing in it, or with an unquoted empty segment (`stores..object`, `document.`), is refused
/// rather than read as another path.
pub fn split_path(path: &str) -> Result<Vec<String>, PathError> {
    if path.trim().is_empty() {
        return Err(PathError::Empty);
    }
    let mut segments = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut quote: Option<char> = None;
    let mut end_segment = |current: &mut String, quoted: &mut bool| {
        let segment = std::mem::take(current);
        let empty = segment.is_empty() && !*quoted;
        *quoted = false;
        segments.push(segment);
        !empty
    };
    let mut every_part_given = true;
    for c in path.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                quoted = true;
            }
            (None, '.') => every_part_given &= end_segment(&mut current, &mut quoted),
            (None, c) if c.is_whitespace() => {}
            (None, c) => current.push(c),
        }
    }
    every_part_given &= end_segment(&mut current, &mut quoted);
    if !every_part_given {
        return Err(PathError::EmptySegment {
            path: path.to_string(),
        });
    }
    Ok(segments)
}

/// The section a path's head names, and how many segments that took (`document` = 1, `stores.document` = 2).
fn section_of(segments: &[String]) -> Option<(&'static str, usize)> {
    let head = segments.first()?.as_str();
    if head == "stores" {
        let kind = segments.get(1)?;
        return ALIASED_SECTIONS
            .iter()
            .find(|s| s.toml_path == ["stores", kind.as_str()])
            .map(|s| (s.name, 2));
    }
    super::sections::SECTION_ORDER
        .iter()
        .find(|s| **s == head)
        .map(|s| (*s, 1))
}

/// The effective table of a section, as the winning layer supplies it (masked).
fn effective(section: &SectionView) -> Option<Value> {
    if let Some(impl_name) = &section.impl_name {
        let mut t = Table::new();
        t.insert("impl".into(), Value::String(impl_name.clone()));
        t.insert(
            "config".into(),
            Value::Table(section.config.clone().unwrap_or_default()),
        );
        return Some(Value::Table(t));
    }
    section.value.clone()
}

fn lookup<'a>(value: &'a Value, keys: &[String]) -> Option<&'a Value> {
    keys.iter().try_fold(value, |v, k| v.as_table()?.get(k))
}

/// Answers `config explain PATH`.
pub fn explain(
    doc: &ConfigDocument,
    path: &str,
    installed: &[InstalledPackage],
    env: &dyn Fn(&str) -> Option<String>,
    state_root: &Path,
) -> Result<Explanation, PathError> {
    let segments = split_path(path)?;
    Ok(explain_segments(
        doc, path, &segments, installed, env, state_root,
    ))
}

fn explain_segments(
    doc: &ConfigDocument,
    path: &str,
    segments: &[String],
    installed: &[InstalledPackage],
    env: &dyn Fn(&str) -> Option<String>,
    state_root: &Path,
) -> Explanation {
    let mut answer = Explanation::empty(path);
    if let Some(problem) = &doc.error {
        answer.error = Some(problem.reason.clone());
        return answer;
    }
    if segments.first().map(String::as_str) == Some("plugins") {
        return explain_plugins(doc, segments, installed, answer);
    }
    let all = sections(doc, env, state_root);
    if segments.len() == 1 && segments[0] == "stores" {
        answer.children = all
            .iter()
            .filter(|s| {
                ALIASED_SECTIONS
                    .iter()
                    .any(|a| a.name == s.name && a.toml_path[0] == "stores")
            })
            .map(|s| Child {
                path: format!("stores.{}", s.name),
                section: Some(s.name.to_string()),
                value: s.value.clone(),
                location: s.winner.as_ref().map(|w| w.location.clone()),
                error: s.error.clone(),
                label: None,
            })
            .collect();
        return answer;
    }
    if let Some((name, used)) = section_of(segments) {
        let Some(section) = all.into_iter().find(|s| s.name == name) else {
            return answer;
        };
        answer.section = Some(name.to_string());
        answer.winner = section.winner.clone();
        answer.shadowed = section.shadowed.clone();
        answer.error = section.error.clone();
        let rest = &segments[used..];
        if rest.is_empty() {
            answer.value = effective(&section);
            answer.store_line = store_line(&section);
            answer.from_env = section.from_env.clone();
            answer.resolved_paths = section.resolved_paths.clone();
            return answer;
        }
        if let Some(table) = effective(&section) {
            answer.value = lookup(&table, rest).cloned().or_else(|| {
                // A store's config keys are shown hoisted, so `document.path` finds `config.path`.
                let mut hoisted = vec!["config".to_string()];
                hoisted.extend(rest.iter().cloned());
                (section.impl_name.is_some() && rest[0] != "impl" && rest[0] != "config")
                    .then(|| lookup(&table, &hoisted).cloned())
                    .flatten()
            });
        }
        // A setting the table leaves to the environment: `stores.object.region` or `.config.region`.
        let key = match rest {
            [key] => Some(key),
            [config, key] if config == "config" => Some(key),
            _ => None,
        };
        // A relative path the path names, or those of the `config` table it names.
        answer.resolved_paths = match rest {
            [config] if config == "config" => section.resolved_paths.clone(),
            _ => section
                .resolved_paths
                .iter()
                .filter(|(k, _)| key.is_some_and(|key| key == *k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        };
        if answer.value.is_none() {
            answer.from_env = section
                .from_env
                .iter()
                .filter(|found| key.is_some_and(|k| k == found.key))
                .cloned()
                .collect();
        }
        let store_key = key
            .map(String::as_str)
            .filter(|k| rest.len() == 2 || (*k != "impl" && *k != "config"));
        let class = section
            .impl_name
            .as_deref()
            .and_then(|impl_name| builtin_class(name, impl_name));
        if let (Some(class), Some(key)) = (class, store_key) {
            answer.not_taken = not_taken(class, key);
            if answer.value.is_none() && answer.from_env.is_empty() && answer.not_taken.is_none() {
                answer.default = default_of(name, class, key, state_root).map(|d| DefaultView {
                    class: class.to_string(),
                    value: d.value,
                    unless: d.unless.map(str::to_string),
                });
            }
        }
        return answer;
    }
    answer.file_only = true;
    let root = Value::Table(doc.table.clone());
    answer.value = lookup(&root, segments).map(|v| mask_value(v, false));
    answer
}

fn explain_plugins(
    doc: &ConfigDocument,
    segments: &[String],
    installed: &[InstalledPackage],
    mut answer: Explanation,
) -> Explanation {
    // The original names the section and does not call a plugin table file-only.
    answer.section = Some("plugins".to_string());
    let tables = match plugin_tables(doc) {
        Ok(t) => t,
        Err(e) => {
            answer.error = Some(e.to_string());
            return answer;
        }
    };
    let rest = &segments[1..];
    if rest.is_empty() {
        answer.children = tables
            .iter()
            .map(|t| {
                let owner = Owner::of(&t.package, installed);
                Child {
                    path: format!("plugins.{}", toml_key(t.spellings[0])),
                    section: None,
                    value: t
                        .table()
                        .ok()
                        .map(|v| mask_value(&Value::Table(v.clone()), false)),
                    location: Some(t.spelled_tables()),
                    error: t.table().err().map(|e| e.to_string()),
                    label: Some(owner.label()),
                }
            })
            .collect();
        return answer;
    }
    // The first segment names the table; failing that, try dotted package names, longest first.
    // Prefer a reading whose keys exist in the table; else the first table that matched.
    let candidates: Vec<_> = std::iter::once(1)
        .chain((2..=rest.len()).rev())
        .filter_map(|take| {
            let name = canonical_name(&rest[..take].join("."));
            tables
                .iter()
                .find(|t| t.package == name)
                .map(|t| (t, &rest[take..]))
        })
        .collect();
    let resolves = |(entry, keys): &(&PluginTable<'_>, &[String])| {
        entry
            .table()
            .ok()
            .is_some_and(|t| lookup(&Value::Table(t.clone()), keys).is_some())
    };
    let found = candidates
        .iter()
        .find(|c| resolves(c))
        .or(candidates.first())
        .copied();
    let Some((entry, keys)) = found else {
        let package = canonical_name(&rest[0]);
        answer.plugin = Some(owner_view(&Owner::of(&package, installed)));
        return answer;
    };
    let owner = Owner::of(&entry.package, installed);
    answer.plugin = Some(owner_view(&owner));
    let location = entry.spelled_tables();
    answer.winner = Some(WinnerView {
        kind: "file",
        location,
        value: None,
    });
    match entry.table() {
        Ok(table) => {
            let masked = mask_value(&Value::Table(table.clone()), false);
            answer.value = if keys.is_empty() {
                Some(masked)
            } else {
                // Mask below a secret-like key found on the way down.
                let sensitive = keys.iter().any(|k| super::mask::is_secret_key(k));
                lookup(&Value::Table(table.clone()), keys).map(|v| mask_value(v, sensitive))
            };
        }
        Err(e) => answer.error = Some(e.to_string()),
    }
    answer
}

/// `LocalSqliteDocumentStore  path=…` for a store section.
fn store_line(section: &SectionView) -> Option<String> {
    section.impl_name.as_ref()?;
    let mut parts = vec![section.value.as_ref()?.as_str()?.to_string()];
    if let Some(config) = &section.config {
        if !config.is_empty() {
            parts.push(inline_pairs_resolved(config, &section.resolved_paths).join("  "));
        }
    }
    Some(parts.join("  "))
}

fn owner_view(owner: &Owner) -> PluginOwner {
    PluginOwner {
        package: owner.name().to_string(),
        installed: owner.is_installed(),
        version: owner.version().map(str::to_string),
        plugin: owner.is_installed() && owner.is_plugin(),
        note: owner.explain_note(),
    }
}

fn from_text(answer: &Explanation) -> Option<String> {
    let winner = answer.winner.as_ref()?;
    let mut line = format!("from {}", winner.location);
    for layer in &answer.shadowed {
        match (&layer.error, &layer.headline) {
            (Some(err), _) => line.push_str(&format!("; {} unreadable: {err}", layer.location)),
            (None, Some(h)) => line.push_str(&format!("; {h} in {}, shadowed", layer.location)),
            (None, None) => line.push_str(&format!("; {}, shadowed", layer.location)),
        }
    }
    Some(line)
}

/// The text answer.
pub fn render_text(answer: &Explanation) -> String {
    let mut out = String::new();
    let path = &answer.path;
    if !answer.children.is_empty() {
        if path == "plugins" {
            out.push_str(&format!(
                "plugins has {} table(s):\n",
                answer.children.len()
            ));
        } else {
            out.push_str(&format!(
                "{path} covers {} sections, each resolving on its own:\n",
                answer.children.len()
            ));
        }
        for child in &answer.children {
            let shown = match (&child.error, &child.value) {
                (Some(e), _) => format!("(unresolved) {e}"),
                (None, Some(v)) => one_line(v),
                (None, None) => "(unset)".to_string(),
            };
            let label = child
                .label
                .as_deref()
                .or(child.section.as_deref())
                .unwrap_or(&child.path);
            let from = child
                .location
                .as_deref()
                .map(|l| format!("  (from {l})"))
                .unwrap_or_default();
            out.push_str(&format!("  {label}: {shown}{from}\n"));
        }
        return out;
    }
    if answer.path == "plugins" {
        out.push_str("plugins has no tables\n");
        return out;
    }
    if let Some(error) = &answer.error {
        out.push_str(&format!("{path}: (unresolved) {error}\n"));
        return out;
    }
    let note = answer
        .plugin
        .as_ref()
        .map(|p| format!("; {}", p.note))
        .unwrap_or_default();
    let file_only = if answer.file_only && answer.plugin.is_none() {
        "; read from the file only — no resolver owns this path"
    } else {
        ""
    };
    if let Some(line) = &answer.store_line {
        out.push_str(&format!("{path} = {line}\n"));
        if let Some(from) = from_text(answer) {
            out.push_str(&format!("  {from}\n"));
        }
        for found in &answer.from_env {
            out.push_str(&format!(
                "  {}={}  from {}\n",
                found.key,
                one_line(&found.value),
                found.location
            ));
        }
        return out;
    }
    if let (None, [found]) = (&answer.value, answer.from_env.as_slice()) {
        out.push_str(&format!(
            "{path} = {}\n  from {} (the table leaves it to the environment)\n",
            one_line(&found.value),
            found.location
        ));
        return out;
    }
    match (&answer.value, &answer.default, &answer.not_taken) {
        (None, _, Some(not_taken)) => {
            out.push_str(&format!("{path}: (unset) — {not_taken}\n"));
        }
        (None, Some(default), None) => {
            let unless = default
                .unless
                .as_deref()
                .map(|u| format!(" and {u}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "{path} = {} — the default {} uses when no layer sets it{unless}\n",
                one_line(&default.value),
                default.class
            ));
        }
        (None, None, None) => out.push_str(&format!(
            "{path}: (unset) — no layer supplies this path{note}{}\n",
            unknown_section_hint(&answer.path)
        )),
        (Some(value), _, _) => {
            let lines = render_value_lines(value);
            match lines {
                ValueLines::Inline(text) => {
                    // A relative path the path names, with where it resolves to.
                    let resolved = match (value, answer.resolved_paths.values().next()) {
                        (Value::String(_), Some(path)) => format!(" (= {path})"),
                        _ => String::new(),
                    };
                    out.push_str(&format!("{path} = {text}{resolved}{file_only}{note}\n"));
                }
                ValueLines::Block(first, rest) => {
                    let first = match value {
                        Value::Table(t) if !answer.resolved_paths.is_empty() => {
                            inline_pairs_resolved(t, &answer.resolved_paths).join("  ")
                        }
                        _ => first,
                    };
                    if first.is_empty() {
                        out.push_str(&format!("{path}:{file_only}{note}\n"));
                    } else {
                        out.push_str(&format!("{path} = {first}{file_only}{note}\n"));
                    }
                    for line in rest {
                        out.push_str(&format!("  {line}\n"));
                    }
                }
            }
            if let Some(from) = from_text(answer) {
                out.push_str(&format!("  {from}\n"));
            }
            if let Some(not_taken) = &answer.not_taken {
                out.push_str(&format!("  {not_taken}\n"));
            }
        }
    }
    out
}

fn one_line(value: &Value) -> String {
    match render_value_lines(value) {
        ValueLines::Inline(text) => text,
        ValueLines::Block(first, rest) if rest.is_empty() => first,
        ValueLines::Block(first, rest) => {
            let mut all = vec![first];
            all.extend(rest.into_iter().map(|l| l.trim().to_string()));
            all.retain(|l| !l.is_empty());
            all.join("  ")
        }
    }
}

/// The JSON answer, two-space indented.
pub fn render_json(answer: &Explanation) -> String {
    serde_json::to_string_pretty(answer).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// When a part of the path is no section or key agent-env reads (a typo, most likely): which one it
/// may have meant, or the ones there are. Empty when every part is read, or lies below a table whose
/// keys are the user's (a store's `config`, a plugin's table).
fn unknown_section_hint(path: &str) -> String {
    let mut parts = path.split('.');
    let first = parts.next().unwrap_or(path);
    let mut known: Vec<&str> = super::schema::top_level_names().collect();
    for section in ALIASED_SECTIONS {
        if !known.contains(&section.name) {
            known.push(section.name);
        }
    }
    if first.is_empty() {
        return String::new();
    }
    if !known.contains(&first) {
        return match crate::similar::best_match(
            first,
            known.iter().copied(),
            super::warnings::HINT_CUTOFF,
        ) {
            Some(meant) => {
                format!("; agent-env reads no section '{first}': did you mean '{meant}'?")
            }
            None => format!(
                "; agent-env reads no section '{first}' (it reads {})",
                known.join(", ")
            ),
        };
    }
    // An aliased store section (`[document]`) is a seam, as `[stores.document]` is.
    let mut node = super::schema::top_level(first).unwrap_or(super::schema::Node::Seam);
    let mut at = first.to_string();
    for part in parts {
        let keys = node.keys();
        let Some(child) = node.child(part) else {
            if keys.is_empty() {
                return String::new();
            }
            return match crate::similar::best_match(
                part,
                keys.iter().copied(),
                super::warnings::HINT_CUTOFF,
            ) {
                Some(meant) => {
                    format!("; agent-env reads no key '{part}' in [{at}]: did you mean '{meant}'?")
                }
                None => format!(
                    "; agent-env reads no key '{part}' in [{at}] (it reads {})",
                    keys.join(", ")
                ),
            };
        };
        node = child;
        at = format!("{at}.{part}");
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_under_no_section_agent_env_reads_says_so() {
        assert_eq!(
            unknown_section_hint("documnet"),
            "; agent-env reads no section 'documnet': did you mean 'document'?"
        );
        assert!(unknown_section_hint("zzz.a")
            .starts_with("; agent-env reads no section 'zzz' (it reads stores, "));
        assert_eq!(unknown_section_hint("stores.document.config.path"), "");
        assert_eq!(unknown_section_hint("document"), "");
    }

    #[test]
    fn a_key_agent_env_does_not_read_in_a_section_it_reads_says_so() {
        assert_eq!(
            unknown_section_hint("stores.objct"),
            "; agent-env reads no key 'objct' in [stores]: did you mean 'object'?"
        );
        assert_eq!(
            unknown_section_hint("stores.object.confg"),
            "; agent-env reads no key 'confg' in [stores.object]: did you mean 'config'?"
        );
        assert!(unknown_section_hint("stores.zzz").starts_with(
            "; agent-env reads no key 'zzz' in [stores] (it reads document, object, "
        ));
        assert_eq!(unknown_section_hint("document.impl"), "");
        assert_eq!(unknown_section_hint("stores.object.config.anything"), "");
    }

    #[test]
    fn a_path_with_nothing_or_an_empty_part_is_refused() {
        assert_eq!(split_path(""), Err(PathError::Empty));
        assert_eq!(split_path("  "), Err(PathError::Empty));
        for path in ["stores..object", ".document", "document.", "a. .b"] {
            assert!(
                matches!(split_path(path), Err(PathError::EmptySegment { .. })),
                "{path}"
            );
        }
        assert_eq!(
            split_path("plugins.\"acme.browser\".x"),
            Ok(vec!["plugins".into(), "acme.browser".into(), "x".into()])
        );
        assert_eq!(
            split_path("stores.object.root"),
            Ok(vec!["stores".into(), "object".into(), "root".into()])
        );
    }
}
