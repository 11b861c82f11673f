//! The explorer plugins of one `up`: their processes (one pool), their routes table, forwarding a
//! matched request as `explorer.request`, and stopping processes that sat idle.
//!
//! Every call here blocks (the pool is the synchronous child-process host); the server runs them on
//! tokio's blocking threads, so a plugin that hangs holds one thread and its client, nothing else.
//!
//! Why not jsonrpsee for this bridge, as the design card suggests: a forwarded request is one JSON-RPC
//! call to a child over its stdio, the same as every other host call, and the child may call back
//! (`host.store.*`) while it answers, which jsonrpsee's client cannot serve. The host's own peer does
//! both, and the bench's `runtimes` section measures it 2-3x faster than jsonrpsee over pipes (see
//! `agent_env_protocol::peer`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use agent_env::session::Session;
use agent_env::stores::HostStoreDispatcher;
use agent_env_host::{HostError, HostServices, PluginHost};
use agent_env_protocol::explorer::{ExplorerRequestParams, ExplorerResponse, EXPLORER_REQUEST};

use super::mounted::{self, Listing, Table};

/// Why a matched request got no answer from its plugin.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    #[error("the explorer plugin '{name}' ({package}) did not answer within {seconds}s; raise [explorer] plugin_timeout_seconds if it needs longer")]
    Timeout {
        name: String,
        package: String,
        seconds: f64,
    },
    #[error("the explorer plugin '{name}' ({package}) is not available: {reason}")]
    Unavailable {
        name: String,
        package: String,
        reason: String,
    },
    #[error("the explorer plugin '{name}' ({package}) failed: {reason}")]
    Failed {
        name: String,
        package: String,
        reason: String,
    },
    #[error("the explorer plugin '{name}' ({package}) answered {EXPLORER_REQUEST} with {problem}; expected {{\"status\": 200, \"headers\": {{...}}, \"body\": \"...\"}}")]
    BadAnswer {
        name: String,
        package: String,
        problem: String,
    },
}

/// The explorer plugins of one server.
pub struct ExplorerPlugins {
    /// The session's plugin pool (a plugin that also provides steps or a store runs once).
    host: Arc<PluginHost>,
    /// What answers the plugins' `host.*` requests during a forwarded request: the configured stores.
    services: Arc<dyn HostServices>,
    timeout: Duration,
    idle: Duration,
    table: OnceLock<Table>,
    /// Per package: when its last request ended, and how many are in flight.
    use_of: Mutex<HashMap<String, Use>>,
}

#[derive(Debug, Clone, Copy)]
struct Use {
    last: Instant,
    in_flight: usize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ExplorerPlugins {
    /// A pool whose children reach the session's configured stores through `host.store.*`.
    pub fn new(session: &Session, timeout: Duration, idle: Duration) -> ExplorerPlugins {
        ExplorerPlugins {
            services: Arc::new(HostStoreDispatcher::new(session.stores().clone())),
            host: session.plugin_pool(),
            timeout,
            idle,
            table: OnceLock::new(),
            use_of: Mutex::new(HashMap::new()),
        }
    }

    /// Builds the routes table (once; later calls return at once). Blocks while plugins start.
    pub fn load(&self, session: &Session) {
        self.table.get_or_init(|| {
            if !mounted::any_declared(session) {
                return Table::default();
            }
            let table = mounted::build(session, &self.host, self.timeout);
            let now = Instant::now();
            let mut use_of = lock(&self.use_of);
            for m in &table.mounted {
                use_of.insert(
                    m.package.clone(),
                    Use {
                        last: now,
                        in_flight: 0,
                    },
                );
            }
            table
        });
    }

    /// The routes table, once loaded.
    pub fn table(&self) -> Option<&Table> {
        self.table.get()
    }

    /// One line for each explorer plugin that serves nothing, once loaded: what `up` warns of as it
    /// starts (the Plugins page says the rest).
    pub fn load_failures(&self) -> Vec<String> {
        self.listings()
            .iter()
            .filter_map(|l| {
                let error = l.error.as_deref()?;
                let package = l
                    .package
                    .as_deref()
                    .map(|p| format!(" of {p}"))
                    .unwrap_or_default();
                let first = error.lines().next().unwrap_or(error);
                Some(format!(
                    "the explorer plugin '{}'{package} serves nothing: {first}",
                    l.name
                ))
            })
            .collect()
    }

    /// What `/api/v1/explorer-plugins` lists.
    pub fn listings(&self) -> Vec<Listing> {
        self.table
            .get()
            .map(|t| t.listings.clone())
            .unwrap_or_default()
    }

    /// Sends `params` to the plugin at `index` of the table and returns its answer, restarting the
    /// plugin if it crashed or was stopped for idling (the crash-loop rule applies).
    pub fn forward(
        &self,
        index: usize,
        params: ExplorerRequestParams,
    ) -> Result<ExplorerResponse, ForwardError> {
        let Some(mounted) = self.table.get().and_then(|t| t.mounted.get(index)) else {
            return Err(ForwardError::Unavailable {
                name: params.name,
                package: String::new(),
                reason: "its routes are not loaded".into(),
            });
        };
        let name = mounted.name.clone();
        let package = mounted.package.clone();
        let _in_flight = InFlight::start(self, &package);
        let process = self
            .host
            .connect(&mounted.spec)
            .map_err(|e| ForwardError::Unavailable {
                name: name.clone(),
                package: package.clone(),
                reason: first_line(&e.to_string()),
            })?;
        let params = serde_json::to_value(params).map_err(|e| ForwardError::Failed {
            name: name.clone(),
            package: package.clone(),
            reason: e.to_string(),
        })?;
        let answer = process.call_for(
            EXPLORER_REQUEST,
            params,
            self.timeout,
            self.services.clone(),
        );
        let value = answer.map_err(|e| {
            self.host.note_failure(&package, &e);
            match e {
                HostError::CallTimeout { .. } => ForwardError::Timeout {
                    name: name.clone(),
                    package: package.clone(),
                    seconds: self.timeout.as_secs_f64(),
                },
                other => ForwardError::Failed {
                    name: name.clone(),
                    package: package.clone(),
                    reason: match other.rpc_error() {
                        Some(rpc) => rpc.message.clone(),
                        None => first_line(&other.to_string()),
                    },
                },
            }
        })?;
        serde_json::from_value(value).map_err(|e| ForwardError::BadAnswer {
            name,
            package,
            problem: format!("a result of the wrong shape ({e})"),
        })
    }

    /// Stops every plugin process that has had no request for the idle period and none in flight;
    /// the next request starts it again.
    pub fn stop_idle(&self) {
        let idle: Vec<String> = {
            let use_of = lock(&self.use_of);
            use_of
                .iter()
                .filter(|(_, u)| u.in_flight == 0 && u.last.elapsed() >= self.idle)
                .map(|(p, _)| p.clone())
                .collect()
        };
        for package in idle {
            if self.host.get(&package).is_some() {
                // Checked again under the lock: a request may have started meanwhile.
                let busy = lock(&self.use_of)
                    .get(&package)
                    .is_some_and(|u| u.in_flight > 0 || u.last.elapsed() < self.idle);
                if !busy {
                    // Not while another caller (a run's step, a store call) uses the process.
                    self.host.release_idle(&package);
                }
            }
        }
    }

    /// How often [`stop_idle`](Self::stop_idle) should run.
    pub fn idle_check_every(&self) -> Duration {
        (self.idle / 2).clamp(Duration::from_millis(100), Duration::from_secs(30))
    }

    /// Stops every plugin process of the pool.
    pub fn shutdown(&self) {
        self.host.shutdown_all();
    }
}

/// Counts a request in flight for its package while alive, and notes when it ended.
struct InFlight<'a> {
    plugins: &'a ExplorerPlugins,
    package: String,
}

impl<'a> InFlight<'a> {
    fn start(plugins: &'a ExplorerPlugins, package: &str) -> InFlight<'a> {
        let mut use_of = lock(&plugins.use_of);
        let entry = use_of.entry(package.to_string()).or_insert(Use {
            last: Instant::now(),
            in_flight: 0,
        });
        entry.in_flight += 1;
        entry.last = Instant::now();
        InFlight {
            plugins,
            package: package.to_string(),
        }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(entry) = lock(&self.plugins.use_of).get_mut(&self.package) {
            entry.in_flight = entry.in_flight.saturating_sub(1);
            entry.last = Instant::now();
        }
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}
