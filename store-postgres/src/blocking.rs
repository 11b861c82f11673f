//! Blocking calls to PostgreSQL over one async runtime per process.
//!
//! The client library is async (`tokio-postgres`). Its blocking wrapper (the `postgres` crate) starts a
//! runtime for every connection; here every connection shares one instead: the runtime already running
//! in the process (the explorer shares its own with [`share_runtime`]; a runtime whose blocking pool
//! calls the store is found by itself), else a current-thread runtime started here on first connect,
//! which the calling thread drives itself while it waits (no thread of its own, and no hop between
//! threads on each round trip: inserts ran about 30 % slower on a one-worker runtime). A command that
//! never uses the store starts none.
//!
//! Calls block the calling thread, which must not be one of the runtime's async tasks (the store is
//! called from plain threads and from a runtime's blocking pool).

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use tokio::runtime::{Builder, Handle, Runtime, RuntimeFlavor};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Config, Error, IsolationLevel, NoTls, Row};

/// The runtime started here when the process has none to share.
static OWN_RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The runtime the process has said to share ([`share_runtime`]).
static SHARED_RUNTIME: OnceLock<Handle> = OnceLock::new();

/// Makes every connection made from now on, from any thread, run on `runtime`, which the caller keeps
/// running for as long as it uses the store (the explorer hands over its own). Only a multi-thread
/// runtime can be shared; `false` when `runtime` is not one or another was shared already.
pub fn share_runtime(runtime: Handle) -> bool {
    runtime.runtime_flavor() == RuntimeFlavor::MultiThread && SHARED_RUNTIME.set(runtime).is_ok()
}

/// The runtime a new connection runs on: the one the process shares; else the one running on this
/// thread, if its worker threads drive it (a current-thread runtime would make every call wait for its
/// owner); else this crate's own.
fn runtime() -> std::io::Result<Driver> {
    if let Some(shared) = SHARED_RUNTIME.get() {
        return Ok(Driver::Shared(shared.clone()));
    }
    if let Ok(current) = Handle::try_current() {
        if current.runtime_flavor() == RuntimeFlavor::MultiThread {
            return Ok(Driver::Shared(current));
        }
    }
    if let Some(own) = OWN_RUNTIME.get() {
        return Ok(Driver::Own(own));
    }
    let built = Builder::new_current_thread().enable_all().build()?;
    // Two threads may build one at once; the first kept is the one every connection uses.
    let _ = OWN_RUNTIME.set(built);
    OWN_RUNTIME
        .get()
        .map(Driver::Own)
        .ok_or_else(|| std::io::Error::other("the PostgreSQL runtime was not kept"))
}

/// The runtime a connection runs on, and how a caller waits on it.
enum Driver {
    /// This crate's current-thread runtime: the waiting caller drives it (only `Runtime::block_on`
    /// can; while one caller does, the others' calls progress through it).
    Own(&'static Runtime),
    /// A multi-thread runtime whose workers drive the connections.
    Shared(Handle),
}

impl Driver {
    fn block_on<F: Future>(&self, future: F) -> F::Output {
        match self {
            Driver::Own(runtime) => runtime.block_on(future),
            Driver::Shared(handle) => handle.block_on(future),
        }
    }

    fn handle(&self) -> &Handle {
        match self {
            Driver::Own(runtime) => runtime.handle(),
            Driver::Shared(handle) => handle,
        }
    }
}

/// How long the server may take to answer one statement. A server that accepts connections and then
/// says nothing (paused, overloaded, or not PostgreSQL at all) fails the call instead of hanging it.
pub const CALL_LIMIT: Duration = Duration::from_secs(120);

/// Why a call to the server failed.
#[derive(Debug)]
pub enum CallError {
    /// The server answered with an error, or the connection broke.
    Postgres(Error),
    /// The server did not answer within this long.
    TimedOut(Duration),
}

impl From<Error> for CallError {
    fn from(e: Error) -> Self {
        CallError::Postgres(e)
    }
}

/// Why a connection could not be made.
#[derive(Debug)]
pub enum ConnectError {
    /// No runtime could be started (the process is out of threads or file descriptors).
    Runtime(std::io::Error),
    /// The server refused, could not be reached, or did not answer in time.
    Call(CallError),
}

/// One connection, with the runtime that drives it.
pub struct Connection {
    client: tokio_postgres::Client,
    runtime: Driver,
    /// A call on it timed out, so it may be mid-exchange: it is not used again.
    broken: AtomicBool,
}

impl Driver {
    /// Waits for `future`, at most `limit`.
    fn within<T, E: Into<CallError>>(
        &self,
        limit: Duration,
        future: impl Future<Output = Result<T, E>>,
    ) -> Result<T, CallError> {
        self.block_on(async { tokio::time::timeout(limit, future).await })
            .map_err(|_| CallError::TimedOut(limit))?
            .map_err(Into::into)
    }
}

impl Connection {
    /// Connects: the TCP connect, the startup and the login together within the DSN's connect
    /// timeout, so a server that accepts the connection and then says nothing is not waited on forever.
    pub fn connect(config: &Config) -> Result<Connection, ConnectError> {
        let runtime = runtime().map_err(ConnectError::Runtime)?;
        let limit = config
            .get_connect_timeout()
            .copied()
            .unwrap_or(crate::dsn::CONNECT_TIMEOUT);
        let (client, connection) = runtime
            .within(limit, config.connect(NoTls))
            .map_err(ConnectError::Call)?;
        // The connection's socket work runs as a task; it ends when the client is dropped or the
        // server goes away, and the client then reports itself closed.
        runtime.handle().spawn(async move {
            let _ = connection.await;
        });
        Ok(Connection {
            client,
            runtime,
            broken: Default::default(),
        })
    }

    /// Waits for one call on this connection, marking it broken when the server does not answer.
    fn call<T>(&self, future: impl Future<Output = Result<T, Error>>) -> Result<T, CallError> {
        noted(&self.broken, self.runtime.within(CALL_LIMIT, future))
    }

    /// Whether the connection has ended, or a call on it timed out.
    pub fn is_closed(&self) -> bool {
        self.client.is_closed() || self.broken.load(Ordering::SeqCst)
    }

    /// Whether the server still answers on this connection, within `timeout`.
    pub fn is_valid(&self, timeout: Duration) -> bool {
        self.runtime.block_on(async {
            matches!(
                tokio::time::timeout(timeout, self.client.simple_query("")).await,
                Ok(Ok(_))
            )
        })
    }

    /// The one row `sql` returns.
    pub fn query_one(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row, CallError> {
        self.call(self.client.query_one(sql, params))
    }

    /// Starts a transaction; it rolls back when dropped without [`Transaction::commit`].
    pub fn transaction(&mut self) -> Result<Transaction<'_>, CallError> {
        let Connection {
            client,
            runtime,
            broken,
        } = self;
        let begun = noted(broken, runtime.within(CALL_LIMIT, client.transaction()));
        Ok(Transaction {
            inner: begun?,
            runtime,
            broken,
        })
    }

    /// Starts a read-only transaction that sees one snapshot of the database throughout (repeatable
    /// read), so that several statements read the same rows as one statement would.
    pub fn snapshot(&mut self) -> Result<Transaction<'_>, CallError> {
        let Connection {
            client,
            runtime,
            broken,
        } = self;
        let start = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start();
        let begun = noted(broken, runtime.within(CALL_LIMIT, start));
        Ok(Transaction {
            inner: begun?,
            runtime,
            broken,
        })
    }
}

/// A transaction on a [`Connection`].
pub struct Transaction<'a> {
    inner: tokio_postgres::Transaction<'a>,
    runtime: &'a Driver,
    broken: &'a AtomicBool,
}

impl Transaction<'_> {
    /// Waits for one call in the transaction, marking its connection broken when the server does not
    /// answer.
    fn call<T>(&self, future: impl Future<Output = Result<T, Error>>) -> Result<T, CallError> {
        noted(self.broken, self.runtime.within(CALL_LIMIT, future))
    }

    /// Runs one statement; the number of rows it changed.
    pub fn execute(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, CallError> {
        self.call(self.inner.execute(sql, params))
    }

    /// Runs statements without parameters.
    pub fn batch_execute(&self, sql: &str) -> Result<(), CallError> {
        self.call(self.inner.batch_execute(sql))
    }

    /// Commits.
    pub fn commit(self) -> Result<(), CallError> {
        let Transaction {
            inner,
            runtime,
            broken,
        } = self;
        noted(broken, runtime.within(CALL_LIMIT, inner.commit()))
    }
}

/// `answer`, having marked the connection `broken` when the server did not answer in time (it may be
/// mid-exchange, so it is not used again).
fn noted<T>(broken: &AtomicBool, answer: Result<T, CallError>) -> Result<T, CallError> {
    if let Err(CallError::TimedOut(_)) = &answer {
        broken.store(true, Ordering::SeqCst);
    }
    answer
}

/// What can run a query: a connection or a transaction on it.
pub trait Queries {
    /// The rows `sql` returns.
    fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, CallError>;
}

impl Queries for Connection {
    fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, CallError> {
        self.call(self.client.query(sql, params))
    }
}

impl Queries for Transaction<'_> {
    fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, CallError> {
        self.call(self.inner.query(sql, params))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flavor(driver: &Driver) -> RuntimeFlavor {
        driver.handle().runtime_flavor()
    }

    /// A multi-thread runtime already running is shared; a current-thread one is not, and neither is
    /// needed to have one: outside any runtime, one is started once and kept. One the process shares
    /// comes first. (One test: the runtimes are the process's.)
    #[test]
    fn connections_share_the_running_runtime_or_one_of_their_own() {
        let running = Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let found = running.block_on(async {
            tokio::task::spawn_blocking(|| flavor(&runtime().unwrap()))
                .await
                .unwrap()
        });
        assert_eq!(found, RuntimeFlavor::MultiThread);
        assert!(
            OWN_RUNTIME.get().is_none(),
            "a runtime was started beside the running one"
        );

        let current = Builder::new_current_thread().enable_all().build().unwrap();
        {
            let _inside = current.enter();
            let own = runtime().unwrap();
            assert!(matches!(own, Driver::Own(_)));
            assert_eq!(own.block_on(async { 7 }), 7);
            assert!(
                matches!(runtime().unwrap(), Driver::Own(r) if std::ptr::eq(r, own_runtime(&own)))
            );
        }

        // Once the process shares a runtime, every connection runs there, from any thread.
        assert!(
            !share_runtime(current.handle().clone()),
            "a current-thread runtime was shared"
        );
        let explorer = Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("shared-for-test")
            .build()
            .unwrap();
        assert!(share_runtime(explorer.handle().clone()));
        let shared = runtime().unwrap();
        let worker = shared
            .block_on(
                shared
                    .handle()
                    .spawn(async { std::thread::current().name().map(String::from) }),
            )
            .unwrap();
        assert_eq!(worker.as_deref(), Some("shared-for-test"));
    }

    fn own_runtime(driver: &Driver) -> &'static Runtime {
        match driver {
            Driver::Own(runtime) => runtime,
            Driver::Shared(_) => panic!("not the crate's own runtime"),
        }
    }
}
