//! The check after an install, in a fresh process: `agent-env plugin show NAME --json` must list at least
//! one contribution, each `active` or `replaced`, or the package's manifest must declare a store under
//! `[provides.stores]`. The report starts a store plugin only when `[stores.<kind>]` selects one of its
//! stores, so a package that declares stores is also started by `agent-env plugin verify NAME --json`:
//! it must answer `initialize` with the store classes its manifest declares (holding it to the store
//! contract is `agent-env store check KIND`'s job). A package whose `exec` names a file beside its
//! manifest by a relative argument is refused without being started: wherever agent-env runs, a
//! file of that name there would run in its place.

use std::process::Command;

use agent_env_protocol::manifest::Manifest;
use serde_json::Value;

use crate::output::Output;

/// Checks `name`; writes `  NAME: <group> <name> <status>[ (reason)]` lines and returns the problems.
pub fn check_package(name: &str, out: &dyn Output) -> Vec<String> {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return vec![format!(
                "could not check {name}: cannot find agent-env itself: {e}"
            )]
        }
    };
    let doc = match answer_of(&exe, &["plugin", "show", name, "--json"], name) {
        Ok(doc) => doc,
        Err(problem) => return vec![problem],
    };
    if doc["format_version"] != 1 {
        return vec![format!(
            "{name}: the check answered format_version {}, not 1; upgrade agent-env first",
            doc["format_version"]
        )];
    }
    let contributions = doc["plugins"][0]["contributions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let manifest = match installed_manifest(&doc) {
        Ok(manifest) => manifest,
        Err(problem) => return vec![format!("could not check {name}: {problem}")],
    };
    // Started, it would run a file of that name in the folder agent-env runs in: not started at all.
    if let Some(refused) = manifest.as_ref().and_then(relative_argument) {
        return vec![format!("plugin {name} was not started: {refused}")];
    }
    let stores: Vec<(String, String)> = manifest
        .map(|m| m.stores.into_iter().collect())
        .unwrap_or_default();
    if contributions.is_empty() && stores.is_empty() {
        return vec![format!(
            "{name} declares no contributions and no stores, so it is not an agent-env plugin"
        )];
    }
    for (class, kind) in &stores {
        out.line(&format!("  {name}: stores {class} ({kind} store)"));
    }
    if contributions.is_empty() {
        return starts_with_its_stores(&exe, name);
    }
    // The report starts a store plugin only for the store the config selects: whatever else it
    // gives, a plugin that declares stores is held to them as `plugin verify` holds it.
    let store_problems = if stores.is_empty() {
        Vec::new()
    } else {
        starts_with_its_stores(&exe, name)
    };
    // Not a reason to refuse it (every command that starts it says so), but said now, while it is new.
    if let Some(noise) = noise_of(name, &doc["process"]) {
        out.note(&format!("warning: {noise}"));
    }
    let mut problems = Vec::new();
    for c in &contributions {
        let group = c["group"].as_str().unwrap_or("");
        let group = group.strip_prefix("agent_env.").unwrap_or(group);
        let cname = c["name"].as_str().unwrap_or("");
        let status = c["status"].as_str().unwrap_or("");
        let reason = c["reason"]
            .as_str()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        out.line(&format!("  {name}: {group} {cname} {status}{reason}"));
        // In effect, but of a group no run here uses: not a reason to refuse it, said while it is new.
        if status == "active" {
            let package = doc["plugins"][0]["name"].as_str().unwrap_or(name);
            if let Some(unused) =
                crate::registry::unused_here::unused_contribution_warning(package, group, cname)
            {
                out.note(&format!("warning: {unused}"));
            }
        }
        if status != "active" && status != "replaced" {
            let why = c["reason"]
                .as_str()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            problems.push(format!(
                "{name}: {group} {cname} did not take effect ({status}){why}"
            ));
        }
    }
    problems.extend(store_problems);
    problems
}

/// The warning for a checked process (`plugin show --json`'s `process`) that wrote lines to stdout
/// that are not protocol messages.
fn noise_of(name: &str, process: &Value) -> Option<String> {
    let count = process["noise_count"].as_u64().filter(|n| *n > 0)?;
    let first = process["noise_lines"][0].as_str().unwrap_or("");
    Some(agent_env_host::noise_warning(name, count, first))
}

/// The verify checks that say whether a package starts and answers with what its manifest declares;
/// the protocol's finer rules are `plugin verify`'s to report, not reasons to refuse an install.
const STARTS_CHECKS: [&str; 2] = ["initialize", "manifest"];

/// Starts a store-only package through `agent-env plugin verify NAME --json`; the problems are its
/// failed [`STARTS_CHECKS`].
fn starts_with_its_stores(exe: &std::path::Path, name: &str) -> Vec<String> {
    let doc = match answer_of(exe, &["plugin", "verify", name, "--json"], name) {
        Ok(doc) => doc,
        Err(problem) => return vec![problem],
    };
    doc["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| {
            f["status"] == "failed"
                && STARTS_CHECKS.contains(&f["check"].as_str().unwrap_or_default())
        })
        .map(|f| {
            format!(
                "{name} did not start as its manifest says ({}): {}",
                f["check"].as_str().unwrap_or_default(),
                f["message"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

/// Runs agent-env (`exe`) with `args` in a fresh process: the JSON document it printed, or the
/// problem checking `name` ran into instead (its error document, or its stderr when it printed no JSON).
fn answer_of(exe: &std::path::Path, args: &[&str], name: &str) -> Result<Value, String> {
    let output = Command::new(exe)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("could not check {name}: {e}"))?;
    match serde_json::from_slice::<Value>(&output.stdout) {
        Ok(doc) if doc["status"] == "error" => Err(format!(
            "could not check {name}: {}",
            doc["error"].as_str().unwrap_or_default()
        )),
        Ok(doc) => Ok(doc),
        Err(_) => Err(format!(
            "could not check {name}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )),
    }
}

/// The manifest the report names, when it names one.
fn installed_manifest(doc: &Value) -> Result<Option<Manifest>, String> {
    let Some(path) = doc["manifest"]["path"].as_str() else {
        return Ok(None);
    };
    Manifest::load(std::path::Path::new(path))
        .map(Some)
        .map_err(|e| e.to_string())
}

/// Why `manifest` may not be started, when an argument of its `exec` after the first names a file
/// beside it by a relative path: the host's words for the refusal (`relative-argument`).
fn relative_argument(manifest: &Manifest) -> Option<String> {
    let arg = manifest.relative_file_args().into_iter().next()?;
    Some(format!(
        "whatever file of that name the folder agent-env runs in holds would run in its place; {}",
        agent_env_host::exec_arguments::relative_argument_reason(&manifest.path, arg)
    ))
}
