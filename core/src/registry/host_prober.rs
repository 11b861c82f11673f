//! The real [`Prober`]: starts plugins through the child-process host.

use super::load::{Launch, LoadFailure, Probe, Prober, ProcessDiagnosis};

/// Starts plugins through [`crate::host`].
#[derive(Debug, Default)]
pub struct HostProber;

impl HostProber {
    pub fn new() -> HostProber {
        HostProber
    }
}

impl Prober for HostProber {
    fn probe_all(&self, launches: &[Launch]) -> Vec<Probe> {
        // Replaced by the host adapter when the host lands.
        launches
            .iter()
            .map(|l| Probe {
                handshake: Err(LoadFailure {
                    code: "spawn-failed".into(),
                    message: format!(
                        "the plugin host is not built yet, so {} was not started",
                        l.package
                    ),
                }),
                diagnosis: ProcessDiagnosis {
                    argv: l.argv.clone(),
                    ..ProcessDiagnosis::default()
                },
            })
            .collect()
    }
}
