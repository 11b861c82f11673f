//! `agent-env config debug` (every candidate path discovery considers, the file a root option chose
//! first) and `agent-env config sources` (every
//! layer, lowest precedence first: the defaults, the file, the store variables, and each variable an `env:`
//! reference in the file names).

use super::document::ConfigDocument;
use super::locate::{candidates, Candidate, ConfigSource};
use super::references::{parse_reference, references_in};
use super::store_selection::ALIASED_SECTIONS;
use super::user_file::{unread_user_config, why_not_read};
use serde::Serialize;
use std::ffi::OsString;
use toml::Value;

/// One layer of `config sources`.
#[derive(Debug, Clone, Serialize)]
pub struct Source {
    /// `default`, `file`, `env` (a store variable), `reference` (a variable an `env:` reference
    /// names) or `unread-file` (a user-level config file that is there but never read).
    pub kind: &'static str,
    /// The variable's name, or the file's path.
    pub name: Option<String>,
    /// Whether the layer supplies anything now (the file exists, the variable is set).
    pub active: bool,
    /// A store variable's value (an alias such as `local`; never a referenced variable's value).
    pub value: Option<String>,
    /// The TOML path a store variable shadows.
    pub shadows: Option<String>,
    /// The keys whose `env:` references name the variable.
    pub referenced_by: Vec<String>,
    /// How the file was found.
    pub how: Option<String>,
}

fn how_found(doc: &ConfigDocument) -> String {
    match doc.source {
        ConfigSource::Env => "via $AGENT_ENV_CONFIG".to_string(),
        ConfigSource::RootOption => via_root_option(doc),
        ConfigSource::WalkUp => "discovered by walking up".to_string(),
        ConfigSource::None => format!(
            "none found — walked up from {} to /",
            doc.search_root.display()
        ),
        ConfigSource::Error => format!(
            "{}: {}",
            match doc.chosen_by {
                Some(_) => via_root_option(doc),
                None => "discovery failed".to_string(),
            },
            doc.error.as_ref().map(|p| p.reason.as_str()).unwrap_or("")
        ),
    }
}

/// `via CLI root option '--tenant' from 'agentenv-tenant'`: the option that chose the file.
fn via_root_option(doc: &ConfigDocument) -> String {
    let by = doc
        .chosen_by
        .as_ref()
        .map_or("a root option", |c| c.by.as_str());
    format!("via {by}")
}

/// Every path `config debug` lists, in the order discovery considers them: the file a root option
/// chose (which wins), then `$AGENT_ENV_CONFIG` when set and each walk-up path; last, a user-level
/// config file that is there but never read, with why.
pub fn debug_candidates(doc: &ConfigDocument, env_value: Option<OsString>) -> Vec<Candidate> {
    let mut out = candidates(env_value, doc.env.cwd());
    if let Some(choice) = &doc.chosen_by {
        chosen_by_root_option(doc, choice, &mut out);
    }
    if let Some(path) = unread_user_config(doc) {
        out.push(Candidate {
            path: path.display().to_string(),
            via: "user-level",
            chosen_by: None,
            exists: true,
            chosen: false,
            note: Some(why_not_read()),
        });
    }
    out
}

/// The file a root option chose, first among the candidates, and the only one chosen.
fn chosen_by_root_option(
    doc: &ConfigDocument,
    choice: &super::document::RootOptionChoice,
    out: &mut Vec<Candidate>,
) {
    for candidate in out.iter_mut() {
        candidate.chosen = false;
    }
    let path = doc
        .path
        .clone()
        .unwrap_or_else(|| doc.search_root.join(&choice.path));
    out.insert(
        0,
        Candidate {
            exists: std::fs::symlink_metadata(&path).is_ok(),
            chosen: doc.source == ConfigSource::RootOption,
            path: path.display().to_string(),
            via: "root-option",
            chosen_by: Some(choice.by.clone()),
            note: None,
        },
    );
}

/// Every layer, lowest precedence first.
pub fn sources(doc: &ConfigDocument, env: &dyn Fn(&str) -> Option<String>) -> Vec<Source> {
    let mut out = vec![
        Source {
            kind: "default",
            name: None,
            active: true,
            value: None,
            shadows: None,
            referenced_by: Vec::new(),
            how: Some("built-in defaults".into()),
        },
        Source {
            kind: "file",
            name: doc.path_display(),
            active: doc.path.is_some() && doc.error.is_none(),
            value: None,
            shadows: None,
            referenced_by: Vec::new(),
            how: Some(how_found(doc)),
        },
    ];
    for section in ALIASED_SECTIONS {
        // A connection string's password is masked, as everywhere a value is shown.
        let value = env(section.env_var)
            .filter(|v| !v.is_empty())
            .map(|v| super::mask::mask_str(&v, false));
        out.push(Source {
            kind: "env",
            name: Some(section.env_var.to_string()),
            active: value.is_some(),
            value,
            shadows: Some(section.table_name()),
            referenced_by: Vec::new(),
            how: None,
        });
    }
    let mut found = Vec::new();
    references_in(&Value::Table(doc.table.clone()), "", &mut found);
    let mut referenced: Vec<(String, Vec<String>)> = Vec::new();
    for (key, text) in found {
        let Some(reference) = parse_reference(&text) else {
            continue;
        };
        if reference.scheme != "env" {
            continue;
        }
        let place = format!("[{key}]");
        match referenced.iter_mut().find(|(n, _)| n == reference.name) {
            Some((_, places)) => places.push(place),
            None => referenced.push((reference.name.to_string(), vec![place])),
        }
    }
    for (name, places) in referenced {
        out.push(Source {
            kind: "reference",
            active: env(&name).is_some(),
            name: Some(name),
            value: None,
            shadows: None,
            referenced_by: places,
            how: None,
        });
    }
    if let Some(path) = unread_user_config(doc) {
        out.push(Source {
            kind: "unread-file",
            name: Some(path.display().to_string()),
            active: false,
            value: None,
            shadows: None,
            referenced_by: Vec::new(),
            how: Some(why_not_read()),
        });
    }
    out
}

fn arrow(active: bool) -> &'static str {
    if active {
        "-> "
    } else {
        "   "
    }
}

/// The text of `config sources`.
pub fn render_sources(sources: &[Source]) -> String {
    let mut out = String::new();
    for s in sources {
        let line = match s.kind {
            "default" => "default  built-in defaults".to_string(),
            "file" | "unread-file" => format!(
                "file {}  ({})",
                s.name.as_deref().unwrap_or("(none)"),
                s.how.as_deref().unwrap_or("")
            ),
            "env" => match &s.value {
                Some(v) => format!(
                    "${}={v}  shadows {}",
                    s.name.as_deref().unwrap_or(""),
                    s.shadows.as_deref().unwrap_or("")
                ),
                None => format!(
                    "${} (unset)  would shadow {}",
                    s.name.as_deref().unwrap_or(""),
                    s.shadows.as_deref().unwrap_or("")
                ),
            },
            _ => format!(
                "${}  referenced by {}{}",
                s.name.as_deref().unwrap_or(""),
                s.referenced_by.join(", "),
                if s.active { "" } else { ", unset" }
            ),
        };
        out.push_str(arrow(s.active));
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The text of `config debug`.
pub fn render_candidates(candidates: &[Candidate]) -> String {
    candidates
        .iter()
        .map(|c| {
            format!(
                "{}{} ({}, exists: {}){}\n",
                arrow(c.chosen),
                c.path,
                c.chosen_by
                    .as_ref()
                    .map_or(c.via.to_string(), |by| format!("via {by}")),
                if c.exists { "yes" } else { "no" },
                c.note
                    .as_ref()
                    .map(|note| format!(": {note}"))
                    .unwrap_or_default()
            )
        })
        .collect()
}
