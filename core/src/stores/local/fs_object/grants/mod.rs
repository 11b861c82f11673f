//! Transfer grants for the local object store: short-lived HTTPS URLs that read or write one object (or
//! upload under one prefix) without the store's files, served by a grant server this process starts on
//! the first grant and keeps until it exits.
//!
//! - [`token`]: the signed tokens in the URLs;
//! - [`ca`]: the per-user CA that vouches for the server's certificate;
//! - `server`, `http`, `form`: the HTTPS server, its bit of HTTP, and upload forms.
//!
//! One server runs per (bind address, advertised host, CA folder); every store of the process with the
//! same settings shares it, each under its own store id.

pub mod ca;
mod form;
mod http;
mod server;
pub mod token;

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use self::ca::LocalCa;
use self::server::Stores;
use self::token::{Claims, TokenKey};
use super::LocalFilesystemObjectStore;
use agent_env_store::error::{StoreError, StoreResult};

/// How a store grants: where the server listens, the host its URLs name, how long a
/// grant lives by default, and the folder of the CA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantSettings {
    pub bind: IpAddr,
    pub advertise: String,
    pub lifetime: Duration,
    pub tls_dir: PathBuf,
}

/// A running grant server.
pub struct GrantServer {
    key: Arc<TokenKey>,
    /// `https://<advertised host>:<port>/v1/grants/`.
    base: String,
    /// The CA's certificate, PEM: what a client trusts.
    pub ca_pem: String,
    stores: Stores,
}

type ServerKey = (IpAddr, String, PathBuf);

fn servers() -> &'static Mutex<HashMap<ServerKey, Arc<GrantServer>>> {
    static SERVERS: OnceLock<Mutex<HashMap<ServerKey, Arc<GrantServer>>>> = OnceLock::new();
    SERVERS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The server for these settings, started on first use.
pub fn server_for(settings: &GrantSettings) -> StoreResult<Arc<GrantServer>> {
    let id = (
        settings.bind,
        settings.advertise.clone(),
        settings.tls_dir.clone(),
    );
    let mut all = servers().lock().map_err(|_| {
        StoreError::Internal("a thread panicked while starting a grant server".into())
    })?;
    if let Some(server) = all.get(&id) {
        return Ok(server.clone());
    }
    let server = Arc::new(GrantServer::start(settings)?);
    all.insert(id, server.clone());
    Ok(server)
}

impl GrantServer {
    fn start(settings: &GrantSettings) -> StoreResult<GrantServer> {
        let ca = LocalCa::load_or_create(&settings.tls_dir)?;
        let mut names = vec![
            settings
                .advertise
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "::1".to_string(),
        ];
        if !settings.bind.is_unspecified() {
            names.push(settings.bind.to_string());
        }
        names.sort();
        names.dedup();
        let identity = ca.server_identity(&names)?;
        let key = Arc::new(TokenKey::random().ok_or_else(|| {
            StoreError::Internal("the system gave no randomness for the grant key".into())
        })?);
        let stores: Stores = Arc::new(Mutex::new(HashMap::new()));
        let listening = server::start(
            settings.bind,
            identity.cert_der,
            identity.key_der,
            key.clone(),
            stores.clone(),
        )?;
        let host = if settings.advertise.contains(':') && !settings.advertise.starts_with('[') {
            format!("[{}]", settings.advertise)
        } else {
            settings.advertise.clone()
        };
        Ok(GrantServer {
            key,
            base: format!("https://{host}:{}/v1/grants/", listening.port),
            ca_pem: ca.cert_pem,
            stores,
        })
    }

    /// Serves grants for the store rooted at `root` (idempotent).
    pub fn register(&self, store_id: &str, root: &Path) {
        if let Ok(mut stores) = self.stores.lock() {
            stores
                .entry(store_id.to_string())
                .or_insert_with(|| Arc::new(LocalFilesystemObjectStore::new(root)));
        }
    }

    /// The URL of a grant with these claims.
    pub fn url(&self, claims: &Claims) -> String {
        format!("{}{}", self.base, self.key.sign(claims))
    }
}

/// A store's id in grant tokens: the first 16 hex digits of the sha256 of its resolved root.
pub fn store_id(root: &Path) -> String {
    hex::encode(&Sha256::digest(root.to_string_lossy().as_bytes())[..8])
}

/// A grant's own id: 16 random hex digits.
pub fn grant_id() -> String {
    let mut bytes = [0u8; 8];
    let _ = getrandom::getrandom(&mut bytes);
    hex::encode(bytes)
}

/// When a grant of `lifetime` made now ends: epoch seconds and RFC 3339.
pub fn expiry(lifetime: Duration) -> (i64, String) {
    let at = SystemTime::now() + lifetime;
    let secs = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let whole = SystemTime::UNIX_EPOCH + Duration::from_secs(secs.max(0) as u64);
    (secs, crate::clock::rfc3339_utc(whole))
}
