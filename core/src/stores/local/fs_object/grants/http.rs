//! Just enough HTTP/1.1 for the grant server: one request per connection, read with bounded headers,
//! and plain-text answers. Bodies are read by the handlers, bounded by what each grant allows.

use std::io::{BufRead, Read, Write};

/// The most bytes of request line and headers a request may send.
const MAX_HEAD_BYTES: usize = 16 * 1024;

/// A request's line and headers; its body is still in the stream.
#[derive(Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The first value of a header.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads a request line and headers; `None` for anything that is not a well-formed HTTP/1.x request.
pub fn read_request(reader: &mut impl BufRead) -> Option<Request> {
    let mut head = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    loop {
        head.clear();
        let n = reader
            .take((MAX_HEAD_BYTES + 2) as u64)
            .read_until(b'\n', &mut head)
            .ok()?;
        if n == 0 || !head.ends_with(b"\n") {
            return None;
        }
        let line = String::from_utf8(head.clone()).ok()?;
        let line = line.trim_end_matches(['\r', '\n']).to_string();
        if line.is_empty() {
            break;
        }
        lines.push(line);
        if lines.iter().map(String::len).sum::<usize>() > MAX_HEAD_BYTES {
            return None;
        }
    }
    let (first, rest) = lines.split_first()?;
    let mut parts = first.split(' ');
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    if !parts.next()?.starts_with("HTTP/1.") {
        return None;
    }
    let headers = rest
        .iter()
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some(Request {
        method,
        path,
        headers,
    })
}

/// Writes a plain-text answer and closes the exchange.
pub fn respond_text(out: &mut impl Write, status: u16, text: &str) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 {status} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{text}",
        reason(status),
        text.len()
    )?;
    out.flush()
}

/// Writes the head of a `200 OK` answer whose body follows.
pub fn respond_head(out: &mut impl Write, content_type: &str, len: u64) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {len}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
    )
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        _ => "Error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_read_with_lowercased_headers() {
        let raw = b"PUT /v1/grants/t HTTP/1.1\r\nHost: x\r\nContent-Type: a/b\r\n\r\nbody";
        let mut reader = std::io::BufReader::new(&raw[..]);
        let req = read_request(&mut reader).unwrap();
        assert_eq!(
            (req.method.as_str(), req.path.as_str()),
            ("PUT", "/v1/grants/t")
        );
        assert_eq!(req.header("content-type"), Some("a/b"));
        let mut rest = String::new();
        reader.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "body");
        assert!(read_request(&mut std::io::BufReader::new(&b"garbage"[..])).is_none());
    }
}
