//! Loopback HTTP servers that are slow in the middle of a body: they stall (what a server that froze
//! mid-transfer, or a network that went dead, looks like to a client), or trickle (a slow link that
//! keeps moving). [`silent_server`](crate::servers::silent_server) stalls before the answer; these
//! are slow after it has started, so a client's bound on waiting for an answer never fires, and only
//! its handling of the body decides whether the call ends, and how.
//!
//! A stalled connection is held until the server is dropped, so a client with no bound on a body's
//! transfer hangs for as long as the test lets it (see [`crate::deadline`]).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How a [`SlowBodyServer`] moves bodies. The upload kinds answer the other requests an S3 client
/// makes on the way as it expects: a HEAD gets `404` (no such object yet), starting a multipart upload
/// (`POST …?uploads`) gets an upload id, and aborting one (`DELETE`) gets `204`. Every kind, as S3
/// does, refuses a request whose body is chunked (`Transfer-Encoding: chunked`) with
/// `501 NotImplemented`, and closes the connection.
#[derive(Debug, Clone, Copy)]
pub enum SlowBody {
    /// Answers every request `200 OK` with a `Content-Length` of `promised` bytes, sends the first
    /// `sent` of them, then sends nothing more: a download that stops midway.
    StallsDownload {
        /// The body's length, as the answer's headers promise it.
        promised: u64,
        /// How many bytes of it are sent before the stall.
        sent: usize,
    },
    /// Answers every request `200 OK` with a body of `chunks` chunks of `chunk` bytes, waiting
    /// `pause` before each: a download on a slow link that keeps moving.
    TricklesDownload {
        /// The bytes sent at once.
        chunk: usize,
        /// How many times.
        chunks: usize,
        /// The wait before each.
        pause: Duration,
    },
    /// Reads the first `taken` bytes of each PUT's body and then stops reading: an upload the server
    /// stops taking.
    StallsUpload {
        /// How many bytes of each PUT body are read before the stall.
        taken: usize,
    },
    /// Reads each PUT's body `chunk` bytes at a time, waiting `pause` after each, then answers
    /// `200 OK` with an ETag: an upload on a slow link that keeps moving.
    TricklesUpload {
        /// The bytes read at once.
        chunk: usize,
        /// The wait after each.
        pause: Duration,
    },
}

/// The receive buffer of the server's connections. Small, so that an upload the server stops reading
/// blocks its sender after a few megabytes (the sender's own buffer) instead of filling a buffer the
/// kernel would otherwise grow to tens of megabytes on loopback.
const RECEIVE_BUFFER_BYTES: libc::c_int = 64 * 1024;
/// How often a held connection looks whether its server was dropped.
const HOLD_POLL: Duration = Duration::from_millis(50);

/// A loopback server that moves every body as its [`SlowBody`] says, until it is dropped; dropping
/// it closes its connections and joins its threads.
pub struct SlowBodyServer {
    port: u16,
    state: Arc<ServerState>,
    acceptor: Option<JoinHandle<()>>,
}

/// What the server's threads share.
struct ServerState {
    /// The connections while the server runs; `None` once it stops, after which none is taken.
    open: Mutex<Option<Vec<TcpStream>>>,
    /// Each request's method and target, in the order they came.
    requests: Mutex<Vec<String>>,
    /// Whether an abort of a multipart upload gets `503` instead of `204`.
    refuses_aborts: std::sync::atomic::AtomicBool,
}

impl ServerState {
    /// Keeps a handle on `socket` so that stopping can close it; false once the server stops.
    fn keep(&self, socket: &TcpStream) -> bool {
        let Ok(mut open) = self.open.lock() else {
            return false;
        };
        match (open.as_mut(), socket.try_clone()) {
            (Some(sockets), Ok(handle)) => {
                sockets.push(handle);
                true
            }
            _ => false,
        }
    }

    fn stopped(&self) -> bool {
        self.open.lock().map(|open| open.is_none()).unwrap_or(true)
    }

    /// Marks the server stopped and shuts every connection down, which ends any read blocked on one.
    fn stop(&self) {
        let sockets = self.open.lock().ok().and_then(|mut open| open.take());
        for socket in sockets.into_iter().flatten() {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }
}

impl SlowBodyServer {
    /// Starts a server on a free loopback port.
    pub fn start(body: SlowBody) -> SlowBodyServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        shrink_receive_buffer(&listener);
        let port = listener.local_addr().expect("the bound address").port();
        let state = Arc::new(ServerState {
            open: Mutex::new(Some(Vec::new())),
            requests: Mutex::new(Vec::new()),
            refuses_aborts: std::sync::atomic::AtomicBool::new(false),
        });
        let acceptor = {
            let state = Arc::clone(&state);
            std::thread::spawn(move || accept_until_stopped(&listener, body, &state))
        };
        SlowBodyServer {
            port,
            state,
            acceptor: Some(acceptor),
        }
    }

    /// The requests it got so far, each as its method and target (`PUT /b/k?partNumber=1&…`), in the
    /// order they came.
    pub fn requests(&self) -> Vec<String> {
        self.state
            .requests
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// From now on, answers an abort of a multipart upload (`DELETE`) `503 Service Unavailable`, as a
    /// server that cannot take it would.
    pub fn refuse_aborts(&self) {
        self.state
            .refuses_aborts
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Its address as an S3 `endpoint`: `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for SlowBodyServer {
    fn drop(&mut self) {
        self.state.stop();
        // Wakes the acceptor, which finds the server stopped and returns.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn shrink_receive_buffer(listener: &TcpListener) {
    use std::os::fd::AsRawFd;
    let size = RECEIVE_BUFFER_BYTES;
    // SAFETY: sets an integer option on a socket this function borrows; the pointer and length
    // describe `size`, which outlives the call. Accepted connections inherit the option.
    let set = unsafe {
        libc::setsockopt(
            listener.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            std::ptr::addr_of!(size).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(
        set,
        0,
        "setting SO_RCVBUF: {}",
        std::io::Error::last_os_error()
    );
}

fn accept_until_stopped(listener: &TcpListener, body: SlowBody, state: &Arc<ServerState>) {
    let mut connections = Vec::new();
    for socket in listener.incoming() {
        let Ok(socket) = socket else { continue };
        if !state.keep(&socket) {
            break;
        }
        let state = Arc::clone(state);
        connections.push(std::thread::spawn(move || serve(socket, body, &state)));
    }
    for connection in connections {
        let _ = connection.join();
    }
}

/// Answers the requests of one connection until one of them stalls; then holds the connection,
/// saying nothing and reading nothing, until the server stops.
fn serve(socket: TcpStream, body: SlowBody, state: &ServerState) {
    let Ok(mut writer) = socket.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(socket);
    while let Some(request) = read_head(&mut reader) {
        if let Ok(mut requests) = state.requests.lock() {
            requests.push(format!("{} {}", request.method, request.target));
        }
        if request.chunked {
            let _ = writer.write_all(chunked_refused().as_bytes());
            return;
        }
        let answered = match (body, request.method.as_str()) {
            (SlowBody::StallsDownload { promised, sent }, _) => {
                let _ = writer.write_all(ok_head(promised).as_bytes());
                let _ = writer.write_all(&vec![b'x'; sent]);
                break;
            }
            (
                SlowBody::TricklesDownload {
                    chunk,
                    chunks,
                    pause,
                },
                _,
            ) => trickle_out(&mut writer, chunk, chunks, pause),
            (SlowBody::StallsUpload { taken }, "PUT") => {
                let mut taking = reader.by_ref().take(taken as u64);
                let _ = std::io::copy(&mut taking, &mut std::io::sink());
                break;
            }
            (SlowBody::TricklesUpload { chunk, pause }, "PUT") => {
                trickle_in(&mut reader, request.content_length, chunk, pause).and_then(|()| {
                    writer.write_all(
                        b"HTTP/1.1 200 OK\r\nETag: \"trickled\"\r\nContent-Length: 0\r\n\r\n",
                    )
                })
            }
            (SlowBody::StallsUpload { .. } | SlowBody::TricklesUpload { .. }, method) => {
                let refused = method == "DELETE"
                    && state
                        .refuses_aborts
                        .load(std::sync::atomic::Ordering::SeqCst);
                let answer = if refused {
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n".to_string()
                } else {
                    s3_answer(method, &request.target)
                };
                skip_body(&mut reader, request.content_length)
                    .and_then(|()| writer.write_all(answer.as_bytes()))
            }
        };
        if answered.is_err() {
            return;
        }
    }
    while !state.stopped() {
        std::thread::sleep(HOLD_POLL);
    }
}

/// The head of a `200 OK` answer whose body is `len` bytes.
fn ok_head(len: u64) -> String {
    format!("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {len}\r\n\r\n")
}

/// Answers with `chunks` chunks of `chunk` bytes, waiting `pause` before each.
fn trickle_out(
    writer: &mut TcpStream,
    chunk: usize,
    chunks: usize,
    pause: Duration,
) -> std::io::Result<()> {
    writer.write_all(ok_head((chunk * chunks) as u64).as_bytes())?;
    for _ in 0..chunks {
        std::thread::sleep(pause);
        writer.write_all(&vec![b'x'; chunk])?;
    }
    Ok(())
}

/// Reads a body of `len` bytes `chunk` bytes at a time, waiting `pause` after each.
fn trickle_in(
    reader: &mut BufReader<TcpStream>,
    len: u64,
    chunk: usize,
    pause: Duration,
) -> std::io::Result<()> {
    let mut left = len;
    while left > 0 {
        let want = left.min(chunk as u64);
        skip_body(reader, want)?;
        left -= want;
        std::thread::sleep(pause);
    }
    Ok(())
}

/// S3's answer to a request whose body is chunked.
fn chunked_refused() -> String {
    let xml = "<Error><Code>NotImplemented</Code><Message>A header you provided implies functionality that is not implemented</Message><Header>Transfer-Encoding</Header></Error>";
    format!(
        "HTTP/1.1 501 Not Implemented\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{xml}",
        xml.len()
    )
}

/// The answers an S3 client gets on its way to a PUT: no object yet, an upload id, an abort taken.
fn s3_answer(method: &str, target: &str) -> String {
    match method {
        "POST" if target.contains("uploads") => {
            let xml = "<InitiateMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><UploadId>stalled-upload</UploadId></InitiateMultipartUploadResult>";
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: {}\r\n\r\n{xml}",
                xml.len()
            )
        }
        "DELETE" => "HTTP/1.1 204 No Content\r\n\r\n".to_string(),
        _ => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_string(),
    }
}

/// A request's line and the one header these servers need.
struct RequestHead {
    method: String,
    target: String,
    content_length: u64,
    /// Whether its body is chunked (`Transfer-Encoding: chunked`).
    chunked: bool,
}

/// The next request's head, or `None` when the client closed the connection or sent no HTTP.
fn read_head(reader: &mut BufReader<TcpStream>) -> Option<RequestHead> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut words = line.split_whitespace();
    let method = words.next()?.to_string();
    let target = words.next()?.to_string();
    let mut content_length = 0;
    let mut chunked = false;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                content_length = value.trim().parse().ok()?;
            }
            if name.trim().eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.to_ascii_lowercase().contains("chunked");
            }
        }
    }
    Some(RequestHead {
        method,
        target,
        content_length,
        chunked,
    })
}

fn skip_body(reader: &mut BufReader<TcpStream>, len: u64) -> std::io::Result<()> {
    let copied = std::io::copy(&mut reader.by_ref().take(len), &mut std::io::sink())?;
    if copied == len {
        Ok(())
    } else {
        Err(std::io::ErrorKind::UnexpectedEof.into())
    }
}
