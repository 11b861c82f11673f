//! Warnings about a plugins directory, plugin folder or manifest that other users can write to: anyone who
//! can change a manifest chooses what agent-env runs as you.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::Discovery;

/// One sentence per unsafe path: group- or world-writable, or owned by another user (root aside).
pub fn unsafe_paths(plugins_dir: &Path, discovery: &Discovery) -> Vec<String> {
    let mut paths: Vec<PathBuf> = vec![plugins_dir.to_path_buf()];
    for p in discovery
        .plugins
        .iter()
        .filter(|p| p.manifest.path.starts_with(plugins_dir))
    {
        paths.push(p.manifest.folder().to_path_buf());
        paths.push(p.manifest.path.clone());
    }
    // A manifest that does not read yet is said too: whoever may write it can make it read, and
    // choose what runs next time.
    for broken in discovery
        .broken
        .iter()
        .filter(|b| b.path.starts_with(plugins_dir))
    {
        if let Some(folder) = broken.path.parent().filter(|f| *f != plugins_dir) {
            paths.push(folder.to_path_buf());
        }
        paths.push(broken.path.clone());
    }
    paths.dedup();
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let mut out = Vec::new();
    for path in paths {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        let mode = meta.mode() & 0o7777;
        if mode & 0o022 != 0 {
            out.push(format!(
                "{} can be written by other users (mode {mode:04o}), who could then choose what agent-env runs; run `chmod go-w {}`",
                path.display(),
                crate::quote::word(&path.display().to_string())
            ));
        }
        if meta.uid() != me && meta.uid() != 0 {
            out.push(format!(
                "{} is owned by another user (uid {}), who could then choose what agent-env runs",
                path.display(),
                meta.uid()
            ));
        }
    }
    out
}

/// One sentence per plugin of the plugins directory whose relative `exec` (`../../bin/x`) resolves
/// outside that directory: what runs is then not what `plugin add` installed, but whatever is at that
/// path. (A manifest found on `PATH` points out of its folder by design: `../../../bin/<script>`.)
pub fn exec_outside_folder(plugins_dir: &Path, discovery: &Discovery) -> Vec<String> {
    let root = normalize(plugins_dir);
    discovery
        .plugins
        .iter()
        .filter(|p| p.manifest.path.starts_with(plugins_dir))
        .filter_map(|p| {
            let program = p.manifest.exec.first()?;
            if !program.contains('/') || program.starts_with('/') {
                return None;
            }
            let resolved = normalize(&p.manifest.folder().join(program));
            (!resolved.starts_with(&root)).then(|| {
                format!(
                    "plugin {}'s exec '{program}' resolves to {}, outside the plugins directory {}; what runs is whatever is at that path",
                    p.manifest.name,
                    resolved.display(),
                    plugins_dir.display()
                )
            })
        })
        .collect()
}

/// `path` with `.` and `..` folded away, without touching the disk.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
