//! A plugin that exited with a code other than 0 after agent-env shut it down (it crashed at
//! `shutdown`, or when its stdin closed) as a warning: its work was done, so nothing fails, but a
//! crash at exit can lose what it meant to flush. `plugin list` and `plugin check` print these on
//! stderr and in their `--json` documents' `warnings`.

use crate::registry::host_prober::exit_code_after_shutdown;
use crate::registry::Registry;

/// One sentence per plugin that answered `initialize` and then exited with a code other than 0 once
/// agent-env shut it down, in discovery order.
pub fn warnings(registry: &Registry) -> Vec<String> {
    let mut started: Vec<(&usize, _)> = registry.probes.iter().collect();
    started.sort_by_key(|(index, _)| **index);
    started
        .into_iter()
        .filter(|(_, probe)| probe.handshake.is_ok())
        .filter_map(|(index, probe)| {
            let code = exit_code_after_shutdown(&probe.diagnosis)?;
            let name = &registry.discovery.plugins.get(*index)?.manifest.name;
            let last_stderr = probe
                .diagnosis
                .stderr_tail
                .lines()
                .rev()
                .find(|line| !line.trim().is_empty());
            Some(agent_env_host::shutdown_exit_warning(
                name,
                code,
                last_stderr,
            ))
        })
        .collect()
}
