//! A small pool of connections: handed out one per operation, returned when done, dropped when broken.

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use agent_env_store::error::StoreResult;

use crate::blocking::{ConnectError, Connection};
use crate::dsn::Dsn;
use crate::errors::{connect_error, runtime_error};

/// How many idle connections are kept for reuse.
const MAX_IDLE: usize = 4;
/// A connection idle for longer is asked whether it still works before it is handed out: the server
/// (or a firewall between) may have closed it meanwhile, as a restart closes every session. Calls in
/// quick succession reuse a connection without the extra round trip; after a pause (a task's step,
/// say) it costs one round trip next to the pause.
const CHECK_AFTER_IDLE: Duration = Duration::from_secs(1);
/// How long that check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// Connections to one database.
pub struct Pool {
    dsn: Dsn,
    /// Where the dsn was read from, for what a refused login says (`the environment variable …`).
    dsn_read_from: Option<String>,
    /// Idle connections, with when each was returned.
    idle: Mutex<Vec<(Connection, Instant)>>,
}

/// A connection on loan; it goes back to the pool on drop unless it broke.
pub struct Pooled<'a> {
    pool: &'a Pool,
    /// Held for the whole loan; its drop handing it back (or dropping it) is the only place it leaves.
    client: ManuallyDrop<Connection>,
}

impl Pool {
    /// A pool that connects on demand.
    pub fn new(dsn: Dsn) -> Pool {
        Pool {
            dsn,
            dsn_read_from: None,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// The pool, its connect errors saying the dsn was read from `from`.
    pub fn dsn_read_from(self, from: String) -> Pool {
        Pool {
            dsn_read_from: Some(from),
            ..self
        }
    }

    /// `host:port/database`, for messages.
    pub fn shown(&self) -> &str {
        &self.dsn.shown
    }

    fn idle(&self) -> MutexGuard<'_, Vec<(Connection, Instant)>> {
        // A panic while holding the lock leaves only a list of connections, which stays usable.
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An idle connection, or a new one.
    pub fn get(&self) -> StoreResult<Pooled<'_>> {
        loop {
            let next = self.idle().pop();
            match next {
                Some((client, _)) if client.is_closed() => continue,
                Some((client, since)) => {
                    if since.elapsed() > CHECK_AFTER_IDLE && !client.is_valid(CHECK_TIMEOUT) {
                        continue;
                    }
                    return Ok(Pooled::lend(self, client));
                }
                None => break,
            }
        }
        let client = Connection::connect(&self.dsn.config).map_err(|e| match e {
            ConnectError::Call(e) => {
                connect_error(&self.dsn.shown, self.dsn_read_from.as_deref(), &e)
            }
            ConnectError::Runtime(e) => runtime_error(&self.dsn.shown, &e),
        })?;
        Ok(Pooled::lend(self, client))
    }
}

impl<'a> Pooled<'a> {
    fn lend(pool: &'a Pool, client: Connection) -> Pooled<'a> {
        Pooled {
            pool,
            client: ManuallyDrop::new(client),
        }
    }
}

impl Deref for Pooled<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        &self.client
    }
}

impl DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        &mut self.client
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        // SAFETY: `client` is taken once, here, and nothing reads it after: the guard is going away,
        // and a `ManuallyDrop` field is not dropped again.
        let client = unsafe { ManuallyDrop::take(&mut self.client) };
        if client.is_closed() {
            return;
        }
        let mut idle = self.pool.idle();
        if idle.len() < MAX_IDLE {
            idle.push((client, Instant::now()));
        }
    }
}
