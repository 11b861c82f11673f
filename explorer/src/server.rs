//! `agent-env up`: binds 127.0.0.1 (only), serves the API and the UI, and on Ctrl-C (or SIGTERM)
//! stops accepting, ends the live streams, cancels the runs it started and waits for their teardown,
//! and stops every explorer plugin child before returning. Explorer plugins start in the background
//! as it begins serving; an idle one is stopped and starts again on its next request. Connections are
//! accepted and bounded by [`crate::connections`].

use std::sync::Arc;
use std::time::Duration;

use agent_env::output::Output;
use agent_env::session::Session;
use axum::middleware;
use axum::Router;
use tokio::sync::watch;

use crate::connections::{serve_connections, ConnectionLimits};
use crate::data::Data;
use crate::error::UpError;
use crate::guard::{self, Guard};
use crate::plugins::{forward, ExplorerPlugins, PluginRouting};
use crate::runs::{CurrentSession, RunManager};
use crate::state::{AppState, Shared};
use agent_env::config::explorer::ExplorerSettings;

/// How long a stop waits for the runs it cancelled to tear down their sandboxes.
const RUN_TEARDOWN_WAIT: Duration = Duration::from_secs(30);
/// How long a stop waits for open requests (an object download, say) to finish.
const REQUEST_DRAIN_WAIT: Duration = Duration::from_secs(5);

/// How `up` was asked to serve.
#[derive(Debug, Clone)]
pub struct UpOptions {
    /// `--port`; 0 asks the system for a free port.
    pub port: Option<u16>,
    /// `--open`: open the UI in a browser once serving.
    pub open: bool,
    /// How often a run group's event stream sends a snapshot (the original: 2 s).
    pub snapshot_every: Duration,
}

impl Default for UpOptions {
    fn default() -> Self {
        UpOptions {
            port: None,
            open: false,
            snapshot_every: Duration::from_secs(2),
        }
    }
}

/// Serves until Ctrl-C or SIGTERM. Lines for the user (the URL, the stop) go to `out`.
pub fn serve(session: Arc<Session>, options: UpOptions, out: &dyn Output) -> Result<(), UpError> {
    let settings = ExplorerSettings::from_config(session.config(), options.port)?;
    let limits = ConnectionLimits::from_env(session.env())?;
    let port = settings.port(options.port);
    let listener = bind(port)?;
    let runtime = build_runtime()?;
    runtime.block_on(run(session, settings, limits, options, listener, out))
}

/// The server's runtime, which is also the process's one: a configured PostgreSQL store (which the
/// plugin steps of a run started here reach through their host calls) makes its connections on it
/// instead of starting a runtime of its own.
fn build_runtime() -> Result<tokio::runtime::Runtime, UpError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // Store calls and runs take a blocking thread each; tokio's default allows 512 of them. 64 is
        // far more than a few cores keep busy and still leaves room for long runs and waits.
        .max_blocking_threads(64)
        .thread_name("explorer")
        .enable_all()
        .build()
        .map_err(UpError::Runtime)?;
    agent_env_store_postgres::share_runtime(runtime.handle().clone());
    Ok(runtime)
}

/// The lowest port the system lets any user listen on (below it, binding needs privileges).
const FIRST_UNPRIVILEGED_PORT: u16 = 1024;

/// Binds 127.0.0.1:`port` before anything else starts, so a taken port is a clear error at once.
fn bind(port: u16) -> Result<std::net::TcpListener, UpError> {
    let listener =
        std::net::TcpListener::bind(("127.0.0.1", port)).map_err(|e| bind_error(port, e))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| UpError::Bind { port, source: e })?;
    Ok(listener)
}

/// Why `port` could not be bound, told with what to do: a taken port names the flag, a port below
/// 1024 refused to this user says that it needs privileges and which ports do not.
fn bind_error(port: u16, error: std::io::Error) -> UpError {
    match error.kind() {
        std::io::ErrorKind::AddrInUse => UpError::PortInUse { port },
        std::io::ErrorKind::PermissionDenied if port != 0 && port < FIRST_UNPRIVILEGED_PORT => {
            UpError::PrivilegedPort {
                port,
                source: error,
            }
        }
        _ => UpError::Bind {
            port,
            source: error,
        },
    }
}

/// The whole app: API, UI, explorer plugins' routes in front of them, guards in front of all.
pub fn app(state: Shared, guard: Arc<Guard>, plugins: PluginRouting) -> Router {
    Router::new()
        .merge(crate::api::router())
        .merge(crate::ui::router())
        .fallback(crate::ui::fallback)
        .layer(axum::extract::DefaultBodyLimit::max(
            crate::http::errors::MAX_BODY_BYTES,
        ))
        .layer(middleware::from_fn(crate::http::errors::json_errors))
        .layer(middleware::from_fn_with_state(plugins, forward::forward))
        .layer(middleware::from_fn(crate::http::redact::redact_answers))
        .layer(middleware::from_fn_with_state(guard, guard::guard))
        .with_state(state)
}

/// Builds the explorer plugins' routes table on a blocking thread (the server answers meanwhile;
/// requests wait for the table) and then, while the server runs, stops plugins that sat idle.
fn start_plugins(
    session: Arc<Session>,
    plugins: Arc<ExplorerPlugins>,
    mut stopping: watch::Receiver<bool>,
) -> watch::Receiver<bool> {
    let (loaded_tx, loaded_rx) = watch::channel(false);
    tokio::spawn(async move {
        let loading = plugins.clone();
        let _ = tokio::task::spawn_blocking(move || loading.load(&session)).await;
        let _ = loaded_tx.send(true);
        if plugins.table().is_none_or(|t| t.mounted.is_empty()) {
            return;
        }
        let mut every = tokio::time::interval(plugins.idle_check_every());
        loop {
            tokio::select! {
                _ = every.tick() => {
                    let sweeping = plugins.clone();
                    let _ = tokio::task::spawn_blocking(move || sweeping.stop_idle()).await;
                }
                _ = async { stopping.wait_for(|s| *s).await.is_ok() } => return,
            }
        }
    });
    loaded_rx
}

async fn run(
    session: Arc<Session>,
    settings: ExplorerSettings,
    limits: ConnectionLimits,
    options: UpOptions,
    listener: std::net::TcpListener,
    out: &dyn Output,
) -> Result<(), UpError> {
    let listener = tokio::net::TcpListener::from_std(listener).map_err(UpError::Serve)?;
    let address = listener.local_addr().map_err(UpError::Serve)?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let runs = Arc::new(RunManager::new(session.env().clone())?);
    let plugins = Arc::new(ExplorerPlugins::new(
        &session,
        settings.plugin_timeout,
        settings.plugin_idle,
    ));
    let loaded = start_plugins(session.clone(), plugins.clone(), stop_rx.clone());
    let routing = PluginRouting {
        plugins: plugins.clone(),
        loaded: loaded.clone(),
    };
    // Opening probes the configured document store, which blocks (a hosted one on this runtime).
    let opening = session.clone();
    let retry = settings.store_retry;
    let data = Arc::new(
        tokio::task::spawn_blocking(move || Data::open(&opening, retry))
            .await
            .map_err(|e| UpError::Serve(std::io::Error::other(e.to_string())))?,
    );
    let state_unusable = crate::data::state_folder::unusable(&session.paths().state_root());
    // The plugins directory is read in the background (explorer plugins, and the runs' plugins):
    // looked up now, so an XDG variable its lookup ignores is said with the state folder's.
    let _ = session.paths().plugins_dir();
    for why in [
        state_unusable,
        data.documents.left_out(),
        data.objects.left_out(),
    ]
    .into_iter()
    .flatten()
    .chain(session.take_ignored_relative_vars())
    {
        out.note(&format!("warning: {why}"));
    }
    let state: Shared = Arc::new(AppState {
        data,
        current: CurrentSession::new(session.env().clone()),
        session: session.clone(),
        runs: runs.clone(),
        stopping: stop_rx.clone(),
        snapshot_every: options.snapshot_every,
        plugins: plugins.clone(),
    });
    let app = app(state, Guard::new(&settings, address.port()), routing);
    let mut signals = Signals::new()?;
    let url = format!("http://127.0.0.1:{}/", address.port());
    out.line(&format!("agent-env explorer: {url} (Ctrl-C stops it)"));
    if options.open {
        if let Err(why) = open_browser(&url) {
            out.note(&format!(
                "can't open a browser ({why}); open {url} yourself"
            ));
        }
    }
    let server = tokio::spawn(serve_connections(listener, app, limits, stop_rx.clone()));
    let signal = until_signal(&mut signals, loaded, &plugins, out).await;
    out.line(&format!(
        "{signal}: stopping the explorer (the runs it started are cancelled and torn down)..."
    ));
    let _ = stop_tx.send(true);
    let teardown = tokio::task::spawn_blocking(move || runs.shutdown(RUN_TEARDOWN_WAIT));
    let left = tokio::select! {
        left = teardown => left.unwrap_or(0),
        second = signals.next() => {
            out.note(&format!("{second} again: stopping without waiting for the runs' teardown"));
            usize::MAX
        }
    };
    if left > 0 && left != usize::MAX {
        out.note(&format!(
            "{left} run(s) were still tearing down after {}s; their sandboxes may still be up",
            RUN_TEARDOWN_WAIT.as_secs()
        ));
    }
    let _ = tokio::time::timeout(REQUEST_DRAIN_WAIT, server).await;
    let _ = tokio::task::spawn_blocking(move || plugins.shutdown()).await;
    out.line("Stopped.");
    Ok(())
}

/// Waits for Ctrl-C or SIGTERM; meanwhile, once the explorer plugins have loaded, warns of each
/// that serves nothing (they load in the background, after the URL is printed).
async fn until_signal(
    signals: &mut Signals,
    mut loaded: watch::Receiver<bool>,
    plugins: &ExplorerPlugins,
    out: &dyn Output,
) -> &'static str {
    let mut warned = false;
    loop {
        tokio::select! {
            signal = signals.next() => return signal,
            ready = async { loaded.wait_for(|l| *l).await.is_ok() }, if !warned => {
                warned = true;
                if ready {
                    for line in plugins.load_failures() {
                        out.note(&format!("warning: {line}"));
                    }
                }
            }
        }
    }
}

/// SIGINT and SIGTERM as one stream of names.
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Signals, UpError> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt()).map_err(UpError::Signals)?,
            terminate: signal(SignalKind::terminate()).map_err(UpError::Signals)?,
        })
    }

    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.interrupt.recv() => "Interrupted",
            _ = self.terminate.recv() => "Terminated",
        }
    }
}

/// Opens `url` with the desktop's opener. The opener hands the page to the browser and exits: its
/// failure (no browser, no desktop) is waited for, briefly, to be said; one still busy after that is
/// reaped in the background, so it leaves no zombie.
fn open_browser(url: &str) -> Result<(), String> {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let mut child = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("{opener}: {e}"))?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while std::time::Instant::now() < deadline {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("{opener} ended with {status}")),
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
            Err(e) => return Err(format!("{opener}: {e}")),
        }
    }
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port below 1024 refused to this user says it needs privileges and which ports to use; the
    /// same refusal of a higher port is told as it is.
    #[test]
    fn a_privileged_port_refused_says_which_ports_to_use() {
        let denied = || std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let said = bind_error(80, denied()).to_string();
        assert!(
            said.starts_with("can't listen on 127.0.0.1:80: ")
                && said.ends_with("; a port below 1024 needs privileges (root, or the CAP_NET_BIND_SERVICE capability): use a --port of 1024 or higher (or 0 for any free one)"),
            "{said}"
        );
        let said = bind_error(8080, denied()).to_string();
        assert!(!said.contains("below 1024"), "{said}");
        let in_use = std::io::Error::from(std::io::ErrorKind::AddrInUse);
        assert!(matches!(
            bind_error(80, in_use),
            UpError::PortInUse { port: 80 }
        ));
    }

    /// The PostgreSQL store takes the server's runtime: once it is built, the store has one to share
    /// and refuses another.
    #[test]
    fn the_servers_runtime_is_the_one_the_postgres_store_shares() {
        let _runtime = build_runtime().unwrap();
        let other = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        assert!(!agent_env_store_postgres::share_runtime(
            other.handle().clone()
        ));
    }
}
