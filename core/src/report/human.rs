//! The human layouts of `plugin list`, `plugin show` and `plugin check` (`docs/plugin-report.md`).
//! Scripts should read the JSON: this text is for people and may change.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::documents::{CheckResult, ManifestInfo};
use super::model::{Contribution, Distribution, Report};
use super::MANIFEST_GROUP;
use crate::registry::outcome::Status;
use crate::registry::ProcessDiagnosis;

/// The trailing line of `--no-load` output.
pub const NO_LOAD_LINE: &str = "--no-load: no plugin was started (manifests only).";

/// (singular, plural) kind words of a report group.
pub fn kind_words(group: &str) -> (&'static str, &'static str) {
    match group.strip_prefix("agent_env.").unwrap_or(group) {
        "envs" => ("env", "envs"),
        "artifacts" => ("artifact", "artifacts"),
        "task_steps" => ("task step", "task steps"),
        "sandbox_providers" => ("sandbox provider", "sandbox providers"),
        "state_providers" => ("state provider", "state providers"),
        "env_providers" => ("environment provider", "environment providers"),
        "explorer_plugins" => ("explorer plugin", "explorer plugins"),
        "cli_plugins" => ("CLI command", "CLI commands"),
        "cli_root_options" => ("root option", "root options"),
        "bundles" => ("bundle", "bundles"),
        _ if group == MANIFEST_GROUP => ("manifest", "manifests"),
        _ => ("contribution", "contributions"),
    }
}

/// Lines 1-2 of every layout, then the config and discovery errors, then a blank line.
pub fn header(report: &Report) -> String {
    let mut out = format!(
        "agent-env {} \u{b7} {} at {}\n",
        report.agent_env.version, report.agent_env.environment, report.agent_env.location
    );
    let _ = writeln!(
        out,
        "config: {}",
        report.config.path.as_deref().unwrap_or("(none)")
    );
    if let Some(e) = &report.config.error {
        let _ = writeln!(out, "(error) {} [{}]", e.reason, e.code);
    }
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for d in report.discovery_errors.values() {
        if seen.contains(&(d.reason.as_str(), d.code.as_str())) {
            continue;
        }
        seen.push((d.reason.as_str(), d.code.as_str()));
        let groups: Vec<&str> = report
            .discovery_errors
            .iter()
            .filter(|(_, x)| x.reason == d.reason)
            .map(|(g, _)| g.as_str())
            .collect();
        let _ = writeln!(
            out,
            "(error) installed entry points could not be read for {}: {} [{}]",
            groups.join(", "),
            d.reason,
            d.code
        );
    }
    out.push('\n');
    out
}

/// The PROVIDES cell: the row's contributions, then the stores its manifest declares (class → kind),
/// which are not contributions in the report's format.
pub fn provides(dist: &Distribution, stores: &BTreeMap<String, String>) -> String {
    let items: Vec<(String, &str)> = dist
        .contributions
        .iter()
        .map(|c| (kind_words(&c.group).0.to_string(), c.name.as_str()))
        .chain(
            stores
                .iter()
                .map(|(class, kind)| (format!("{kind} store"), class.as_str())),
        )
        .collect();
    if items.len() <= 3 {
        return items
            .iter()
            .map(|(kind, name)| format!("{kind} {name}"))
            .collect::<Vec<_>>()
            .join(", ");
    }
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for c in &dist.contributions {
        match counts.iter_mut().find(|(g, _)| *g == c.group) {
            Some((_, n)) => *n += 1,
            None => counts.push((&c.group, 1)),
        }
    }
    let mut cells: Vec<String> = counts
        .iter()
        .map(|(g, n)| {
            let (one, many) = kind_words(g);
            format!("{n} {}", if *n == 1 { one } else { many })
        })
        .collect();
    if !stores.is_empty() {
        let n = stores.len();
        cells.push(format!("{n} {}", if n == 1 { "store" } else { "stores" }));
    }
    cells.join(", ")
}

/// The STATUS cell.
pub fn status_cell(dist: &Distribution) -> String {
    let non_active: Vec<&Contribution> = dist
        .contributions
        .iter()
        .filter(|c| c.status != Status::Active)
        .collect();
    if non_active.is_empty() {
        return "ok".into();
    }
    if non_active.iter().all(|c| c.status == Status::Unloaded) {
        return "not loaded".into();
    }
    Status::SUMMARY_ORDER
        .iter()
        .filter_map(|s| {
            let n = non_active.iter().filter(|c| c.status == *s).count();
            (n > 0).then(|| format!("{n} {}", s.as_str()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Left-aligned columns two spaces apart; the last column is not padded.
fn table(rows: &[Vec<String>], indent: &str) -> String {
    crate::table::lines(rows)
        .into_iter()
        .map(|line| format!("{indent}{line}\n"))
        .collect()
}

/// The group errors, each after a blank line.
fn group_error_lines(report: &Report, indent: &str, only: Option<&[String]>) -> String {
    let mut out = String::new();
    for (group, d) in &report.group_errors {
        if only.is_some_and(|groups| !groups.contains(group)) {
            continue;
        }
        let _ = write!(
            out,
            "\n{indent}(error) nothing in {group} loads: {} [{}]\n",
            d.reason, d.code
        );
    }
    out
}

/// `plugin list`; `stores` holds, row by row, the stores each package's manifest declares.
pub fn list(report: &Report, stores: &[BTreeMap<String, String>]) -> String {
    let none = BTreeMap::new();
    let mut out = header(report);
    if report.plugins.is_empty() {
        out.push_str("No plugins installed.\n");
    } else {
        let mut rows = vec![vec![
            "PACKAGE".to_string(),
            "VERSION".to_string(),
            "PROVIDES".to_string(),
            "STATUS".to_string(),
        ]];
        for (i, d) in report.plugins.iter().enumerate() {
            let stores = stores.get(i).unwrap_or(&none);
            // A package that provides nothing is no plugin (its warning says what to do), not `ok`.
            let status = if d.contributions.is_empty() && stores.is_empty() {
                "provides nothing".to_string()
            } else {
                status_cell(d)
            };
            rows.push(vec![
                d.name.clone(),
                d.version.clone(),
                provides(d, stores),
                status,
            ]);
        }
        out.push_str(&table(&rows, ""));
    }
    out.push_str(&group_error_lines(report, "", None));
    if !report.loaded {
        let _ = write!(out, "\n{NO_LOAD_LINE}\n");
    }
    out
}

/// `<status>: <reason> [<code>]`, or just the status. A reason of several lines (a failed start's
/// stderr follows its first) keeps its code on the first; the rest follows on the lines after it.
pub fn outcome(c: &Contribution) -> String {
    let (line, rest) = reason_lines(c);
    match rest {
        Some(rest) => format!("{line}\n{rest}"),
        None => line,
    }
}

/// [`outcome`]'s first line alone, for a row whose details are shown elsewhere (`plugin show`
/// prints the process's stderr above its rows).
pub fn outcome_line(c: &Contribution) -> String {
    reason_lines(c).0
}

fn reason_lines(c: &Contribution) -> (String, Option<&str>) {
    let status = c.status.as_str();
    let Some(reason) = &c.reason else {
        return (status.to_string(), None);
    };
    let (first, rest) = match reason.split_once('\n') {
        Some((first, rest)) => (first, Some(rest)),
        None => (reason.as_str(), None),
    };
    let line = match &c.code {
        Some(code) => format!("{status}: {first} [{code}]"),
        None => format!("{status}: {first}"),
    };
    (line, rest)
}

/// What `plugin show` prints about one package beyond its rows.
pub struct ShowDetails<'a> {
    /// `requires:` text, or `None` for agent-env itself.
    pub requires: Option<String>,
    /// What of the environment its manifest asks for, when it asks.
    pub env: Option<String>,
    pub location: String,
    pub config_effect: Option<&'a str>,
    pub manifest: &'a ManifestInfo,
    pub process: Option<&'a ProcessDiagnosis>,
    /// The store classes its manifest declares, class → kind.
    pub stores: &'a std::collections::BTreeMap<String, String>,
}

/// `plugin show PACKAGE`.
pub fn show(report: &Report, dist: &Distribution, details: &ShowDetails<'_>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} {}", dist.name, dist.version);
    match &details.requires {
        Some(r) => {
            let _ = writeln!(out, "  requires: {r}");
        }
        None => out.push_str("  agent-env itself\n"),
    }
    let _ = writeln!(out, "  location: {}", details.location);
    if let Some(env) = &details.env {
        let _ = writeln!(out, "  env:      {env}");
    }
    if let Some(effect) = details.config_effect {
        let _ = writeln!(out, "  config:   {effect}");
    }
    out.push_str(&manifest_lines(details.manifest));
    if !details.stores.is_empty() {
        let declared: Vec<String> = details
            .stores
            .iter()
            .map(|(class, kind)| format!("{kind} store {class}"))
            .collect();
        let _ = writeln!(
            out,
            "  stores:   {} (each started when [stores.<kind>] impl names it as {}:<Class>)",
            declared.join(", "),
            dist.name
        );
    }
    if let Some(p) = details.process {
        out.push_str(&process_lines(p));
    }
    out.push('\n');
    let rows: Vec<Vec<String>> = dist
        .contributions
        .iter()
        .map(|c| {
            vec![
                kind_words(&c.group).0.to_string(),
                c.name.clone(),
                c.value.clone(),
                outcome_line(c),
            ]
        })
        .collect();
    out.push_str(&table(&rows, "  "));
    let groups: Vec<String> = dist.contributions.iter().map(|c| c.group.clone()).collect();
    out.push_str(&group_error_lines(report, "  ", Some(&groups)));
    if !report.loaded {
        let _ = write!(out, "\n{NO_LOAD_LINE}\n");
    }
    out
}

fn manifest_lines(m: &ManifestInfo) -> String {
    let mut out = String::new();
    if let Some(path) = &m.path {
        match &m.source {
            Some(source) => {
                let _ = writeln!(out, "  manifest: {path} (from {source})");
            }
            None => {
                let _ = writeln!(out, "  manifest: {path}");
            }
        }
    }
    for s in &m.shadowed {
        let _ = writeln!(out, "  shadowed: {} {} (not used)", s.path, s.version);
    }
    if !m.exec.is_empty() {
        let executable = m
            .executable
            .clone()
            .unwrap_or_else(|| "(not found)".to_string());
        let _ = writeln!(out, "  exec:     {} -> {executable}", m.exec.join(" "));
    }
    if let Some(protocol) = &m.protocol {
        let _ = writeln!(out, "  protocol: speaks {protocol}");
    }
    out
}

fn ms(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1} ms"))
        .unwrap_or_else(|| "-".into())
}

fn process_lines(p: &ProcessDiagnosis) -> String {
    let mut out = String::new();
    let Some(pid) = p.pid else {
        let _ = writeln!(out, "  process:  not started");
        return out;
    };
    let protocol = p
        .protocol
        .map(|v| v.to_string())
        .unwrap_or_else(|| "none agreed".into());
    let answered = match p.initialize_ms {
        Some(_) => format!("answered initialize in {}", ms(p.initialize_ms)),
        None => "no answer to initialize".to_string(),
    };
    let _ = writeln!(
        out,
        "  process:  pid {pid}, protocol {protocol}, started in {}, {answered}",
        ms(p.spawn_ms)
    );
    if let Some(ended) = &p.ended {
        let _ = writeln!(out, "  ended:    {ended}");
    }
    if p.noise_count > 0 {
        let _ = writeln!(
            out,
            "  stdout:   {} line(s) that are not protocol messages:",
            p.noise_count
        );
        for line in &p.noise_lines {
            let _ = writeln!(out, "            | {line}");
            // A message gone wrong is no log line: what is wrong with it.
            if let Some(meant) = agent_env_protocol::peer::classify(line.as_bytes()) {
                let _ = writeln!(out, "              (meant as a message: {})", meant.defect);
            }
        }
    }
    let tail: Vec<&str> = p.stderr_tail.lines().collect();
    if tail.is_empty() {
        out.push_str("  stderr:   (nothing)\n");
    } else {
        out.push_str("  stderr:   last lines:\n");
        for line in &tail[tail.len().saturating_sub(20)..] {
            let _ = writeln!(out, "            | {line}");
        }
    }
    out
}

/// `plugin check` (its stdout; the `Error:` line goes to stderr).
pub fn check(report: &Report, result: &CheckResult) -> String {
    let mut out = String::new();
    for p in &result.problems {
        let c = &p.contribution;
        let _ = writeln!(
            out,
            "{} {}: {} {}: {}",
            p.package,
            p.version,
            kind_words(&c.group).0,
            c.name,
            outcome(c)
        );
    }
    if let Some(e) = &report.config.error {
        let _ = writeln!(out, "config: {} [{}]", e.reason, e.code);
    }
    for (group, d) in &report.discovery_errors {
        let _ = writeln!(
            out,
            "installed entry points could not be read for {group}: {} [{}]",
            d.reason, d.code
        );
    }
    if result.ok() {
        let _ = write!(
            out,
            "ok: {} plugin package(s), {} contribution(s)",
            result.packages, result.contributions
        );
        if result.replaced > 0 {
            let _ = write!(out, "; {} replaced by config", result.replaced);
        } else {
            out.push_str(", all in effect");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_of_several_lines_keeps_its_code_on_the_first() {
        let c = Contribution {
            group: "agent_env.task_steps".into(),
            name: "bad".into(),
            value: "Bad".into(),
            status: Status::Failed,
            code: Some("exited-at-start".into()),
            reason: Some("failed to load: it exited\nits stderr ends with:\n    boom".into()),
            replaced_by: None,
            conflicts_with: Vec::new(),
        };
        assert_eq!(
            outcome(&c),
            "failed: failed to load: it exited [exited-at-start]\nits stderr ends with:\n    boom"
        );
        assert_eq!(
            outcome_line(&c),
            "failed: failed to load: it exited [exited-at-start]"
        );
    }
}
