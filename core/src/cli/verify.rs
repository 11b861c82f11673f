//! `agent-env plugin verify PACKAGE [--step JSON] [--json]`: the protocol kit's findings, one line
//! each (or one JSON document), and exit 1 when any check failed (a warning is no failure).

use clap::Args;
use serde_json::json;

use agent_env_host::verify::{step_timeout, Check, Status, StepTimeoutError};

use crate::cli::{Exit, Failure, Terminal};
use crate::report::documents;
use crate::session::Session;
use crate::verify::{verify_plugin, VerifyCommandError, VerifyOutcome};

/// The version of the JSON document `plugin verify --json` prints.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Args)]
pub struct VerifyArgs {
    /// An installed package (any spelling of its name), a manifest, or a folder holding agent-env-plugin.toml.
    pub package: String,
    /// A task step document to run, e.g. '{"type": "grade_essay", "id": "s1"}', to check that it runs and the calls it makes to agent-env. Its "timeout_seconds", as in a task, is how long it may take (else AGENT_ENV_PLUGIN_CALL_TIMEOUT, 60 s unless set).
    #[arg(long, value_name = "JSON")]
    pub step: Option<String>,
    /// Print one JSON document instead of one line per check.
    #[arg(long)]
    pub json: bool,
}

/// Runs `plugin verify`.
pub fn run(args: &VerifyArgs, session: &Session, term: &Terminal) -> Exit {
    if let Some(e) = args.step.as_deref().and_then(step_timeout_mistake) {
        return Err(Failure::new(format!("--step: {e}")).usage_if(true));
    }
    let outcome = verify_plugin(session, &args.package, args.step.as_deref()).map_err(|e| {
        // A `--step` that is not a step document is a bad value on the command line.
        let bad_step = matches!(e, VerifyCommandError::Step(_));
        Failure::new(e).usage_if(bad_step)
    })?;
    for warning in &outcome.warnings {
        term.warn(warning);
    }
    if args.json {
        term.print(&documents::to_json(&document(&outcome)));
    } else {
        term.print(&human(&outcome));
    }
    Ok(if outcome.verification.passed() { 0 } else { 1 })
}

/// A `--step` whose `timeout_seconds` no step can be given (0, below 0, a string), by the rule a
/// run holds a step to: a bad value on the command line, refused before the plugin starts. Text
/// that is no JSON object is left to `verify_plugin`, which says what `--step` must be.
fn step_timeout_mistake(text: &str) -> Option<StepTimeoutError> {
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(step)) => step_timeout(&step).err(),
        _ => None,
    }
}

fn document(outcome: &VerifyOutcome) -> serde_json::Value {
    let v = &outcome.verification;
    json!({
        "format_version": FORMAT_VERSION,
        "package": outcome.package,
        "version": outcome.version,
        "manifest": outcome.manifest.display().to_string(),
        "ok": v.passed(),
        "passed": v.count(Status::Passed),
        "warned": v.count(Status::Warned),
        "failed": v.count(Status::Failed),
        "skipped": v.count(Status::Skipped),
        "findings": v.findings.iter().map(|f| json!({
            "check": f.check.code(),
            "status": f.status,
            "rule": f.check.rule(),
            "message": f.message,
        })).collect::<Vec<_>>(),
        "stderr_tail": v.stderr_tail,
    })
}

fn human(outcome: &VerifyOutcome) -> String {
    let v = &outcome.verification;
    let width = Check::ALL.iter().map(|c| c.code().len()).max().unwrap_or(0);
    let mut out = format!(
        "Verifying {} {} ({})\n",
        outcome.package,
        outcome.version,
        outcome.manifest.display()
    );
    for f in &v.findings {
        out.push_str(&format!(
            "  {}  {:width$}  {}\n",
            f.status.label(),
            f.check.code(),
            f.message
        ));
    }
    let warned = match v.count(Status::Warned) {
        0 => String::new(),
        n => format!(", {n} warned"),
    };
    out.push_str(&format!(
        "{} checks: {} passed, {} failed, {} skipped{warned}\n",
        v.findings.len(),
        v.count(Status::Passed),
        v.count(Status::Failed),
        v.count(Status::Skipped)
    ));
    if let (false, Some(check)) = (v.passed(), v.stderr_check) {
        out.push_str(&format!("Its stderr during {} ended with:\n", check.code()));
        for line in &v.stderr_tail {
            out.push_str(&format!("  | {line}\n"));
        }
    }
    out
}
