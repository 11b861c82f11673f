//! The grant server: HTTPS on a loopback (or configured) address, one thread per connection (at most 64
//! at once), one request per connection. It checks the token, then reads or writes the object through
//! the store the token names. No access log is kept: the tokens are in the URLs.

use std::cell::Cell;
use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};

use super::form;
use super::http::{read_request, respond_head, respond_text, Request};
use super::token::{Claims, TokenKey};
use crate::stores::local::fs_object::LocalFilesystemObjectStore;
use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::object::{ObjectStore, DEFAULT_CONTENT_TYPE};

/// The most connections served at once; more wait in the listen queue.
const MAX_CONNECTIONS: usize = 64;
/// How long a connection may stay silent.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// The most bytes of a refused request's body read before answering.
const DRAIN_LIMIT_BYTES: u64 = 1024 * 1024;
/// Room for the form's other fields around an upload-policy file.
const FORM_OVERHEAD_BYTES: u64 = 32 * 64 * 1024 + 33 * 16 * 1024;

/// The stores a server serves, by store id.
pub type Stores = Arc<Mutex<HashMap<String, Arc<LocalFilesystemObjectStore>>>>;

/// A started server: where it listens.
pub struct Listening {
    pub port: u16,
}

/// Binds `host` on a free port and serves grants signed by `key` for `stores` on a thread of its own.
pub fn start(
    host: IpAddr,
    cert_der: Vec<u8>,
    key_der: Vec<u8>,
    key: Arc<TokenKey>,
    stores: Stores,
) -> StoreResult<Listening> {
    let unavailable = |why: String| StoreError::Io {
        message: format!("the local grant server cannot listen on {host}: {why}"),
        raw_os_error: None,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| unavailable(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert_der)],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key_der)),
        )
        .map_err(|e| unavailable(e.to_string()))?;
    let config = Arc::new(config);
    let listener = TcpListener::bind((host, 0)).map_err(|e| unavailable(e.to_string()))?;
    let port = listener
        .local_addr()
        .map_err(|e| unavailable(e.to_string()))?
        .port();
    let open = Arc::new(AtomicUsize::new(0));
    std::thread::Builder::new()
        .name("agent-env-grants".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                while open.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
                    std::thread::sleep(Duration::from_millis(5));
                }
                open.fetch_add(1, Ordering::SeqCst);
                let (config, key, stores, counter) =
                    (config.clone(), key.clone(), stores.clone(), open.clone());
                let spawned = std::thread::Builder::new()
                    .name("agent-env-grant".into())
                    .spawn(move || {
                        serve(stream, config, &key, &stores);
                        counter.fetch_sub(1, Ordering::SeqCst);
                    });
                if spawned.is_err() {
                    // No thread to serve it: the connection is dropped and counted closed.
                    open.fetch_sub(1, Ordering::SeqCst);
                }
            }
        })
        .map_err(|e| unavailable(format!("no thread to serve on: {e}")))?;
    Ok(Listening { port })
}

fn serve(stream: TcpStream, config: Arc<ServerConfig>, key: &TokenKey, stores: &Stores) {
    let _ = stream.set_read_timeout(Some(IDLE_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IDLE_TIMEOUT));
    let Ok(connection) = ServerConnection::new(config) else {
        return;
    };
    let mut reader = BufReader::new(StreamOwned::new(connection, stream));
    let Some(request) = read_request(&mut reader) else {
        let _ = respond_text(reader.get_mut(), 400, "The request is not valid HTTP/1.1.");
        return;
    };
    let consumed = Cell::new(false);
    let (status, text) = match answer(&request, &mut reader, &consumed, key, stores) {
        Ok(()) => return,
        Err(refusal) => refusal,
    };
    // A body the refusal left unread is read first (when small), so that closing the connection does
    // not reset it before the client reads the answer.
    let unread = request
        .header("content-length")
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|_| !consumed.get())
        .unwrap_or(0);
    if unread > 0 && unread <= DRAIN_LIMIT_BYTES {
        let _ = std::io::copy(&mut (&mut reader).take(unread), &mut std::io::sink());
    }
    let _ = respond_text(reader.get_mut(), status, &text);
    reader.get_mut().conn.send_close_notify();
    let _ = reader.get_mut().flush();
}

/// An answer other than success: the status and its plain-text sentence.
type Refusal = (u16, String);

fn refuse(status: u16, text: &str) -> Refusal {
    (status, text.to_string())
}
type Conn = BufReader<StreamOwned<ServerConnection, TcpStream>>;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Serves one request; `Err` is the refusal (or failure) to answer with.
fn answer(
    request: &Request,
    conn: &mut Conn,
    consumed: &Cell<bool>,
    key: &TokenKey,
    stores: &Stores,
) -> Result<(), Refusal> {
    let not_allowed = || refuse(403, "The grant does not allow this request.");
    let token = request
        .path
        .strip_prefix("/v1/grants/")
        .ok_or_else(|| refuse(404, "No grant lives at this path."))?;
    let claims = key
        .verify(token, now())
        .ok_or_else(|| refuse(403, "The grant is invalid or has expired."))?;
    let store = stores
        .lock()
        .ok()
        .and_then(|s| s.get(&claims.s).cloned())
        .ok_or_else(not_allowed)?;
    match (claims.op.as_str(), request.method.as_str()) {
        ("get", "GET") => read(&claims, &store, conn, true),
        ("get", "HEAD") => read(&claims, &store, conn, false),
        ("put", "PUT") => write(&claims, request, &store, conn, consumed),
        ("post", "POST") => upload(&claims, request, &store, conn, consumed),
        _ => Err(not_allowed()),
    }
}

fn failed() -> Refusal {
    refuse(500, "The object store failed the transfer.")
}

fn bad_key() -> Refusal {
    refuse(403, "The grant's key is not an object key of this store.")
}

fn missing() -> Refusal {
    refuse(404, "No object exists at this grant's key.")
}

fn too_large() -> Refusal {
    refuse(400, "The upload is larger than the grant allows.")
}

fn ended_early() -> Refusal {
    refuse(400, "The upload ended early.")
}

fn read(
    claims: &Claims,
    store: &LocalFilesystemObjectStore,
    conn: &mut Conn,
    body: bool,
) -> Result<(), Refusal> {
    let key = claims.k.as_deref().ok_or_else(bad_key)?;
    let url = store.object_url(key).map_err(|_| bad_key())?;
    let metadata = match store.get_object_metadata(key) {
        Ok(Some(m)) => m,
        Ok(None) => return Err(missing()),
        Err(StoreError::InvalidValue(_)) => return Err(bad_key()),
        Err(_) => return Err(failed()),
    };
    let mut object = match store.open(&url) {
        Ok(object) => object,
        Err(StoreError::NotFound(_)) => return Err(missing()),
        Err(_) => return Err(failed()),
    };
    let content_type = metadata
        .content_type
        .unwrap_or_else(|| DEFAULT_CONTENT_TYPE.to_string());
    let out = conn.get_mut();
    if respond_head(out, &content_type, metadata.size.unwrap_or(0)).is_err() {
        return Ok(());
    }
    if body {
        let _ = std::io::copy(&mut object, out);
    }
    let _ = out.flush();
    out.conn.send_close_notify();
    let _ = out.flush();
    Ok(())
}

fn content_length(request: &Request) -> Result<u64, Refusal> {
    request
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| refuse(400, "The upload's Content-Length is not a number."))
}

fn read_body(conn: &mut Conn, len: u64, consumed: &Cell<bool>) -> Result<Vec<u8>, Refusal> {
    consumed.set(true);
    let mut body = Vec::with_capacity(len.min(64 * 1024 * 1024) as usize);
    conn.take(len)
        .read_to_end(&mut body)
        .map_err(|_| ended_early())?;
    if body.len() as u64 != len {
        return Err(ended_early());
    }
    Ok(body)
}

fn finish(conn: &mut Conn, status: u16) -> Result<(), Refusal> {
    let out = conn.get_mut();
    let _ = respond_text(out, status, "");
    out.conn.send_close_notify();
    let _ = out.flush();
    Ok(())
}

fn write(
    claims: &Claims,
    request: &Request,
    store: &LocalFilesystemObjectStore,
    conn: &mut Conn,
    consumed: &Cell<bool>,
) -> Result<(), Refusal> {
    let key = claims.k.as_deref().ok_or_else(bad_key)?;
    let wanted = claims.ct.as_deref().unwrap_or(DEFAULT_CONTENT_TYPE);
    if request.header("content-type").map(str::trim) != Some(wanted) {
        return Err((
            403,
            format!("The upload must declare Content-Type {wanted}."),
        ));
    }
    let len = content_length(request)?;
    if len > claims.max.unwrap_or(0) {
        return Err(too_large());
    }
    let body = read_body(conn, len, consumed)?;
    match store.put(key, &body, wanted, true) {
        Ok(_) => finish(conn, 200),
        Err(StoreError::InvalidValue(_)) => Err(bad_key()),
        Err(_) => Err(failed()),
    }
}

fn upload(
    claims: &Claims,
    request: &Request,
    store: &LocalFilesystemObjectStore,
    conn: &mut Conn,
    consumed: &Cell<bool>,
) -> Result<(), Refusal> {
    let boundary = request
        .header("content-type")
        .and_then(form::boundary)
        .ok_or_else(|| refuse(400, "The upload must be multipart/form-data."))?;
    let max = claims.max.unwrap_or(0);
    let len = content_length(request)?;
    if len > max.saturating_add(FORM_OVERHEAD_BYTES) {
        return Err(too_large());
    }
    let body = read_body(conn, len, consumed)?;
    let upload =
        form::parse(&body, &boundary, max).map_err(|(status, text)| refuse(status, text))?;
    let not_normalized = || refuse(403, "The upload key is not a normalized relative path.");
    if !form::is_normalized_key(&upload.key) {
        return Err(not_normalized());
    }
    let prefix = claims.p.as_deref().unwrap_or("");
    if !upload.key.starts_with(prefix) {
        return Err(refuse(403, "The upload key is outside the grant's prefix."));
    }
    let content_type = upload
        .content_type
        .as_deref()
        .unwrap_or(DEFAULT_CONTENT_TYPE);
    match store.put(&upload.key, &upload.file, content_type, true) {
        Ok(_) => finish(conn, 204),
        Err(StoreError::InvalidValue(_)) => Err(not_normalized()),
        Err(_) => Err(failed()),
    }
}
