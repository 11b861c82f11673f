//! JSON-RPC 2.0 messages, one per line.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::codes::ErrorKind;
use crate::json_out;

/// A request id: an integer or a string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Id {
    /// An integer id.
    Number(i64),
    /// A string id.
    Text(String),
}

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::Text(s) => write!(f, "{s:?}"),
        }
    }
}

/// The error object of a failed request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// The JSON-RPC error code ([`ErrorKind::code`]).
    pub code: i64,
    /// What went wrong, as a sentence for a person.
    pub message: String,
    /// More about the error: `kind` (the [`ErrorKind`] name) and whatever the kind adds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error of a known kind, with `data.kind` set.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        let mut data = Map::new();
        data.insert("kind".into(), Value::String(kind.as_str().into()));
        RpcError {
            code: kind.code(),
            message: message.into(),
            data: Some(Value::Object(data)),
        }
    }

    /// Adds a key to `data`.
    pub fn with_data(mut self, key: &str, value: Value) -> Self {
        let data = self.data.get_or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(map) = data {
            map.insert(key.into(), value);
        }
        self
    }

    /// The kind, from `data.kind` or else from the code.
    pub fn kind(&self) -> Option<ErrorKind> {
        self.data
            .as_ref()
            .and_then(|d| d.get("kind"))
            .and_then(Value::as_str)
            .and_then(ErrorKind::from_name)
            .or_else(|| ErrorKind::from_code(self.code))
    }

    /// A string field of `data`.
    pub fn data_str(&self, key: &str) -> Option<&str> {
        self.data.as_ref()?.get(key)?.as_str()
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RpcError {}

/// One message on the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A call that wants an answer.
    Request {
        /// Its id, unique among the sender's requests in flight.
        id: Id,
        /// The method called.
        method: String,
        /// Its params (always an object; absent or null reads as `{}`).
        params: Value,
    },
    /// A message that gets no answer.
    Notification {
        /// The method.
        method: String,
        /// Its params (always an object).
        params: Value,
    },
    /// The answer to a request.
    Response {
        /// The id of the request it answers.
        id: Id,
        /// The result, or the error the request ended in.
        result: Result<Value, RpcError>,
    },
}

/// Why a line is not a message. Noise is counted and reported, never fatal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The line is not JSON.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// The line is JSON but not a JSON-RPC 2.0 message.
    #[error("JSON, but not a JSON-RPC 2.0 message: {0}")]
    NotJsonRpc(String),
}

impl Message {
    /// A request with `id`, `method` and `params`.
    pub fn request(id: Id, method: impl Into<String>, params: Value) -> Self {
        Message::Request {
            id,
            method: method.into(),
            params,
        }
    }

    /// A notification (no id).
    pub fn notification(method: impl Into<String>, params: Value) -> Self {
        Message::Notification {
            method: method.into(),
            params,
        }
    }

    /// Decodes one line (without its newline).
    pub fn decode(line: &[u8]) -> Result<Message, DecodeError> {
        let value: Value =
            serde_json::from_slice(line).map_err(|e| DecodeError::NotJson(e.to_string()))?;
        Message::from_value(value)
    }

    /// Reads a JSON value as a message; see [`Message::decode`] for what is accepted.
    pub fn from_value(value: Value) -> Result<Message, DecodeError> {
        let Value::Object(mut obj) = value else {
            return Err(DecodeError::NotJsonRpc("not an object".into()));
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(DecodeError::NotJsonRpc("\"jsonrpc\" is not \"2.0\"".into()));
        }
        let id = match obj.remove("id") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                serde_json::from_value::<Id>(v)
                    .map_err(|_| DecodeError::NotJsonRpc("id is not a number or string".into()))?,
            ),
        };
        if let Some(method) = obj.remove("method") {
            let Value::String(method) = method else {
                return Err(DecodeError::NotJsonRpc("method is not a string".into()));
            };
            let params = match obj.remove("params") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(p @ Value::Object(_)) => p,
                Some(_) => return Err(DecodeError::NotJsonRpc("params is not an object".into())),
            };
            return Ok(match id {
                Some(id) => Message::Request { id, method, params },
                None => Message::Notification { method, params },
            });
        }
        let id = id.ok_or_else(|| DecodeError::NotJsonRpc("a response without an id".into()))?;
        if let Some(error) = obj.remove("error") {
            let error: RpcError = serde_json::from_value(error)
                .map_err(|e| DecodeError::NotJsonRpc(format!("bad error object: {e}")))?;
            return Ok(Message::Response {
                id,
                result: Err(error),
            });
        }
        match obj.remove("result") {
            Some(result) => Ok(Message::Response {
                id,
                result: Ok(result),
            }),
            None => Err(DecodeError::NotJsonRpc(
                "neither method, result nor error".into(),
            )),
        }
    }

    /// The message as a JSON value, as it goes on the wire.
    pub fn to_value(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("jsonrpc".into(), Value::String("2.0".into()));
        match self {
            Message::Request { id, method, params } => {
                obj.insert("id".into(), id_value(id));
                obj.insert("method".into(), Value::String(method.clone()));
                obj.insert("params".into(), params.clone());
            }
            Message::Notification { method, params } => {
                obj.insert("method".into(), Value::String(method.clone()));
                obj.insert("params".into(), params.clone());
            }
            Message::Response { id, result } => {
                obj.insert("id".into(), id_value(id));
                match result {
                    Ok(v) => obj.insert("result".into(), v.clone()),
                    Err(e) => obj.insert(
                        "error".into(),
                        serde_json::to_value(e).unwrap_or(Value::Null),
                    ),
                };
            }
        }
        Value::Object(obj)
    }

    /// Encodes as one compact line, newline included.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// Appends the compact line (newline included) to `out`, writing straight from the message (no
    /// intermediate `Value`, so a 16 MiB payload is not copied first).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\"");
        match self {
            Message::Request { id, method, params } => {
                write_id(out, id);
                out.extend_from_slice(b",\"method\":");
                json_out::write_str(out, method);
                out.extend_from_slice(b",\"params\":");
                json_out::write_value(out, params);
            }
            Message::Notification { method, params } => {
                out.extend_from_slice(b",\"method\":");
                json_out::write_str(out, method);
                out.extend_from_slice(b",\"params\":");
                json_out::write_value(out, params);
            }
            Message::Response { id, result } => {
                write_id(out, id);
                match result {
                    Ok(value) => {
                        out.extend_from_slice(b",\"result\":");
                        json_out::write_value(out, value);
                    }
                    Err(error) => {
                        out.extend_from_slice(b",\"error\":{\"code\":");
                        out.extend_from_slice(error.code.to_string().as_bytes());
                        out.extend_from_slice(b",\"message\":");
                        json_out::write_str(out, &error.message);
                        if let Some(data) = &error.data {
                            out.extend_from_slice(b",\"data\":");
                            json_out::write_value(out, data);
                        }
                        out.push(b'}');
                    }
                }
            }
        }
        out.extend_from_slice(b"}\n");
    }
}

fn write_id(out: &mut Vec<u8>, id: &Id) {
    out.extend_from_slice(b",\"id\":");
    match id {
        Id::Number(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Id::Text(s) => json_out::write_str(out, s),
    }
}

fn id_value(id: &Id) -> Value {
    match id {
        Id::Number(n) => Value::from(*n),
        Id::Text(s) => Value::String(s.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_round_trip_through_one_line() {
        let cases = [
            Message::request(Id::Number(7), "execute", json!({"a": "x\ny"})),
            Message::notification("$/progress", json!({"id": 7})),
            Message::Response {
                id: Id::Text("s".into()),
                result: Ok(json!(null)),
            },
            Message::Response {
                id: Id::Number(1),
                result: Err(RpcError::new(ErrorKind::NotFound, "No object at x.")),
            },
        ];
        for msg in cases {
            let line = msg.encode();
            assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
            assert_eq!(Message::decode(&line[..line.len() - 1]).unwrap(), msg);
        }
    }

    #[test]
    fn noise_is_an_error_not_a_panic() {
        assert!(matches!(
            Message::decode(b"hello"),
            Err(DecodeError::NotJson(_))
        ));
        assert!(matches!(
            Message::decode(b"[1]"),
            Err(DecodeError::NotJsonRpc(_))
        ));
        assert!(matches!(
            Message::decode(br#"{"jsonrpc":"1.0","id":1,"result":1}"#),
            Err(DecodeError::NotJsonRpc(_))
        ));
    }
}
