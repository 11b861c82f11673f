//! Lines that are no message but were meant as one: a reply with its id null, without
//! `"jsonrpc":"2.0"`, wrapped in a batch, behind a byte order mark, pretty-printed over several
//! lines, with an id that is neither an integer nor a string, or run together with the next
//! message on one line (the first written without its newline). [`classify`] names the defect, so
//! a message about such a line says what to mend instead of calling it stray output.
//!
//! It reads a whole line or only its first bytes (a kept noise sample): where the JSON does not
//! parse, the defect is read from the text.

use serde_json::{Map, Value};

use crate::codes::ErrorKind;
use crate::message::{Id, RpcError};

/// What is wrong with a line meant as a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Defect {
    /// An answer whose id is null.
    NullId,
    /// An answer with no id at all.
    MissingId,
    /// No `"jsonrpc"` member.
    NoVersion,
    /// A `"jsonrpc"` member other than `"2.0"`, as written.
    WrongVersion(String),
    /// A JSON array of messages.
    Batch,
    /// The line starts with a UTF-8 byte order mark.
    ByteOrderMark,
    /// A message pretty-printed over several lines: this line is one of its pieces.
    MultiLine,
    /// An id that is neither an integer nor a string, as written.
    BadId(String),
    /// An answer whose id is the request's number written as a string (`"1"` for `1`): a valid
    /// message, but no answer to any request sent.
    IdAsString(i64),
    /// Two or more messages on one line: each but the last was written without its newline.
    Glued,
}

impl std::fmt::Display for Defect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Defect::NullId => f.write_str("its id is null: an answer must carry the id of the request it answers"),
            Defect::MissingId => f.write_str("it has no id: an answer must carry the id of the request it answers"),
            Defect::NoVersion => f.write_str("it lacks \"jsonrpc\":\"2.0\": every message must carry it"),
            Defect::WrongVersion(v) => write!(f, "it says \"jsonrpc\":{v}: every message must say \"jsonrpc\":\"2.0\""),
            Defect::Batch => f.write_str("it is a batch (a JSON array): the protocol has no batches: send one message per line"),
            Defect::ByteOrderMark => f.write_str("it starts with a byte order mark: write UTF-8 without one"),
            Defect::MultiLine => f.write_str("it is a piece of JSON spread over several lines: a message must be on one line: write compact JSON"),
            Defect::BadId(v) => write!(f, "its id {v} is not an integer or a string"),
            Defect::IdAsString(n) => write!(f, "it answered with the id \"{n}\" (a string), where the request's id was the number {n}: echo the id as sent"),
            Defect::Glued => f.write_str("it is two or more messages on one line: end each message with \\n"),
        }
    }
}

/// The number an id written as a string stands for, when the string is exactly that number's text
/// (`"1"` for `1`; `" 1"`, `"01"` or `"+1"` stand for none): an answer under it answers the request
/// of that number, with the defect [`Defect::IdAsString`].
pub fn number_written_as_text(id: &Id) -> Option<i64> {
    let Id::Text(text) = id else { return None };
    let n: i64 = text.parse().ok()?;
    (*text == n.to_string()).then_some(n)
}

/// A line meant as a message, and what can be read of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// What is wrong with it.
    pub defect: Defect,
    /// Its id, when one can be read (an integer or a string).
    pub id: Option<Id>,
    /// Whether it names a method (a request or a notification), not an answer.
    pub has_method: bool,
}

/// The answer to `line`, a request meant as one that is none (`malformed`), when its id can be
/// read: an invalid-request error (-32600) naming the defect, under that id, so the side that sent
/// it hears at once that it was not run rather than waiting out its timeout (JSON-RPC answers a
/// request with a readable id). `None` for an answer or a notification, and for a request with no
/// readable id.
pub fn refusal(line: &[u8], malformed: &Malformed) -> Option<(Id, RpcError)> {
    if !malformed.has_method {
        return None;
    }
    let id = malformed.id.clone()?;
    let body = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let method = match serde_json::from_slice::<Value>(body).ok()? {
        Value::Object(obj) => obj
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string),
        Value::Array(items) => items
            .first()
            .and_then(|m| m.get("method"))
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    };
    let what = match method {
        Some(method) => format!("the request {method} was not run"),
        None => "the request was not run".to_string(),
    };
    Some((
        id,
        RpcError::new(
            ErrorKind::InvalidRequest,
            format!("{what}: {}", malformed.defect),
        ),
    ))
}

/// Members only a JSON-RPC message has.
const MESSAGE_KEYS: [&str; 5] = ["jsonrpc", "id", "method", "result", "error"];

/// The defect of `line` (without its newline) when it is no message but reads as one meant to be;
/// `None` for a valid message and for output that is no attempt at one (a log line).
pub fn classify(line: &[u8]) -> Option<Malformed> {
    if let Some(rest) = line.strip_prefix(b"\xEF\xBB\xBF") {
        let inner = classify(rest);
        let looks_like_one = inner.is_some() || crate::message::Message::decode(rest).is_ok();
        return looks_like_one.then(|| Malformed {
            defect: Defect::ByteOrderMark,
            id: inner
                .as_ref()
                .and_then(|m| m.id.clone())
                .or_else(|| object_of(rest).and_then(|o| readable_id(&o))),
            has_method: inner.is_some_and(|m| m.has_method) || sniff(rest, "\"method\""),
        });
    }
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Array(items)) => {
            let first = items.first().and_then(Value::as_object)?;
            looks_like_message(first).then(|| Malformed {
                defect: Defect::Batch,
                id: (items.len() == 1).then(|| readable_id(first)).flatten(),
                has_method: first.contains_key("method"),
            })
        }
        Ok(Value::Object(obj)) => classify_object(&obj),
        Ok(_) => None,
        Err(_) => glued(line).or_else(|| classify_text(line)),
    }
}

/// A line of two or more messages, the first not ended: a message, then (after any blanks) the
/// next one, whole or cut short (a kept sample ends at its first bytes). Its id is the first
/// answer's, so the call it answers fails at once, naming the defect.
fn glued(line: &[u8]) -> Option<Malformed> {
    let mut values = serde_json::Deserializer::from_slice(line).into_iter::<Value>();
    let first = match values.next()? {
        Ok(Value::Object(obj)) if looks_like_message(&obj) => obj,
        _ => return None,
    };
    let mut messages = vec![first];
    loop {
        let rest = &line[values.byte_offset()..];
        let rest_text = String::from_utf8_lossy(rest);
        let rest_text = rest_text.trim_start();
        if rest_text.is_empty() {
            break;
        }
        if !rest_text.starts_with('{') {
            return None;
        }
        match values.next() {
            Some(Ok(Value::Object(obj))) if looks_like_message(&obj) => messages.push(obj),
            // A message cut short: the start of one, as far as a sample goes.
            Some(Err(e))
                if e.is_eof()
                    && MESSAGE_KEYS
                        .iter()
                        .any(|k| sniff(rest, &format!("\"{k}\""))) =>
            {
                messages.push(Map::new());
                break;
            }
            _ => return None,
        }
    }
    if messages.len() < 2 {
        return None;
    }
    let first_answer = messages
        .iter()
        .find(|m| !m.contains_key("method") && m.contains_key("id"));
    Some(Malformed {
        defect: Defect::Glued,
        id: first_answer.or(messages.first()).and_then(readable_id),
        has_method: first_answer.is_none() && messages[0].contains_key("method"),
    })
}

/// The defect of a JSON object that is no message, if it reads as one meant to be.
fn classify_object(obj: &Map<String, Value>) -> Option<Malformed> {
    if !looks_like_message(obj) {
        return None;
    }
    let has_method = obj.contains_key("method");
    let id = readable_id(obj);
    let defect =
        match obj.get("jsonrpc") {
            None => Defect::NoVersion,
            Some(Value::String(v)) if v == "2.0" => match obj.get("id") {
                Some(Value::Null) if !has_method => Defect::NullId,
                None if !has_method => Defect::MissingId,
                Some(
                    v @ (Value::Number(_) | Value::Bool(_) | Value::Array(_) | Value::Object(_)),
                ) if id.is_none() => Defect::BadId(v.to_string()),
                _ => return None,
            },
            Some(other) => Defect::WrongVersion(other.to_string()),
        };
    Some(Malformed {
        defect,
        id,
        has_method,
    })
}

/// The defect of a line that is not JSON (a piece of a pretty-printed message, or the first bytes
/// of a longer line), read from its text.
fn classify_text(line: &[u8]) -> Option<Malformed> {
    let text = String::from_utf8_lossy(line);
    let trimmed = text.trim();
    let piece = matches!(trimmed, "{" | "[" | "[{")
        || MESSAGE_KEYS
            .iter()
            .any(|key| trimmed.starts_with(&format!("\"{key}\"")) && trimmed.contains(':'));
    if piece {
        return Some(Malformed {
            defect: Defect::MultiLine,
            id: None,
            has_method: false,
        });
    }
    // A sample cut short: what its start says.
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) || !sniff(line, "\"jsonrpc\"") {
        if trimmed.starts_with('{') && sniff(line, "\"id\"") && sniff(line, "\"result\"") {
            return Some(Malformed {
                defect: Defect::NoVersion,
                id: None,
                has_method: false,
            });
        }
        return None;
    }
    let compact: String = trimmed.chars().filter(|c| !c.is_whitespace()).collect();
    let defect = if trimmed.starts_with('[') {
        Defect::Batch
    } else if compact.contains("\"id\":null") && !compact.contains("\"method\"") {
        Defect::NullId
    } else if let Some(at) = compact.find("\"jsonrpc\":") {
        let value = &compact[at + "\"jsonrpc\":".len()..];
        if value.starts_with("\"2.0\"") {
            return None;
        }
        Defect::WrongVersion(
            value
                .split([',', '}'])
                .next()
                .unwrap_or_default()
                .to_string(),
        )
    } else {
        return None;
    };
    Some(Malformed {
        defect,
        id: None,
        has_method: compact.contains("\"method\""),
    })
}

fn looks_like_message(obj: &Map<String, Value>) -> bool {
    let keys = MESSAGE_KEYS
        .iter()
        .filter(|k| obj.contains_key(**k))
        .count();
    obj.contains_key("jsonrpc") || keys >= 2
}

fn object_of(line: &[u8]) -> Option<Map<String, Value>> {
    match serde_json::from_slice::<Value>(line).ok()? {
        Value::Object(obj) => Some(obj),
        _ => None,
    }
}

fn readable_id(obj: &Map<String, Value>) -> Option<Id> {
    serde_json::from_value(obj.get("id")?.clone()).ok()
}

fn sniff(line: &[u8], needle: &str) -> bool {
    String::from_utf8_lossy(line).contains(needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defect(line: &str) -> Option<Defect> {
        classify(line.as_bytes()).map(|m| m.defect)
    }

    #[test]
    fn each_attempted_message_is_told_its_defect() {
        assert_eq!(
            defect(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#),
            Some(Defect::NullId)
        );
        assert_eq!(defect(r#"{"id":2,"result":{}}"#), Some(Defect::NoVersion));
        let old = classify(br#"{"jsonrpc":"1.0","id":2,"result":{}}"#).unwrap();
        assert_eq!(old.defect, Defect::WrongVersion("\"1.0\"".into()));
        assert_eq!(old.id, Some(Id::Number(2)));
        let batch = classify(br#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#).unwrap();
        assert_eq!(
            (batch.defect, batch.id),
            (Defect::Batch, Some(Id::Number(1)))
        );
        let bom = classify("\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}".as_bytes());
        assert_eq!(
            bom.map(|m| (m.defect, m.id)),
            Some((Defect::ByteOrderMark, Some(Id::Number(1))))
        );
        assert_eq!(defect("{"), Some(Defect::MultiLine));
        assert_eq!(defect(r#"  "jsonrpc": "2.0","#), Some(Defect::MultiLine));
        assert_eq!(
            defect(r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#),
            Some(Defect::BadId("1.5".into()))
        );
        // A sample cut short still says its defect.
        assert_eq!(
            defect(r#"{"jsonrpc":"2.0","id":null,"result":{"metadata":{"a":"aaaa"#),
            Some(Defect::NullId)
        );
    }

    #[test]
    fn messages_run_together_on_one_line_are_told_so() {
        let glued = classify(
            br#"{"jsonrpc": "2.0", "id": 2, "result": {"metadata": {}}}{"jsonrpc": "2.0", "id": 3, "result": null}"#,
        )
        .unwrap();
        assert_eq!(
            (glued.defect, glued.id, glued.has_method),
            (Defect::Glued, Some(Id::Number(2)), false)
        );
        assert_eq!(
            Defect::Glued.to_string(),
            "it is two or more messages on one line: end each message with \\n"
        );
        // A log notification not ended, then the answer: the answer's id is the one read.
        let after_log = classify(
            br#"{"jsonrpc":"2.0","method":"$/log","params":{"level":"info","message":"hi"}} {"jsonrpc":"2.0","id":7,"result":{}}"#,
        )
        .unwrap();
        assert_eq!(
            (after_log.defect, after_log.id, after_log.has_method),
            (Defect::Glued, Some(Id::Number(7)), false)
        );
        // A sample cut short in the second message still says so.
        assert_eq!(
            defect(r#"{"jsonrpc":"2.0","id":2,"result":{}}{"jsonrpc":"2.0","id":3,"resu"#),
            Some(Defect::Glued)
        );
        // JSON log lines run together, or a message then text, are not.
        assert_eq!(defect(r#"{"level":"info"}{"level":"warn"}"#), None);
        assert_eq!(
            defect(r#"{"jsonrpc":"2.0","id":2,"result":{}} and then some text"#),
            None
        );
    }

    #[test]
    fn a_malformed_request_with_a_readable_id_is_refused_under_it() {
        let line = br#"{"id":"h1","method":"host.store.object.exists","params":{}}"#;
        let malformed = classify(line).unwrap();
        let (id, error) = refusal(line, &malformed).unwrap();
        assert_eq!(id, Id::Text("h1".into()));
        assert_eq!(error.code, -32600);
        assert_eq!(
            error.message,
            "the request host.store.object.exists was not run: it lacks \"jsonrpc\":\"2.0\": every message must carry it"
        );
        let answer = br#"{"id":3,"result":{}}"#;
        assert_eq!(refusal(answer, &classify(answer).unwrap()), None);
        let no_id = br#"{"jsonrpc":"1.0","method":"host.x","params":{}}"#;
        assert_eq!(refusal(no_id, &classify(no_id).unwrap()), None);
    }

    #[test]
    fn valid_messages_and_log_lines_are_no_attempt() {
        assert_eq!(defect(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#), None);
        assert_eq!(defect(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#), None);
        assert_eq!(defect("loading the model"), None);
        assert_eq!(defect(r#"{"level":"info","msg":"hi"}"#), None);
        assert_eq!(defect("42"), None);
    }
}
