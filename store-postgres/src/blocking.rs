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
use std::sync::OnceLock;
use std::time::Duration;

use tokio::runtime::{Builder, Handle, Runtime, RuntimeFlavor};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Config, Error, NoTls, Row, SimpleQueryMessage};

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

/// Why a connection could not be made.
#[derive(Debug)]
pub enum ConnectError {
    /// No runtime could be started (the process is out of threads or file descriptors).
    Runtime(std::io::Error),
    /// The server refused or could not be reached.
    Postgres(Error),
}

/// One connection, with the runtime that drives it.
pub struct Connection {
    client: tokio_postgres::Client,
    runtime: Driver,
}

impl Connection {
    /// Connects (within the DSN's connect timeout).
    pub fn connect(config: &Config) -> Result<Connection, ConnectError> {
        let runtime = runtime().map_err(ConnectError::Runtime)?;
        let (client, connection) = runtime
            .block_on(config.connect(NoTls))
            .map_err(ConnectError::Postgres)?;
        // The connection's socket work runs as a task; it ends when the client is dropped or the
        // server goes away, and the client then reports itself closed.
        runtime.handle().spawn(async move {
            let _ = connection.await;
        });
        Ok(Connection { client, runtime })
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
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

    /// Runs `sql` (no parameters, possibly several statements) and returns what the server said.
    pub fn simple_query(&self, sql: &str) -> Result<Vec<SimpleQueryMessage>, Error> {
        self.runtime.block_on(self.client.simple_query(sql))
    }

    /// The one row `sql` returns.
    pub fn query_one(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row, Error> {
        self.runtime.block_on(self.client.query_one(sql, params))
    }

    /// Starts a transaction; it rolls back when dropped without [`Transaction::commit`].
    pub fn transaction(&mut self) -> Result<Transaction<'_>, Error> {
        let Connection { client, runtime } = self;
        let inner = runtime.block_on(client.transaction())?;
        Ok(Transaction { inner, runtime })
    }
}

/// A transaction on a [`Connection`].
pub struct Transaction<'a> {
    inner: tokio_postgres::Transaction<'a>,
    runtime: &'a Driver,
}

impl Transaction<'_> {
    /// Runs one statement; the number of rows it changed.
    pub fn execute(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, Error> {
        self.runtime.block_on(self.inner.execute(sql, params))
    }

    /// Runs statements without parameters.
    pub fn batch_execute(&self, sql: &str) -> Result<(), Error> {
        self.runtime.block_on(self.inner.batch_execute(sql))
    }

    /// Commits.
    pub fn commit(self) -> Result<(), Error> {
        self.runtime.block_on(self.inner.commit())
    }
}

/// What can run a query: a connection or a transaction on it.
pub trait Queries {
    /// The rows `sql` returns.
    fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, Error>;
}

impl Queries for Connection {
    fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, Error> {
        self.runtime.block_on(self.client.query(sql, params))
    }
}

impl Queries for Transaction<'_> {
    fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, Error> {
        self.runtime.block_on(self.inner.query(sql, params))
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
