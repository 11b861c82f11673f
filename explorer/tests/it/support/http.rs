//! A small HTTP/1.1 client over a loopback TCP stream: one request per connection
//! (`Connection: close`), chunked bodies decoded, and an event-stream reader.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use serde_json::Value;

#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    /// Lowercased names.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}), status {}: {}", self.status, self.text()))
    }

    /// The `detail` of an error answer.
    #[track_caller]
    pub fn detail(&self) -> Value {
        self.json()["detail"].clone()
    }

    #[track_caller]
    pub fn expect(&self, status: u16) -> &Response {
        assert_eq!(self.status, status, "body: {}", self.text());
        self
    }
}

fn write_request(
    stream: &mut TcpStream,
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) {
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    stream.write_all(head.as_bytes()).expect("request written");
    stream.write_all(body).expect("body written");
}

fn read_head(reader: &mut impl BufRead) -> (u16, Vec<(String, String)>) {
    let mut line = String::new();
    reader.read_line(&mut line).expect("status line");
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header line");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((n, v)) = line.split_once(':') {
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    (status, headers)
}

/// One request to 127.0.0.1:`port`.
pub fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to the explorer");
    write_request(&mut stream, port, method, path, headers, body);
    let mut reader = BufReader::new(stream);
    let (status, headers) = read_head(&mut reader);
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).expect("chunk size");
            let size = usize::from_str_radix(size.trim(), 16).expect("hex chunk size");
            if size == 0 {
                break;
            }
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).expect("chunk");
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        reader.read_to_end(&mut body).expect("body");
    }
    Response {
        status,
        headers,
        body,
    }
}

/// One event of an event stream.
#[derive(Debug, Clone)]
pub struct Event {
    pub name: String,
    pub data: Value,
}

/// An event stream being read: `GET path` answered 200, its events read one at a time.
pub struct EventStream {
    reader: BufReader<TcpStream>,
    /// The answer's headers.
    pub headers: Vec<(String, String)>,
}

impl EventStream {
    /// Sends `GET path` and reads the answer's head, which must be 200.
    pub fn open(port: u16, path: &str) -> EventStream {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to the explorer");
        write_request(&mut stream, port, "GET", path, &[], b"");
        let mut reader = BufReader::new(stream);
        let (status, headers) = read_head(&mut reader);
        assert_eq!(status, 200, "the stream answered {status}");
        EventStream { reader, headers }
    }

    /// The next event, or `None` once the stream ended.
    pub fn next_event(&mut self) -> Option<Event> {
        let (mut name, mut data) = (String::new(), String::new());
        loop {
            let mut line = String::new();
            if self.reader.read_line(&mut line).expect("a stream line") == 0 {
                return None;
            }
            let line = line.trim_end_matches(['\r', '\n']);
            // Chunk-size lines of the chunked encoding are hex numbers; the stream's own lines never are.
            if !line.is_empty() && line.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            if let Some(v) = line.strip_prefix("event:") {
                name = v.trim().to_string();
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push_str(v.trim_start());
            } else if line.is_empty() && !name.is_empty() {
                return Some(Event {
                    name,
                    data: serde_json::from_str(&data).unwrap_or(Value::Null),
                });
            }
        }
    }
}

/// Reads `GET path` as an event stream until an event named in `last` (returning every event).
pub fn events_until(port: u16, path: &str, last: &[&str]) -> (Vec<(String, String)>, Vec<Event>) {
    let mut stream = EventStream::open(port, path);
    let mut events = Vec::new();
    while let Some(event) = stream.next_event() {
        let stop = last.contains(&event.name.as_str());
        events.push(event);
        if stop {
            break;
        }
    }
    (stream.headers, events)
}

/// Opens a keep-alive connection to `port` and reads one whole answer of `GET /api/v1/health` on it
/// (a read waits at most `read_wait`); the connection stays open, for tests of what open connections
/// cost and how long the server keeps them.
pub fn health_on_kept_alive_connection(port: u16, read_wait: std::time::Duration) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(read_wait)).unwrap();
    let request = format!("GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("\"status\":\"ok\"") {
        let n = stream.read(&mut buffer).unwrap();
        assert!(n > 0, "the server closed the connection: {answer:?}");
        answer.extend_from_slice(&buffer[..n]);
    }
    assert!(answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");
    stream
}
