//! `agent-env plugin add | remove`: the options [`crate::install`] is handed, what it takes from the
//! session, and what the change's [`ChangeReport`] becomes here: the exit code, the error, and with
//! `--json` one document saying how the change ended.
//!
//! Exit codes: 0 (added, removed, unchanged, a dry run), 1 (declined, refused, rolled back, kept,
//! failed), 2 (usage: `--json` without `--yes` or `--dry-run`, or no terminal to ask on), 130
//! (interrupted: at the `Proceed?` question, nothing changed, or later, the plugins directory put
//! back).

use crate::cli::{Exit, Failure, Terminal};
use crate::install::{ChangeOutcome, ChangeReport, InstallError};
use crate::output::{Collected, Output, Stream};
use crate::report::documents;
use crate::session::Session;

use super::index_urls::{check_index_url, remember_index_credentials};
use super::{AddArgs, RemoveArgs};

/// `plugin add SPEC…`.
pub(super) fn add(a: &AddArgs, session: &Session, term: &Terminal) -> Exit {
    let indexes = a.index_url.iter().map(|u| ("--index-url", u));
    for (flag, url) in indexes.chain(a.extra_index_url.iter().map(|u| ("--extra-index-url", u))) {
        // The credentials in the URL (a private index's token) are masked wherever it is
        // shown, this command's own refusal included.
        remember_index_credentials(url);
        check_index_url(flag, url)?;
    }
    // A spec's URL (`NAME @ https://user:token@host/...`, a bare wheel URL, `git+https://TOKEN@...`)
    // carries credentials the same way.
    for url in a.specs.iter().flat_map(|spec| urls_in(spec)) {
        remember_index_credentials(url);
    }
    let options = crate::install::add::AddOptions {
        specs: a.specs.clone(),
        installer: a.installer,
        dry_run: a.dry_run,
        yes: a.yes,
        keep: a.keep,
        pip: crate::install::plan::PipOptions {
            index_url: a.index_url.clone(),
            extra_index_urls: a.extra_index_url.clone(),
            reinstall: a.reinstall,
            no_index: session
                .env()
                .var("PIP_NO_INDEX")
                .is_some_and(|value| crate::install::plan::pip_switch_on(&value)),
        },
    };
    let asked = Asked {
        command: "add",
        requested: &a.specs,
        json: a.json,
        cannot_ask: a.dry_run || a.yes,
    };
    changing(&asked, session, term, |out| {
        crate::install::add::add(&options, &install_context(session, out, a.wait))
    })
}

/// `plugin remove PACKAGE…`.
pub(super) fn remove(a: &RemoveArgs, session: &Session, term: &Terminal) -> Exit {
    let options = crate::install::remove::RemoveOptions {
        packages: a.packages.clone(),
        force: a.force,
        dry_run: a.dry_run,
        yes: a.yes,
        check_usage: a.check_usage,
    };
    let asked = Asked {
        command: "remove",
        requested: &a.packages,
        json: a.json,
        cannot_ask: a.dry_run || a.yes,
    };
    changing(&asked, session, term, |out| {
        crate::install::remove::remove(&options, &install_context(session, out, a.wait))
    })
}

/// The URLs written in a spec, each from its scheme on (`x @ https://…`, `x@https://…`, a bare URL).
fn urls_in(spec: &str) -> impl Iterator<Item = &str> {
    spec.split_whitespace().filter_map(|word| {
        let separator = word.find("://")?;
        let scheme_start = word[..separator]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |before| before + 1);
        Some(&word[scheme_start..])
    })
}

/// What the command line asked of a change.
struct Asked<'a> {
    /// `add` or `remove`.
    command: &'static str,
    /// The specs or packages as given.
    requested: &'a [String],
    /// `--json`.
    json: bool,
    /// `--yes` or `--dry-run`: the change will not ask `Proceed?`.
    cannot_ask: bool,
}

/// Runs `plugin add` or `plugin remove`: its lines to the terminal, or with `--json` one document
/// that says how it ended (`outcome`), the problems, the lines it would have printed and the packages
/// installed afterwards.
fn changing(
    asked: &Asked<'_>,
    session: &Session,
    term: &Terminal,
    change: impl FnOnce(&dyn Output) -> ChangeReport,
) -> Exit {
    if !asked.json {
        let report = change(term);
        let code = exit_code(&report.outcome);
        return match report.outcome {
            ChangeOutcome::Failed(InstallError::InterruptedAtQuestion(signal)) => {
                let nothing = match asked.command {
                    "add" => "installed",
                    _ => "removed",
                };
                Ok(interrupted_at_question(nothing, signal, term))
            }
            ChangeOutcome::Failed(e) => Err(Failure::new(e).with_code(code)),
            _ => Ok(code),
        };
    }
    if !asked.cannot_ask {
        return Err(Failure::new(format!(
            "plugin {} --json cannot ask before changing anything: add --yes (or --dry-run)",
            asked.command
        ))
        .with_code(2));
    }
    let collected = Collected::default();
    let report = change(&CollectedForJson {
        collected: &collected,
        term,
    });
    // What is installed now, read again (the change happened after this session discovered), in
    // the order `plugin list` gives: by name, whichever installer put it there.
    let discovered = crate::discovery::discover(&session.search_path());
    let mut installed: Vec<(&str, &str)> = discovered
        .plugins
        .iter()
        .filter(|p| p.manifest.path.starts_with(session.paths().plugins_dir()))
        .map(|p| (p.manifest.name.as_str(), p.manifest.version.as_str()))
        .collect();
    installed.sort_by_key(|(name, version)| (name.to_lowercase(), *version));
    let installed: Vec<serde_json::Value> = installed
        .into_iter()
        .map(|(name, version)| serde_json::json!({"name": name, "version": version}))
        .collect();
    let said = Said {
        lines: collected.lines(Stream::Out),
        notes: collected.lines(Stream::Note),
        installed,
    };
    let doc = document(asked, &report, said);
    term.print(&documents::to_json(&doc));
    // As every command's failure, said on stderr too (what a person watching a script's log reads).
    if let Some(error) = doc["error"].as_str() {
        term.eprintln(&format!("Error: {error}"));
    }
    Ok(exit_code(&report.outcome))
}

/// Where a `--json` change's lines go: kept for its document, but for a wait (`--wait`), which is
/// also said on stderr as it begins, so a CI log shows why the job is standing still.
struct CollectedForJson<'a> {
    collected: &'a Collected,
    term: &'a Terminal,
}

impl Output for CollectedForJson<'_> {
    fn line(&self, text: &str) {
        self.collected.line(text);
    }

    fn note(&self, text: &str) {
        self.collected.note(text);
    }

    fn waiting(&self, text: &str) {
        self.collected.note(text);
        self.term.eprintln(text);
    }
}

/// What a change printed, and what is installed after it: the rest of its `--json` document.
struct Said {
    lines: Vec<String>,
    notes: Vec<String>,
    installed: Vec<serde_json::Value>,
}

/// The `--json` document of a change (`docs/json-output.md` describes its keys).
fn document(asked: &Asked<'_>, report: &ChangeReport, said: Said) -> serde_json::Value {
    serde_json::json!({
        "format_version": 1,
        "command": asked.command,
        // A spec's credentials masked by their place, however short.
        "requested": asked
            .requested
            .iter()
            .map(|spec| crate::redaction::mask_url_credentials(spec))
            .collect::<Vec<_>>(),
        "outcome": outcome_name(&report.outcome),
        "exit_code": exit_code(&report.outcome),
        "problems": report.problems,
        "error": error(asked.command, report),
        "lines": said.lines,
        "notes": said.notes,
        "installed": said.installed,
    })
}

/// The exit code of a change that ended in `outcome`.
fn exit_code(outcome: &ChangeOutcome) -> i32 {
    match outcome {
        ChangeOutcome::DryRun
        | ChangeOutcome::Unchanged
        | ChangeOutcome::Added
        | ChangeOutcome::Removed => 0,
        // As every command a signal stops: 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM).
        ChangeOutcome::Interrupted(signal)
        | ChangeOutcome::Failed(InstallError::InterruptedAtQuestion(signal)) => 128 + signal,
        // Without --yes or a terminal to ask on, the command line lacks what it needs.
        ChangeOutcome::Failed(InstallError::NoTerminal) => 2,
        ChangeOutcome::Declined
        | ChangeOutcome::Kept
        | ChangeOutcome::RolledBack
        | ChangeOutcome::Failed(_) => 1,
    }
}

/// The document's `outcome`: a declined change and a blocked removal are both `refused`.
fn outcome_name(outcome: &ChangeOutcome) -> &'static str {
    match outcome {
        ChangeOutcome::DryRun => "dry_run",
        ChangeOutcome::Unchanged => "unchanged",
        ChangeOutcome::Added => "added",
        ChangeOutcome::Removed => "removed",
        ChangeOutcome::Declined | ChangeOutcome::Failed(InstallError::Blocked) => "refused",
        ChangeOutcome::Kept => "kept",
        ChangeOutcome::RolledBack => "rolled_back",
        ChangeOutcome::Interrupted(_)
        | ChangeOutcome::Failed(InstallError::InterruptedAtQuestion(_)) => "interrupted",
        ChangeOutcome::Failed(_) => "failed",
    }
}

/// The document's `error`: why the change did not succeed, for a script. A change that ended in
/// problems (a failed installer, a rolled-back check) names them; `None` when it succeeded.
fn error(command: &str, report: &ChangeReport) -> Option<String> {
    match &report.outcome {
        // The terminal's sentence sends the reader to the `blocked:` lines above it; a document has
        // none above, so it names the blockers itself.
        ChangeOutcome::Failed(InstallError::Blocked) => Some(blocked(&report.problems)),
        ChangeOutcome::Failed(e) => Some(e.to_string()),
        ChangeOutcome::Interrupted(_) => {
            Some("interrupted; the plugins directory was restored as it was".to_owned())
        }
        outcome if exit_code(outcome) == 0 => None,
        outcome if report.problems.is_empty() => Some(format!(
            "plugin {command} did not finish (exit {})",
            exit_code(outcome)
        )),
        _ => Some(report.problems.join("; ")),
    }
}

/// Says that a signal (Ctrl-C) at the `Proceed?` question stopped the command with nothing
/// `nothing` (`installed`, `removed`, `pinned`): the question's line (on stdout, no newline after it)
/// is ended, and the notice said on a line of its own, as a signal's notices are; the exit code is
/// 128 + the number of the `signal` that came, as for any command a signal stopped.
pub(super) fn interrupted_at_question(nothing: &str, signal: i32, term: &Terminal) -> i32 {
    term.print("\n");
    crate::cli::terminal::eprint_notice(&format!(
        "Interrupted at the question: nothing was {nothing}."
    ));
    128 + signal
}

/// A blocked removal's `error` in a document: what blocks it, and what to do.
fn blocked(problems: &[String]) -> String {
    let uses = match problems {
        [] => String::new(),
        _ => format!(" ({})", problems.join("; ")),
    };
    format!("not removed while still in use{uses}; change what uses it, or pass --force to remove anyway")
}

/// What `plugin add` and `plugin remove` take from the session.
fn install_context<'a>(
    session: &Session,
    out: &'a dyn Output,
    wait_for_others: bool,
) -> crate::install::Context<'a> {
    let env = session.env();
    let paths = session.paths();
    crate::install::Context {
        plugins_dir: paths.plugins_dir(),
        locks_dir: paths.locks_dir(),
        state_root: paths.state_root(),
        home: paths.home_dir(),
        search: session.search_path(),
        remote_documents: remote_documents(session),
        config_path: crate::config::locate::locate(
            env.var_os(crate::config::locate::CONFIG_VAR)
                .map(Into::into),
            env.cwd(),
        )
        .path,
        out,
        wait_for_others,
    }
}

/// The configured document store when it is not on this machine (PostgreSQL, a plugin's): what
/// `plugin remove --check-usage` reads for stored uses of a package.
fn remote_documents(session: &Session) -> Option<crate::install::RemoteDocuments> {
    let selected = crate::config::store_selection::selection(session.config(), "document").ok()?;
    let class = selected
        .impl_name
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .trim();
    if class == crate::stores::local::sqlite_docs::CLASS {
        return None;
    }
    Some(crate::install::RemoteDocuments {
        impl_name: selected.impl_name.clone(),
        stores: session.stores().clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(outcome: ChangeOutcome, problems: &[&str]) -> ChangeReport {
        ChangeReport {
            outcome,
            problems: problems.iter().map(|p| p.to_string()).collect(),
        }
    }

    fn doc_of(command: &'static str, report: &ChangeReport) -> serde_json::Value {
        let requested = ["agentenv-x".to_string()];
        let asked = Asked {
            command,
            requested: &requested,
            json: true,
            cannot_ask: true,
        };
        let said = Said {
            lines: vec!["Added.".into()],
            notes: Vec::new(),
            installed: Vec::new(),
        };
        document(&asked, report, said)
    }

    #[test]
    fn each_outcome_has_its_documented_name_and_exit_code() {
        let cases = [
            (ChangeOutcome::DryRun, "dry_run", 0),
            (ChangeOutcome::Unchanged, "unchanged", 0),
            (ChangeOutcome::Added, "added", 0),
            (ChangeOutcome::Removed, "removed", 0),
            (ChangeOutcome::Declined, "refused", 1),
            (ChangeOutcome::Failed(InstallError::Blocked), "refused", 1),
            (ChangeOutcome::Kept, "kept", 1),
            (ChangeOutcome::RolledBack, "rolled_back", 1),
            (ChangeOutcome::Interrupted(libc::SIGINT), "interrupted", 130),
            (
                ChangeOutcome::Interrupted(libc::SIGTERM),
                "interrupted",
                143,
            ),
            (
                ChangeOutcome::Failed(InstallError::InterruptedAtQuestion(libc::SIGHUP)),
                "interrupted",
                129,
            ),
            (ChangeOutcome::Failed(InstallError::Busy), "failed", 1),
            (ChangeOutcome::Failed(InstallError::NoTerminal), "failed", 2),
        ];
        for (outcome, name, code) in cases {
            let doc = doc_of("add", &report(outcome, &[]));
            assert_eq!(doc["outcome"], name, "{doc}");
            assert_eq!(doc["exit_code"], code, "{doc}");
        }
    }

    #[test]
    fn the_outcome_comes_from_the_report_not_from_what_was_printed() {
        // The lines say "Added.", the report says the change was rolled back: the report wins.
        let doc = doc_of("add", &report(ChangeOutcome::RolledBack, &["check failed"]));
        assert_eq!(doc["outcome"], "rolled_back");
        assert_eq!(doc["lines"], serde_json::json!(["Added."]));
    }

    #[test]
    fn the_error_says_why_a_change_did_not_succeed() {
        let error_of = |command, outcome, problems: &[&str]| {
            doc_of(command, &report(outcome, problems))["error"].clone()
        };
        assert_eq!(
            error_of("add", ChangeOutcome::Added, &[]),
            serde_json::Value::Null
        );
        assert_eq!(
            error_of("add", ChangeOutcome::RolledBack, &["a failed", "b failed"]),
            "a failed; b failed"
        );
        assert_eq!(
            error_of("add", ChangeOutcome::Kept, &["a failed"]),
            "a failed"
        );
        assert_eq!(
            error_of("remove", ChangeOutcome::Declined, &[]),
            "plugin remove did not finish (exit 1)"
        );
        assert_eq!(
            error_of("add", ChangeOutcome::Interrupted(libc::SIGINT), &[]),
            "interrupted; the plugins directory was restored as it was"
        );
        // A blocked removal: the error is its sentence, the blockers are its problems.
        let blocked = doc_of(
            "remove",
            &report(
                ChangeOutcome::Failed(InstallError::Blocked),
                &["agentenv-y requires it"],
            ),
        );
        assert_eq!(
            blocked["error"],
            "not removed while still in use (agentenv-y requires it); change what uses it, or pass --force to remove anyway"
        );
        assert_eq!(
            blocked["problems"],
            serde_json::json!(["agentenv-y requires it"])
        );
    }
}
