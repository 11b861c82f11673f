//! Noise as a warning: a started plugin that wrote lines to stdout that are not protocol messages
//! (docs/protocol.md §1). `plugin list` and `plugin check` print these on stderr; `plugin show` lists
//! the lines themselves.

use crate::registry::Registry;

/// One sentence per plugin that started, answered `initialize` and wrote noise, in discovery order. A
/// plugin that failed to load is not repeated here: its failure already quotes its first noise line.
pub fn warnings(registry: &Registry) -> Vec<String> {
    let mut started: Vec<(&usize, _)> = registry.probes.iter().collect();
    started.sort_by_key(|(index, _)| **index);
    started
        .into_iter()
        .filter(|(_, probe)| probe.handshake.is_ok() && probe.diagnosis.noise_count > 0)
        .filter_map(|(index, probe)| {
            let name = &registry.discovery.plugins.get(*index)?.manifest.name;
            let d = &probe.diagnosis;
            let first = d.noise_lines.first().map(String::as_str).unwrap_or("");
            Some(agent_env_host::noise_warning(name, d.noise_count, first))
        })
        .collect()
}
