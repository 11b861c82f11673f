//! `agent-env plugin approve PACKAGE…`: pins the files an installed plugin starts from as they are
//! now, after its user changed them; only a package `plugin add` installed can be approved. Each file
//! whose pin would change is listed with its old and new sha256 first (the files changed apart from
//! those newly pinned, which an older agent-env did not pin), and the change asked about on a
//! terminal (`plugin add`'s `Proceed?`) unless `--yes`; with no terminal and no `--yes` nothing is
//! pinned. With `--json`, each package approved and its files (those changed, newly pinned and no
//! longer pinned marked, and each change with both sha256s) are one document.

use agent_env_host::pins::{Pin, PinFile};
use agent_env_protocol::manifest::Manifest;

use crate::cli::{Exit, Failure, Terminal};
use crate::session::Session;

use super::pin_changes::{change_line, pin_changes, PinChange};
use super::ApproveArgs;

/// `plugin approve PACKAGE...`: pins each package's files as they are now.
pub(super) fn approve(args: &ApproveArgs, session: &Session, term: &Terminal) -> Exit {
    let plugins_dir = session.paths().plugins_dir();
    // One change to the plugins directory at a time: an add rolling back meanwhile would put the
    // pins back as they were, approval and all.
    let waiting = |path: &std::path::Path, holder: Option<u32>| {
        term.eprintln(&crate::install::lock::waiting_for(path, holder));
    };
    let _lock = crate::install::lock::acquire(
        &plugins_dir,
        &session.paths().locks_dir(),
        args.wait
            .then_some(&waiting as crate::install::lock::Waiting<'_>),
    )
    .map_err(|e| Failure::new(e.to_string()))?;
    let discovery = session.discovery();
    let mut manifests = Vec::new();
    for package in &args.packages {
        let canonical = agent_env_protocol::names::canonical_name(package);
        let Some(found) = discovery.find(&canonical) else {
            let installed = discovery.plugins.iter().map(|p| p.manifest.name.as_str());
            return Err(Failure::new(
                crate::discovery::not_installed::NotInstalled::new(package, installed).to_string(),
            ));
        };
        if !found.manifest.path.starts_with(&plugins_dir) {
            return Err(Failure::new(format!(
                "{package} is not in the plugins directory {} (its manifest is {}), so `plugin add` did not install it and nothing pins it",
                plugins_dir.display(),
                found.manifest.path.display()
            )));
        }
        manifests.push(&found.manifest);
    }
    let was_unreadable = crate::discovery::pins::unreadable(&plugins_dir).is_some();
    let pin_file = crate::discovery::pins::pin_file(&plugins_dir);
    let before = agent_env_host::pins::load(&pin_file).unwrap_or_default();
    // Hashed once: what is pinned is what the user was shown.
    let mut pinned = Vec::new();
    let mut changes = Vec::new();
    for m in &manifests {
        let Some(now) = crate::discovery::pins::current_pins(m).map_err(Failure::new)? else {
            continue;
        };
        let pinned_before = pins_of(m, &before);
        let package_changes = pin_changes(&pinned_before, &now);
        if !package_changes.is_empty() {
            // Only pins added, to a package whose pinned files are all as they were: what an
            // agent-env that pins more of a package's files than an older one did sees.
            let pins_more =
                !pinned_before.is_empty() && package_changes.iter().all(PinChange::is_newly_pinned);
            changes.push((*m, package_changes, pins_more));
        }
        pinned.push((m.canonical_name(), now));
    }
    if !changes.is_empty() {
        match confirm_changes(&changes, args, term)? {
            Answer::Yes => {}
            Answer::No => {
                // Declined, as `plugin add` says it.
                term.print("Nothing changed.\n");
                return Ok(1);
            }
            Answer::Interrupted(signal) => {
                return Ok(super::change::interrupted_at_question(
                    "pinned", signal, term,
                ))
            }
        }
    }
    crate::discovery::pins::save_package_pins(&plugins_dir, pinned).map_err(Failure::new)?;
    let after = agent_env_host::pins::load(&pin_file).unwrap_or_default();
    let mut lines = String::new();
    for m in &manifests {
        lines.push_str(&format!(
            "Approved {} {}: its files are pinned as they are now.\n",
            m.name, m.version
        ));
    }
    let mut warnings = Vec::new();
    if was_unreadable {
        // The pins of every other package were in the file that could not be read.
        let approved: Vec<&str> = manifests.iter().map(|m| m.name.as_str()).collect();
        let unpinned: Vec<&str> = discovery
            .plugins
            .iter()
            .map(|p| &p.manifest)
            .filter(|m| m.path.starts_with(&plugins_dir) && !approved.contains(&m.name.as_str()))
            .map(|m| m.name.as_str())
            .collect();
        if !unpinned.is_empty() {
            warnings.push(format!(
                "the pin file could not be read, so it was written anew with only what you approved; {} {} not pinned now: approve each you trust (agent-env plugin approve {})",
                unpinned.join(", "),
                if unpinned.len() == 1 { "is" } else { "are" },
                unpinned.join(" ")
            ));
        }
    }
    if args.json {
        let approved: Vec<Approved> = manifests
            .iter()
            .map(|m| Approved::of(m, &before, &after))
            .collect();
        let doc = ApproveDocument {
            format_version: 1,
            approved,
            warnings: warnings.clone(),
        };
        let text = serde_json::to_string_pretty(&doc)
            .map_err(|e| Failure::new(format!("cannot print what was approved: {e}")))?;
        term.print(&format!("{text}\n"));
    } else {
        term.print(&lines);
    }
    for warning in warnings {
        term.warn(warning);
    }
    Ok(0)
}

/// Says each file whose pin approving changes and asks to go ahead, as `plugin add` asks: on a
/// terminal unless `--yes`, refused (exit 2) with no terminal to ask on. With `--json` nothing is
/// asked: without `--yes` it is refused, the changed files named.
fn confirm_changes(
    changes: &[(&Manifest, Vec<PinChange>, bool)],
    args: &ApproveArgs,
    term: &Terminal,
) -> Result<Answer, Failure> {
    if args.json {
        if args.yes {
            return Ok(Answer::Yes);
        }
        let all: Vec<&PinChange> = changes.iter().flat_map(|(_, c, _)| c.iter()).collect();
        let line = |c: &&PinChange| change_line(c).trim().to_string();
        let changed: Vec<String> = all
            .iter()
            .filter(|c| !c.is_newly_pinned())
            .map(line)
            .collect();
        let newly: Vec<String> = all
            .iter()
            .filter(|c| c.is_newly_pinned())
            .map(line)
            .collect();
        let what = if changed.is_empty() {
            "files not pinned before"
        } else {
            "files that changed"
        };
        let mut listed = Vec::new();
        if !changed.is_empty() {
            listed.push(changed.join("; "));
        }
        if !newly.is_empty() {
            listed.push(format!("newly pinned: {}", newly.join("; ")));
        }
        return Err(Failure::new(format!(
            "plugin approve --json cannot ask before pinning {what}: add --yes to approve them ({})",
            listed.join("; ")
        ))
        .with_code(2));
    }
    let mut text = String::new();
    for (manifest, package_changes, pins_more) in changes {
        let (newly, changed): (Vec<&PinChange>, Vec<&PinChange>) =
            package_changes.iter().partition(|c| c.is_newly_pinned());
        if !changed.is_empty() {
            let count = changed.len();
            text.push_str(&format!(
                "{} {}: {count} {} since {} approved:\n",
                manifest.name,
                manifest.version,
                if count == 1 {
                    "file changed"
                } else {
                    "files changed"
                },
                if count == 1 { "it was" } else { "they were" },
            ));
            for change in changed {
                text.push_str(&change_line(change));
                text.push('\n');
            }
        }
        if !newly.is_empty() {
            let count = newly.len();
            text.push_str(&format!(
                "{} {}: {count} {} newly pinned, not pinned before{}:\n",
                manifest.name,
                manifest.version,
                if count == 1 { "file" } else { "files" },
                if *pins_more {
                    " (agent-env pins more of a package's files than it did)"
                } else {
                    ""
                },
            ));
            for change in newly {
                text.push_str(&change_line(change));
                text.push('\n');
            }
        }
    }
    term.print(&text);
    // From the question on, a signal is counted, not fatal: one at the question ends it with
    // nothing pinned, and one later lets the pins be written whole.
    let interrupts = crate::install::interrupt::Interrupts::install();
    match crate::install::confirm(args.yes, term, &interrupts) {
        Ok(true) => Ok(Answer::Yes),
        Ok(false) => Ok(Answer::No),
        Err(crate::install::InstallError::InterruptedAtQuestion(signal)) => {
            Ok(Answer::Interrupted(signal))
        }
        Err(e) => Err(Failure::new(e).with_code(2)),
    }
}

/// What `plugin approve` was told at its question.
enum Answer {
    /// Go ahead (or `--yes`).
    Yes,
    /// Anything else: nothing is pinned.
    No,
    /// A signal (Ctrl-C) came while the question waited: nothing is pinned. It holds the signal's
    /// number.
    Interrupted(i32),
}

/// The pins `file` holds for `manifest`'s package.
fn pins_of(manifest: &Manifest, file: &PinFile) -> Vec<Pin> {
    file.packages
        .get(&manifest.canonical_name())
        .cloned()
        .unwrap_or_default()
}

/// `plugin approve --json`'s document.
#[derive(serde::Serialize)]
struct ApproveDocument {
    format_version: u32,
    approved: Vec<Approved>,
    /// What was also said on stderr as `warning: …`.
    warnings: Vec<String>,
}

/// One package approved: the files it pins now, and which of them were pinned otherwise before.
#[derive(serde::Serialize)]
struct Approved {
    name: String,
    version: String,
    /// Every file pinned now.
    files: Vec<std::path::PathBuf>,
    /// The files pinned before with another sha256: what its user changed.
    changed: Vec<std::path::PathBuf>,
    /// The files not pinned before (agent-env pins more of a package's files than it did).
    newly_pinned: Vec<std::path::PathBuf>,
    /// The files pinned before and not now.
    unpinned: Vec<std::path::PathBuf>,
    /// Each file whose pin changed, with the sha256 approved before (`was`, null when it was not
    /// pinned) and the one pinned now (`now`, null when it is no longer pinned).
    changes: Vec<PinChange>,
}

impl Approved {
    fn of(manifest: &Manifest, before: &PinFile, after: &PinFile) -> Approved {
        let (before, after) = (pins_of(manifest, before), pins_of(manifest, after));
        let changes = pin_changes(&before, &after);
        let changed = changes
            .iter()
            .filter(|c| c.is_changed())
            .map(|c| c.path.clone())
            .collect();
        let newly_pinned = changes
            .iter()
            .filter(|c| c.is_newly_pinned())
            .map(|c| c.path.clone())
            .collect();
        let unpinned = changes
            .iter()
            .filter(|c| c.now.is_none())
            .map(|c| c.path.clone())
            .collect();
        Approved {
            name: manifest.name.clone(),
            version: manifest.version.clone(),
            files: after.into_iter().map(|pin| pin.path).collect(),
            changed,
            newly_pinned,
            unpinned,
            changes,
        }
    }
}
