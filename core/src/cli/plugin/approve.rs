//! `agent-env plugin approve PACKAGE…`: pins the files an installed plugin starts from as they are
//! now, after its user changed them; only a package `plugin add` installed can be approved. With
//! `--json`, each package approved and its files (those whose pin changed marked) are one document.

use crate::cli::{Exit, Failure, Terminal};
use crate::session::Session;

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
    crate::discovery::pins::pin_packages(&plugins_dir, &manifests).map_err(Failure::new)?;
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
    /// The files whose pin changed: not pinned before, or pinned with another sha256.
    changed: Vec<std::path::PathBuf>,
    /// The files pinned before and not now.
    unpinned: Vec<std::path::PathBuf>,
}

impl Approved {
    fn of(
        manifest: &agent_env_protocol::manifest::Manifest,
        before: &agent_env_host::pins::PinFile,
        after: &agent_env_host::pins::PinFile,
    ) -> Approved {
        let pins = |file: &agent_env_host::pins::PinFile| {
            file.packages
                .get(&manifest.canonical_name())
                .cloned()
                .unwrap_or_default()
        };
        let (before, after) = (pins(before), pins(after));
        let changed = after
            .iter()
            .filter(|now| {
                !before
                    .iter()
                    .any(|was| was.path == now.path && was.sha256 == now.sha256)
            })
            .map(|pin| pin.path.clone())
            .collect();
        let unpinned = before
            .iter()
            .filter(|was| !after.iter().any(|now| now.path == was.path))
            .map(|pin| pin.path.clone())
            .collect();
        Approved {
            name: manifest.name.clone(),
            version: manifest.version.clone(),
            files: after.into_iter().map(|pin| pin.path).collect(),
            changed,
            unpinned,
        }
    }
}
