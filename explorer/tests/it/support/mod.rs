//! What the explorer's tests share: a temp world (HOME, XDG folders, plugins dir), the server
//! started in it on an ephemeral port, and a small HTTP/1.1 client (loopback only).

pub mod http;
pub mod server;
pub mod shell_documents;
pub mod world;

pub use server::Explorer;
pub use world::World;

/// Percent-encodes an id as one path segment.
pub fn seg(id: &str) -> String {
    let mut out = String::new();
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
