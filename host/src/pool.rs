//! All plugin processes of one invocation: started lazily, reused per package, restarted after a
//! crash, given up on after repeated failures, shut down at the end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use agent_env_protocol::names::canonical_name;

use super::config::HostConfig;
use super::descendants::ProcessTable;
use super::diagnosis::Diagnosis;
use super::error::HostError;
use super::process::{spec_context, PluginProcess, CRASH_LOOP_LIMIT};
use super::services::HostServices;
use super::spec::SpawnSpec;
use super::start_abort::StartAbort;

#[derive(Default)]
struct Entry {
    process: Option<Arc<PluginProcess>>,
    /// Process failures so far: crashes, and starts that failed in the process.
    failures: u32,
    /// A failure that starting again cannot fix in this invocation.
    permanent: Option<HostError>,
    /// When the package was given up on for failing too often: a long-lived invocation (the
    /// explorer) tries it again once the config's `crash_loop_pause` has passed.
    gave_up_at: Option<Instant>,
    last_failure: Option<HostError>,
    /// The diagnosis of the last process that ended or failed to start.
    last_diagnosis: Option<Diagnosis>,
}

/// The plugin processes of one invocation, keyed by canonical package name.
pub struct PluginHost {
    config: HostConfig,
    services: Arc<dyn HostServices>,
    entries: Mutex<HashMap<String, Arc<Mutex<Entry>>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl PluginHost {
    /// An empty pool: nothing starts until [`PluginHost::connect`].
    pub fn new(config: HostConfig, services: Arc<dyn HostServices>) -> PluginHost {
        PluginHost {
            config,
            services,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The configuration every process of the pool starts with.
    pub fn config(&self) -> &HostConfig {
        &self.config
    }

    fn entry(&self, package: &str) -> Arc<Mutex<Entry>> {
        lock(&self.entries)
            .entry(canonical_name(package))
            .or_default()
            .clone()
    }

    /// The running process for `spec.package`, started (or restarted after a crash) if needed.
    pub fn connect(&self, spec: &SpawnSpec) -> Result<Arc<PluginProcess>, HostError> {
        self.connect_inner(spec, None)
    }

    /// [`connect`](Self::connect), with a start it needs stopped by `abort`
    /// ([`PluginProcess::start_diagnosed_unless`]): a run's Ctrl-C ends the wait for a slow
    /// plugin's handshake at once. A start stopped so (`start-cancelled`) says nothing about the
    /// plugin and does not count towards the crash-loop breaker.
    pub fn connect_unless(
        &self,
        spec: &SpawnSpec,
        abort: &StartAbort,
    ) -> Result<Arc<PluginProcess>, HostError> {
        self.connect_inner(spec, Some(abort))
    }

    fn connect_inner(
        &self,
        spec: &SpawnSpec,
        abort: Option<&StartAbort>,
    ) -> Result<Arc<PluginProcess>, HostError> {
        let entry = self.entry(&spec.package);
        // One start at a time per package; other packages start in parallel.
        let mut entry = lock(&entry);
        if entry
            .gave_up_at
            .is_some_and(|at| at.elapsed() >= self.config.crash_loop_pause)
        {
            // One more try: a failure now gives up again at once.
            entry.gave_up_at = None;
            entry.permanent = None;
            entry.failures = CRASH_LOOP_LIMIT - 1;
        }
        if let Some(error) = &entry.permanent {
            return Err(error.clone());
        }
        if let Some(process) = entry.process.clone() {
            if process.is_alive() {
                return Ok(process);
            }
            // It ended on its own since the last call (a crash), or so many of its calls timed
            // out that it was killed as unresponsive: that gives up on the package at once.
            entry.process = None;
            let unresponsive = process.unresponsive();
            let diagnosis = process.stop();
            entry.last_diagnosis = Some(diagnosis);
            if let Some(error) = unresponsive {
                entry.failures = entry.failures.max(CRASH_LOOP_LIMIT);
                entry.permanent = Some(error.clone());
                // Given up on as for crashes: tried once more after the pause.
                entry.gave_up_at = Some(Instant::now());
                return Err(error);
            }
            entry.failures += 1;
        }
        if entry.failures >= CRASH_LOOP_LIMIT {
            return Err(self.crash_loop(&mut entry, spec));
        }
        let (config, services) = (&self.config, self.services.clone());
        let started = match abort {
            Some(abort) => {
                PluginProcess::start_diagnosed_unless(spec.clone(), config, services, abort)
            }
            None => PluginProcess::start_diagnosed(spec.clone(), config, services),
        };
        match started {
            Ok(process) => {
                let process = Arc::new(process);
                entry.process = Some(process.clone());
                Ok(process)
            }
            Err(failure) if matches!(failure.error, HostError::StartCancelled { .. }) => {
                // Not the plugin's doing: not counted towards the crash-loop breaker.
                entry.last_diagnosis = Some(*failure.diagnosis);
                Err(failure.error)
            }
            Err(failure) => {
                let error = failure.error;
                entry.last_diagnosis = Some(*failure.diagnosis);
                entry.last_failure = Some(error.clone());
                if error.is_permanent() {
                    entry.permanent = Some(error.clone());
                } else if error.is_process_failure() {
                    entry.failures += 1;
                    if entry.failures >= CRASH_LOOP_LIMIT {
                        // Say now that there will be no more attempts.
                        self.crash_loop(&mut entry, spec);
                    }
                }
                Err(error)
            }
        }
    }

    fn crash_loop(&self, entry: &mut Entry, spec: &SpawnSpec) -> HostError {
        let last = entry
            .last_failure
            .as_ref()
            .map(|e| format!("{}: {}", e.code(), first_line(&e.to_string())))
            .or_else(|| {
                entry
                    .last_diagnosis
                    .as_ref()
                    .map(|d| format!("it {}", describe_end(d)))
            })
            .unwrap_or_else(|| "unknown".into());
        let ctx = match &entry.last_failure {
            Some(e) => Box::new(e.context().clone()),
            None => spec_context(spec),
        };
        let error = HostError::CrashLoop {
            ctx,
            crashes: entry.failures,
            pause: self.config.crash_loop_pause,
            last,
        };
        entry.permanent = Some(error.clone());
        entry.gave_up_at = Some(Instant::now());
        error
    }

    /// Records that a call failed with `error` (so a crash seen by a call counts once, right away).
    pub fn note_failure(&self, package: &str, error: &HostError) {
        if matches!(error, HostError::Crashed { .. }) {
            let entry = self.entry(package);
            lock(&entry).last_failure = Some(error.clone());
        }
    }

    /// Starts every plugin at once (each handshake runs on its own thread).
    pub fn start_all_parallel(
        &self,
        specs: &[SpawnSpec],
    ) -> Vec<(String, Result<Arc<PluginProcess>, HostError>)> {
        thread::scope(|scope| {
            let handles: Vec<_> = specs
                .iter()
                .map(|spec| (spec, scope.spawn(move || self.connect(spec))))
                .collect();
            handles
                .into_iter()
                .map(|(spec, handle)| {
                    let result = handle.join().unwrap_or_else(|_| {
                        Err(HostError::SpawnFailed {
                            ctx: spec_context(spec),
                            reason: "the thread starting it panicked".into(),
                        })
                    });
                    (spec.package.clone(), result)
                })
                .collect()
        })
    }

    /// The process of `package`, if one is running.
    pub fn get(&self, package: &str) -> Option<Arc<PluginProcess>> {
        let entry = lock(&self.entries).get(&canonical_name(package)).cloned()?;
        let process = lock(&entry).process.clone()?;
        process.is_alive().then_some(process)
    }

    /// The diagnosis of `package`: its running process, or its last attempt.
    pub fn diagnosis(&self, package: &str) -> Option<Diagnosis> {
        let entry = lock(&self.entries).get(&canonical_name(package)).cloned()?;
        let entry = lock(&entry);
        if let Some(process) = &entry.process {
            return Some(process.diagnosis());
        }
        entry.last_diagnosis.clone()
    }

    /// How many process failures `package` had in this invocation.
    pub fn failures(&self, package: &str) -> u32 {
        lock(&self.entries)
            .get(&canonical_name(package))
            .map(|e| lock(e).failures)
            .unwrap_or(0)
    }

    /// Stops the running process of `package` because it is no longer needed (it sat idle): unlike a
    /// crash, this is not counted against it, and the next [`PluginHost::connect`] starts it afresh.
    /// Returns its final diagnosis, or `None` when it was not running.
    pub fn release(&self, package: &str) -> Option<Diagnosis> {
        let entry = lock(&self.entries).get(&canonical_name(package)).cloned()?;
        let mut entry = lock(&entry);
        let process = entry.process.take()?;
        if !process.is_alive() {
            // It ended on its own: leave that for the next connect to count.
            entry.process = Some(process);
            return None;
        }
        let diagnosis = process.stop();
        entry.last_diagnosis = Some(diagnosis.clone());
        Some(diagnosis)
    }

    /// [`release`](Self::release), unless a call to it is in flight (another caller still uses it).
    pub fn release_idle(&self, package: &str) -> Option<Diagnosis> {
        self.release_idle_together(&[package]).pop()
    }

    /// [`release_idle`](Self::release_idle) for several packages: those running with no call in
    /// flight are stopped together (in parallel, as [`stop_together`] does); their final diagnoses,
    /// in the order of `packages`.
    pub fn release_idle_together<S: AsRef<str>>(&self, packages: &[S]) -> Vec<Diagnosis> {
        let mut idle: Vec<(Arc<Mutex<Entry>>, Arc<PluginProcess>)> = Vec::new();
        for package in packages {
            let Some(entry) = lock(&self.entries)
                .get(&canonical_name(package.as_ref()))
                .cloned()
            else {
                continue;
            };
            let mut guard = lock(&entry);
            // One that ended on its own is left for the next connect to count.
            if guard
                .process
                .as_ref()
                .is_some_and(|p| p.is_alive() && !p.busy())
            {
                if let Some(process) = guard.process.take() {
                    drop(guard);
                    idle.push((entry, process));
                }
            }
        }
        let (entries, processes): (Vec<_>, Vec<_>) = idle.into_iter().unzip();
        let diagnoses = stop_together(&processes);
        for (entry, diagnosis) in entries.iter().zip(&diagnoses) {
            lock(entry).last_diagnosis = Some(diagnosis.clone());
        }
        diagnoses
    }

    /// The process of each package, as the pool holds it now.
    fn processes(&self) -> Vec<Arc<PluginProcess>> {
        let entries = lock(&self.entries);
        entries
            .values()
            .filter_map(|e| lock(e).process.clone())
            .collect()
    }

    /// Returns once every running process's stderr lines written before this call are handed to
    /// their listeners, or `within` has passed for each ([`PluginProcess::catch_up_stderr`]).
    pub fn catch_up_stderr(&self, within: Duration) {
        for process in self.processes() {
            process.catch_up_stderr(within);
        }
    }

    /// Shuts every process down (in parallel) and returns their final diagnoses.
    pub fn shutdown_all(&self) -> Vec<Diagnosis> {
        stop_together(&self.processes())
    }
}

/// Stops `processes` in parallel and returns their final diagnoses in the same order. The sweep for
/// descendants that left a plugin's process group reads the process table once for all of them
/// (about 10 µs a process on the machine), not once a plugin.
pub fn stop_together(processes: &[Arc<PluginProcess>]) -> Vec<Diagnosis> {
    // Stopped already (a second shutdown at the end of a command): their diagnoses, without reading
    // the process table or starting a thread each.
    if processes.iter().all(|p| p.was_stopped()) {
        return processes.iter().map(|p| p.stop()).collect();
    }
    let table = ProcessTable::read();
    let table = &table;
    thread::scope(|scope| {
        let handles: Vec<_> = processes
            .iter()
            .map(|p| scope.spawn(move || p.stop_with_table(table)))
            .collect();
        handles
            .into_iter()
            .zip(processes)
            .map(|(h, p)| h.join().unwrap_or_else(|_| p.stop()))
            .collect()
    })
}

impl Drop for PluginHost {
    fn drop(&mut self) {
        self.shutdown_all();
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

fn describe_end(d: &Diagnosis) -> String {
    match (d.exit_code, d.signal) {
        (Some(code), _) => format!("exited with code {code}"),
        (_, Some(sig)) => format!("was killed by signal {sig}"),
        _ => "ended".into(),
    }
}
