//! Lines that are not protocol messages ("noise"): the samples kept of them, and what can still be
//! read from the head of a message too large to parse.

use super::malformed::Malformed;
use crate::message::Id;

/// How many bytes of a noise line are kept.
pub const NOISE_SAMPLE_BYTES: usize = 200;
/// How many noise lines are kept as samples (all are counted).
pub const NOISE_SAMPLES_KEPT: usize = 5;

/// Counts of what arrived that was not a message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoiseStats {
    /// Lines that were not JSON-RPC messages.
    pub lines: u64,
    /// The first bytes of the first few of them.
    pub samples: Vec<String>,
    /// Lines over the maximum message size (discarded; counted in `lines` too unless they were
    /// protocol messages, with an id or a method).
    pub too_large: u64,
    /// The first answer whose id this side never sent (not one it gave up waiting for): a peer
    /// that numbers its answers itself instead of echoing the request's id.
    pub unsent_answer_id: Option<Id>,
    /// The first line meant as a message that is none, and the first bytes of it.
    pub malformed: Option<(Malformed, String)>,
}

/// The first bytes of a line, as text.
pub fn sample_of(line: &[u8]) -> String {
    let mut end = line.len().min(NOISE_SAMPLE_BYTES);
    while end > 0 && std::str::from_utf8(&line[..end]).is_err() && line.len() - end < 4 {
        end -= 1;
    }
    String::from_utf8_lossy(&line[..end]).into_owned()
}

/// Finds `"id":<number or string>` near the start of a (possibly truncated) message.
pub(super) fn sniff_id(head: &[u8]) -> Option<Id> {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    let at = text.find("\"id\"")? + 4;
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    if let Some(s) = rest.strip_prefix('"') {
        return Some(Id::Text(s[..s.find('"')?].to_string()));
    }
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok().map(Id::Number)
}

/// Whether the head of a message names a method: a request or a notification, not an answer.
pub(super) fn sniff_has_method(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    text.contains("\"method\"")
}
