//! `agent-env plugin list | check`: the plugin report, read from the registry, as a table or JSON,
//! with the warnings that go with it; `check` exits 1 when a contribution did not take effect.

use crate::cli::{Exit, Failure, Terminal};
use crate::registry::Registry;
use crate::report::documents::{self, CheckDocument};
use crate::report::{build_report, human, BuiltReport};
use crate::session::{RegistryLoad, Session};

use super::ReportArgs;

/// Builds the registries and the report. The registries' warnings (what the original logs while
/// building them) go to stderr with `--verbose` only, as the report already says it all.
pub(super) fn collect<'s>(
    args: &ReportArgs,
    verbose: bool,
    session: &'s Session,
    term: &Terminal,
) -> (&'s Registry, BuiltReport) {
    let load = if args.no_load {
        RegistryLoad::None
    } else {
        RegistryLoad::All
    };
    let registry = session.registry(load);
    if verbose {
        for w in &registry.warnings {
            term.warn(w);
        }
    }
    let built = build_report(registry, &session.paths().plugins_dir());
    (registry, built)
}

/// `plugin list`: every package, what it provides, and its status.
pub(super) fn list(args: &ReportArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    let (registry, built) = collect(args, verbose, session, term);
    let mut warnings = session.take_plugin_warnings();
    warnings.extend(crate::report::noise::warnings(registry));
    warnings.extend(crate::report::shutdown_exit::warnings(registry));
    warnings.extend(crate::report::unused::warnings(registry, None));
    warnings.extend(crate::report::provides_nothing::warnings(registry, None));
    warnings.extend(crate::report::outdated_pins::warnings(
        registry,
        &session.paths().plugins_dir(),
        None,
    ));
    for w in &warnings {
        term.warn(w);
    }
    if args.json {
        // The warnings ride in an extra top-level `warnings` key, present only when there are some, so a
        // format 1 reader sees the same document.
        match serde_json::to_value(&built.report) {
            Ok(serde_json::Value::Object(mut doc)) if !warnings.is_empty() => {
                doc.insert("warnings".into(), warnings.into());
                term.print(&documents::to_json(&doc));
            }
            _ => term.print(&documents::to_json(&built.report)),
        }
    } else {
        term.print(&human::list(&built.report, &built.stores_by_row(registry)));
        for note in why_notes(&built.report) {
            term.eprintln(&note);
        }
    }
    Ok(0)
}

/// How many packages [`why_notes`] names one by one; the rest are counted in one line.
const WHY_NOTES_NAMED: usize = 5;

/// For each package with a contribution that failed, conflicts or is blocked (among the problems
/// `plugin check` fails for), where to read why: the table has no room for reasons, and `plugin
/// list` exits 0. The first few packages get a note each; past them, one line counts the rest and
/// names the command that lists every problem (the table marks each row already). A skipped one is
/// said by the warnings `--verbose` prints.
fn why_notes(report: &crate::report::model::Report) -> Vec<String> {
    use crate::registry::outcome::Status;
    let troubled: Vec<_> = report
        .plugins
        .iter()
        .filter(|d| {
            d.contributions.iter().any(|c| {
                matches!(
                    c.status,
                    Status::Failed | Status::Conflict | Status::Blocked
                )
            })
        })
        .collect();
    let mut notes: Vec<String> = troubled
        .iter()
        .take(WHY_NOTES_NAMED)
        .map(|d| {
            format!(
                "note: {}: {}; agent-env plugin show {} says why (agent-env plugin check lists every problem, and exits 1)",
                d.name,
                human::status_cell(d),
                crate::quote::word(&d.name)
            )
        })
        .collect();
    if let Some(more) = troubled
        .len()
        .checked_sub(WHY_NOTES_NAMED)
        .filter(|&n| n > 0)
    {
        notes.push(more_troubled_note(more));
    }
    notes
}

/// The line that counts the `more` troubled packages [`why_notes`] does not name.
fn more_troubled_note(more: usize) -> String {
    let (packages, verbs) = if more == 1 {
        ("package", "failed, conflicts or is blocked")
    } else {
        ("packages", "failed, conflict or are blocked")
    };
    format!("note: {more} more {packages} {verbs}: agent-env plugin check lists every problem")
}

/// `plugin check`: exit 1 if any contribution did not take effect.
pub(super) fn check(args: &ReportArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    let (registry, built) = collect(args, verbose, session, term);
    for w in crate::report::noise::warnings(registry) {
        term.warn(w);
    }
    let result = documents::check(&built.report);
    // Unsafe plugin paths (as plugin list says them), plugins that exited with a code other than 0
    // once shut down, bundles that cannot run and contributions no run uses: for a person on
    // stderr, for a script in the document too.
    let mut warnings = session.take_plugin_warnings();
    warnings.extend(crate::report::shutdown_exit::warnings(registry));
    warnings.extend(unrunnable_bundles(session));
    warnings.extend(crate::report::unused::warnings(registry, None));
    warnings.extend(crate::report::provides_nothing::warnings(registry, None));
    warnings.extend(crate::report::outdated_pins::warnings(
        registry,
        &session.paths().plugins_dir(),
        None,
    ));
    for w in &warnings {
        term.warn(w);
    }
    if args.json {
        let doc = CheckDocument {
            ok: result.ok(),
            problems: result.problems.clone(),
            report: built.report,
            warnings,
        };
        term.print(&documents::to_json(&doc));
        return Ok(if result.ok() { 0 } else { 1 });
    }
    term.print(&human::check(&built.report, &result));
    if result.ok() {
        Ok(0)
    } else {
        Err(Failure::new(result.reasons.join("; ")))
    }
}

/// A sentence for each bundle a plugin installs that `agent-env run` would refuse for its step
/// types: the plugin checks out, but what it ships cannot run here.
fn unrunnable_bundles(session: &Session) -> Vec<String> {
    let home = session.paths().home_dir();
    crate::bundle::installed(&session.manifests())
        .iter()
        .filter(|b| !b.is_core())
        .filter_map(|b| {
            let parsed = b.parse(home.as_deref()).ok()?;
            let missing = crate::run::bundle_run::missing_step_types(session, &parsed);
            (!missing.is_empty()).then(|| {
                format!(
                    "the bundle '{}' of {} cannot run here: {}",
                    b.run_name(),
                    b.package,
                    crate::run::bundle_run::missing_step_types_sentence(&missing)
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_of_more_troubled_packages_agrees_with_its_number() {
        assert_eq!(
            more_troubled_note(1),
            "note: 1 more package failed, conflicts or is blocked: agent-env plugin check lists every problem"
        );
        assert_eq!(
            more_troubled_note(45),
            "note: 45 more packages failed, conflict or are blocked: agent-env plugin check lists every problem"
        );
    }
}
