//! Reading request params and answers of the store methods (docs/protocol.md §4.4), shared by the
//! proxies that send them and the servers that answer them, so both sides agree by construction.

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::RpcError;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::StoreError;

/// A request's params, read with messages that name the method and the missing field.
pub struct Params<'a> {
    method: &'a str,
    value: &'a Value,
}

impl<'a> Params<'a> {
    /// The params `value` of a request for `method` (named in messages).
    pub fn new(method: &'a str, value: &'a Value) -> Self {
        Params { method, value }
    }

    fn invalid(&self, field: &str, wanted: &str) -> RpcError {
        RpcError::new(
            ErrorKind::InvalidParams,
            format!("{} needs {wanted} '{field}'", self.method),
        )
    }

    /// A required string.
    pub fn str(&self, field: &str) -> Result<&'a str, RpcError> {
        self.value
            .get(field)
            .and_then(Value::as_str)
            .ok_or_else(|| self.invalid(field, "a string"))
    }

    /// A string, or `default` when absent or null.
    pub fn str_or(&self, field: &str, default: &'a str) -> Result<&'a str, RpcError> {
        match self.value.get(field) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(self.invalid(field, "a string")),
        }
    }

    /// A boolean, or `default` when absent or null.
    pub fn bool_or(&self, field: &str, default: bool) -> Result<bool, RpcError> {
        match self.value.get(field) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(self.invalid(field, "true or false in")),
        }
    }

    /// Any typed value, `T::default()`-like `None` when absent or null.
    pub fn opt<T: DeserializeOwned>(&self, field: &str) -> Result<Option<T>, RpcError> {
        match self.value.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => serde_json::from_value(v.clone()).map(Some).map_err(|e| {
                RpcError::new(
                    ErrorKind::InvalidParams,
                    format!("{}: '{field}' is not valid: {e}", self.method),
                )
            }),
        }
    }

    /// Base64 bytes.
    pub fn bytes(&self, field: &str) -> Result<Vec<u8>, RpcError> {
        agent_env_protocol::methods::bytes::decode(self.str(field)?)
            .map_err(|e| self.invalid(field, &format!("base64 ({e}) in")))
    }
}

/// Reads one field of an answer, as a proxy does; a wrong shape is an internal error naming the method.
pub fn answer_field<T: DeserializeOwned>(
    method: &str,
    answer: &Value,
    field: &str,
) -> Result<T, StoreError> {
    let value = answer.get(field).cloned().unwrap_or(Value::Null);
    let kind = json_kind(&value);
    serde_json::from_value(value).map_err(|e| {
        // A secret store's answer may hold a secret, and so may serde's words about it.
        if method.starts_with("store.secret.") {
            return StoreError::Internal(format!(
                "the answer to {method} has no valid '{field}': it is {kind} (the answer is not shown, as a secret store's answers may hold secrets)"
            ));
        }
        StoreError::Internal(format!(
            "the answer to {method} has no valid '{field}' ({e}): {}",
            shorten(&answer.to_string())
        ))
    })
}

/// What kind of JSON value `value` is, for a message that must not quote it.
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "missing or null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn shorten(text: &str) -> String {
    if text.len() <= 200 {
        return text.to_string();
    }
    let mut end = 200;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// An unknown operation of a known kind.
pub fn unknown_op(method: &str) -> RpcError {
    RpcError::new(
        ErrorKind::MethodNotFound,
        format!("{method} is not a store operation"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_wrong_answer_from_a_secret_store_is_told_without_its_value() {
        let answer = json!({"value": {"username": "svc", "password": "hunter2-topsecret"}});
        let e = answer_field::<Option<String>>("store.secret.get", &answer, "value").unwrap_err();
        let text = e.to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("it is an object"), "{text}");
        // Serde quotes a wrong string: not for a secret store either.
        let answer = json!({"value": "hunter2-topsecret"});
        let e = answer_field::<Option<bool>>("store.secret.get", &answer, "value").unwrap_err();
        assert!(!e.to_string().contains("hunter2"), "{e}");
        // Other stores' answers are quoted, to help their authors.
        let e = answer_field::<u64>("store.object.put", &json!({"size": "x"}), "size").unwrap_err();
        assert!(e.to_string().contains(r#"{"size":"x"}"#), "{e}");
    }
}
