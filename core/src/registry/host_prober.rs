//! The real [`Prober`]: starts plugins through the child-process host ([`agent_env_host`]), all at once,
//! holds each `initialize` answer, then shuts every process down and keeps its final diagnosis.

use std::collections::BTreeMap;
use std::sync::Arc;

use agent_env_protocol::methods::CLI_ROOT_OPTION;
use std::thread;

use super::load::{FailureInfo, Launch, LoadFailure, Probe, Prober, ProcessDiagnosis};
use crate::config::mask::mask_args;
use agent_env_host::{
    signal_name, stop_together, Diagnosis, HostConfig, HostError, NoServices, PluginHost,
    PluginProcess, SpawnSpec,
};
use agent_env_protocol::methods::InitializeResult;

/// Starts plugins through [`agent_env_host::PluginHost`], with the host settings the session read.
#[derive(Debug)]
pub struct HostProber {
    config: HostConfig,
}

impl HostProber {
    pub fn new(config: HostConfig) -> HostProber {
        HostProber { config }
    }
}

fn spec_of(launch: &Launch) -> SpawnSpec {
    SpawnSpec {
        package: launch.package.clone(),
        version: launch.version.clone(),
        manifest_path: launch.manifest_path.clone(),
        argv: launch.argv.clone(),
        settings: launch.settings.clone(),
        command_mode: false,
        env: launch.env.clone(),
    }
}

impl Prober for HostProber {
    fn probe_all(&self, launches: &[Launch]) -> Vec<Probe> {
        let host = PluginHost::new(self.config.clone(), Arc::new(NoServices));
        let specs: Vec<SpawnSpec> = launches.iter().map(spec_of).collect();
        let started = host.start_all_parallel(&specs);
        // First every started plugin is asked what the report needs, in parallel; then all are
        // stopped together, so the sweep for their escaped descendants reads the process table once.
        let asked: Vec<Asking> = thread::scope(|scope| {
            let handles: Vec<_> = started
                .into_iter()
                .map(|(_, result)| {
                    scope.spawn(move || match result {
                        Ok(process) => {
                            let handshake = process.handshake().clone();
                            let root_option_failures = call_root_options(&process, &handshake);
                            Asking::Answered(Asked {
                                process,
                                handshake,
                                root_option_failures,
                            })
                        }
                        Err(error) => Asking::NotStarted(error),
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(Asking::Panicked))
                .collect()
        });
        let running: Vec<Arc<PluginProcess>> = asked
            .iter()
            .filter_map(|a| match a {
                Asking::Answered(a) => Some(a.process.clone()),
                _ => None,
            })
            .collect();
        let mut stopped = stop_together(&running).into_iter();
        asked
            .into_iter()
            .zip(&specs)
            .map(|(asked, spec)| match asked {
                Asking::Answered(asked) => Probe {
                    handshake: Ok(asked.handshake),
                    diagnosis: stopped.next().map(|d| convert(&d)).unwrap_or_default(),
                    root_option_failures: asked.root_option_failures,
                },
                Asking::Panicked => Probe {
                    handshake: Err(LoadFailure {
                        code: "spawn-failed".into(),
                        message: format!(
                            "plugin {} could not be checked: the thread asking it panicked",
                            spec.package
                        ),
                    }),
                    diagnosis: ProcessDiagnosis::default(),
                    root_option_failures: Default::default(),
                },
                Asking::NotStarted(error) => Probe {
                    handshake: Err(LoadFailure {
                        code: error.code().to_string(),
                        message: error.to_string(),
                    }),
                    diagnosis: host
                        .diagnosis(&spec.package)
                        .map(|d| convert(&d))
                        .unwrap_or_else(|| ProcessDiagnosis {
                            argv: mask_args(&spec.argv),
                            state: "not-started".into(),
                            ..ProcessDiagnosis::default()
                        }),
                    root_option_failures: Default::default(),
                },
            })
            .collect()
    }
}

/// What became of one plugin before the stop: it answered, it did not start, or the thread asking it
/// panicked.
enum Asking {
    Answered(Asked),
    NotStarted(HostError),
    Panicked,
}

/// A started plugin and what it answered, before it is stopped.
struct Asked {
    process: Arc<PluginProcess>,
    handshake: InitializeResult,
    root_option_failures: BTreeMap<String, String>,
}

/// Calls every root option the plugin provides with its flag absent, as an invocation without the
/// flag would (docs/protocol.md §4.5); returns the ones that failed, by name, with why.
fn call_root_options(
    process: &PluginProcess,
    answer: &agent_env_protocol::methods::InitializeResult,
) -> BTreeMap<String, String> {
    let mut failures = BTreeMap::new();
    for c in &answer.contributions {
        if c.group != "cli_root_options" || !process.is_alive() {
            continue;
        }
        let params =
            serde_json::json!({"flag": super::precedence::root_flag(&c.name), "value": null});
        if let Err(e) = process.call(CLI_ROOT_OPTION, params) {
            let why = match e.rpc_error() {
                Some(rpc) => rpc.message.clone(),
                None => e.to_string(),
            };
            failures.insert(c.name.clone(), why);
        }
    }
    failures
}

fn ms(us: Option<u64>) -> Option<f64> {
    us.map(|us| (us as f64) / 1000.0)
}

/// How [`convert`]'s `ended` says a process ended after agent-env shut it down (nothing having
/// failed).
const AFTER_SHUTDOWN: &str = " after agent-env shut it down";

/// The exit code, when it is not 0, of a process that exited after agent-env shut it down (nothing
/// having failed): its work was done, so the report only warns of it
/// ([`agent_env_host::shutdown_exit_warning`]).
pub fn exit_code_after_shutdown(d: &ProcessDiagnosis) -> Option<i32> {
    let code = d.exit_code.filter(|code| *code != 0)?;
    (d.failure.is_none() && d.stopped_by_host).then_some(code)
}

/// The host's diagnosis as the report shows it.
pub fn convert(d: &Diagnosis) -> ProcessDiagnosis {
    let who = match (&d.failure, d.stopped_by_host) {
        (Some(f), _) if f.code == "exited-at-start" || f.code == "crashed" => " by itself",
        (None, true) => AFTER_SHUTDOWN,
        (Some(_), true) => " after agent-env stopped it",
        _ => "",
    };
    let ended = match (d.state.as_str(), d.exit_code, d.signal) {
        ("running", _, _) => None,
        ("not-started", _, _) => Some("it never started".to_string()),
        (_, Some(code), _) => Some(format!("exited with code {code}{who}")),
        (_, _, Some(sig)) => Some(format!(
            "killed by signal {sig} ({}){who}",
            signal_name(sig)
        )),
        (state, _, _) => Some(state.to_string()),
    };
    ProcessDiagnosis {
        argv: mask_args(&d.argv),
        executable: d.executable.clone(),
        pid: d.pid,
        protocol: d.protocol,
        spawn_ms: ms(d.spawn_us),
        initialize_ms: ms(d.initialize_us),
        noise_count: d.noise_lines,
        noise_lines: d.noise_samples.clone(),
        stderr_tail: d.stderr_tail.clone(),
        state: d.state.clone(),
        exit_code: d.exit_code,
        signal: d.signal,
        ended,
        failure: d.failure.as_ref().map(|f| FailureInfo {
            code: f.code.clone(),
            message: f.message.clone(),
        }),
        stopped_by_host: d.stopped_by_host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stopped(exit_code: i32, stopped_by_host: bool) -> Diagnosis {
        Diagnosis {
            package: "agentenv-x".into(),
            manifest_path: String::new(),
            argv: Vec::new(),
            executable: None,
            command_mode: false,
            pid: Some(1),
            protocol: Some(1),
            plugin_version: None,
            spawned_at_ms: None,
            spawn_us: None,
            initialize_us: None,
            calls: 0,
            noise_lines: 0,
            noise_samples: Vec::new(),
            stderr_captured: true,
            stderr_lines: 0,
            stderr_bytes: 0,
            stderr_tail: String::new(),
            state: "exited".into(),
            exit_code: Some(exit_code),
            signal: None,
            stopped_by_host,
            failure: None,
        }
    }

    #[test]
    fn only_a_code_other_than_0_after_agent_env_shut_it_down_is_kept() {
        assert_eq!(
            exit_code_after_shutdown(&convert(&stopped(1, true))),
            Some(1)
        );
        assert_eq!(exit_code_after_shutdown(&convert(&stopped(0, true))), None);
        assert_eq!(exit_code_after_shutdown(&convert(&stopped(1, false))), None);
    }
}
