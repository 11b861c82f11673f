//! `agent-env plugin approve PACKAGE…`: pins the files an installed plugin starts from as they are
//! now, after its user changed them; only a package `plugin add` installed can be approved.

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
    crate::discovery::pins::pin_packages(&plugins_dir, &manifests).map_err(Failure::new)?;
    for m in &manifests {
        term.print(&format!(
            "Approved {} {}: its files are pinned as they are now.\n",
            m.name, m.version
        ));
    }
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
            term.warn(format!(
                "the pin file could not be read, so it was written anew with only what you approved; {} {} not pinned now: approve each you trust (agent-env plugin approve {})",
                unpinned.join(", "),
                if unpinned.len() == 1 { "is" } else { "are" },
                unpinned.join(" ")
            ));
        }
    }
    Ok(0)
}
