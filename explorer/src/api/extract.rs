//! Request parts as the handlers take them, each failure an [`ApiError`] in the API's shape: the
//! path's ids (percent-decoded, so `%2F` is a `/` inside one id), the query string, a JSON body.

use axum::extract::path::ErrorKind;
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequestParts, Path, RawQuery};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use agent_env::bundle::task_json::{self, DuplicateKey, Segment};

use crate::data::entities::stored_task_id;
use crate::http::blocking::blocking;
use crate::http::problem::{ApiError, ApiResult};
use crate::http::query::Query;
use crate::http::shown::shown;
use crate::state::Shared;

/// The path's parameters in order, decoded.
pub struct Ids(pub Vec<String>);

impl<S: Send + Sync> FromRequestParts<S> for Ids {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Path::<Vec<String>>::from_request_parts(parts, state).await {
            Ok(Path(ids)) => Ok(Ids(ids)),
            Err(e) => Err(path_problem(&e)),
        }
    }
}

/// Why the path's ids could not be read, in the API's words: an id whose percent-encoding is not
/// UTF-8 is a 422 naming the parameter, as such a query value is.
fn path_problem(e: &PathRejection) -> ApiError {
    if let PathRejection::FailedToDeserializePathParams(inner) = e {
        if let ErrorKind::InvalidUtf8InPathParam { key } = inner.kind() {
            return ApiError::invalid(
                &["path", key],
                "the value is not valid UTF-8: percent-encode the id's UTF-8 bytes (é is %C3%A9)",
                "value_error",
            );
        }
    }
    ApiError::bad_request(format!("the path does not decode: {}", e.body_text()))
}

impl Ids {
    /// The `i`th parameter.
    pub fn at(&self, i: usize) -> ApiResult<&str> {
        self.0
            .get(i)
            .map(String::as_str)
            .ok_or_else(|| ApiError::internal("a route's parameter is missing"))
    }
}

/// The path's parameters, the first a task id as the store holds it: a bundle run's task given
/// without its `@local/` (as earlier versions of `agent-env task list` printed it) is read as the stored one
/// ([`task_id_as_stored`](crate::data::entities::task_id_as_stored)). When no store that answered
/// holds the task and the configured document store failed while it was looked up, the request is a
/// 503, as any lookup only that store could answer is: the task may be there.
pub struct TaskIds(pub Ids);

impl FromRequestParts<Shared> for TaskIds {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Shared,
    ) -> Result<Self, Self::Rejection> {
        let Ids(mut ids) = Ids::from_request_parts(parts, state).await?;
        if let Some(given) = ids.first().filter(|id| !id.starts_with('@')).cloned() {
            let s = state.clone();
            ids[0] = blocking(move || {
                let r = s.reading();
                match stored_task_id(r.docs(), &given) {
                    Some(stored) => Ok(stored),
                    None => match r.unavailable(&format!("Task '{}' not found", shown(&given))) {
                        Some(unavailable) => Err(unavailable),
                        None => Ok(given),
                    },
                }
            })
            .await?;
        }
        Ok(TaskIds(Ids(ids)))
    }
}

/// The query string, parsed.
pub struct Q(pub Query);

impl<S: Send + Sync> FromRequestParts<S> for Q {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let RawQuery(raw) = RawQuery::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::bad_request("the query string cannot be read"))?;
        Ok(Q(Query::parse(raw.as_deref())?))
    }
}

/// Parses a JSON body (an empty one is `{}`); what does not fit is a 422 naming the field, as
/// FastAPI answers (unknown keys included), in words a client's user can read.
pub fn json_body<T: DeserializeOwned>(body: &[u8]) -> ApiResult<T> {
    let text = if body.iter().all(u8::is_ascii_whitespace) {
        &b"{}"[..]
    } else {
        body
    };
    let read = task_json::parse_all(text).map_err(|e| {
        ApiError::invalid(
            &["body"],
            format!(
                "the body is not valid JSON: {}",
                without_position(&e.to_string())
            ),
            "json_invalid",
        )
    })?;
    // A key given twice would be read as its last value, the first dropped without a word: refused,
    // as an unknown key is.
    if let Some(twice) = read.duplicates.first() {
        return Err(given_twice(twice));
    }
    let value = read.value;
    if !value.is_object() {
        return Err(ApiError::invalid(
            &["body"],
            format!(
                "the body must be a JSON object of the request's keys, such as {{}}, not {}",
                kind_of(&value)
            ),
            "model_attributes_type",
        ));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let mut loc: Vec<String> = vec!["body".into()];
        for segment in e.path().iter() {
            match segment {
                serde_path_to_error::Segment::Seq { index } => loc.push(index.to_string()),
                serde_path_to_error::Segment::Map { key } => loc.push(key.clone()),
                serde_path_to_error::Segment::Enum { variant } => loc.push(variant.clone()),
                serde_path_to_error::Segment::Unknown => {}
            }
        }
        let message = without_position(&e.inner().to_string());
        let (kind, msg) = match message.strip_prefix("unknown field `") {
            Some(rest) => {
                // The path ends at the unknown key already, unless the key is at the top.
                let field = rest.split('`').next().unwrap_or("").to_string();
                if loc.last() != Some(&field) {
                    loc.push(field);
                }
                ("extra_forbidden", message)
            }
            None => ("value_error", plain(&message)),
        };
        let loc: Vec<&str> = loc.iter().map(String::as_str).collect();
        ApiError::invalid(&loc, msg, kind)
    })
}

/// 422 at the key given twice in one object of the body.
fn given_twice(twice: &DuplicateKey) -> ApiError {
    let mut loc: Vec<String> = vec!["body".into()];
    for segment in &twice.within {
        loc.push(match segment {
            Segment::Key(k) => k.clone(),
            Segment::Index(i) => i.to_string(),
        });
    }
    loc.push(twice.key.clone());
    let loc: Vec<&str> = loc.iter().map(String::as_str).collect();
    ApiError::invalid(
        &loc,
        format!(
            "the key '{}' is given twice in one object (line {}, column {}), and only the last would be read: give it once",
            twice.key, twice.line, twice.column
        ),
        "duplicate_key",
    )
}

/// A serde message without its ` at line L column C`.
fn without_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

/// What a JSON value is, in a sentence's words.
fn kind_of(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "true or false",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    }
}

/// serde's "invalid type: string \"x\", expected a map" as "should be an object, not the string \"x\"".
fn plain(message: &str) -> String {
    let parts = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
        .and_then(|rest| rest.split_once(", expected "));
    let Some((got, wanted)) = parts else {
        return message.to_string();
    };
    let wanted = match wanted {
        "a map" => "an object",
        "a sequence" => "a list",
        "a boolean" => "true or false",
        "i64" | "i32" | "u64" | "u32" | "usize" => "a whole number",
        "f64" | "f32" => "a number",
        "a string" => "a string",
        other => other,
    };
    let got = got.replace('`', "");
    let got = got
        .replace("sequence", "a list")
        .replace("map", "an object")
        .replace("integer", "the number")
        .replace("floating point", "the number")
        .replace("boolean", "")
        .replace("string", "the string");
    format!("should be {wanted}, not {}", got.trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct Body {
        #[serde(default)]
        count: Option<u32>,
    }

    #[test]
    fn bodies_refuse_unknown_keys_and_bad_json_with_422() {
        let b: Body = json_body(b"").unwrap();
        assert!(b.count.is_none());
        let e = json_body::<Body>(br#"{"nope": 1}"#).unwrap_err();
        assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(e.detail[0]["type"], "extra_forbidden");
        assert_eq!(e.detail[0]["loc"], serde_json::json!(["body", "nope"]));
        let e = json_body::<Body>(b"{").unwrap_err();
        assert_eq!(e.detail[0]["type"], "json_invalid");
        let e = json_body::<Body>(br#"{"count": "x"}"#).unwrap_err();
        assert_eq!(e.detail[0]["type"], "value_error");
        assert_eq!(e.detail[0]["loc"], serde_json::json!(["body", "count"]));
    }

    #[test]
    fn a_key_given_twice_is_refused_where_it_is() {
        let e = json_body::<Run>(br#"{"version": 1, "version": 2}"#).unwrap_err();
        assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(e.detail[0]["type"], "duplicate_key");
        assert_eq!(e.detail[0]["loc"], serde_json::json!(["body", "version"]));
        let e = json_body::<Run>(br#"{"seed": {"a": "x", "a": "y"}}"#).unwrap_err();
        assert_eq!(e.detail[0]["loc"], serde_json::json!(["body", "seed", "a"]));
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Run {
        version: Option<i64>,
        seed: Option<serde_json::Map<String, serde_json::Value>>,
        seeds: Option<Vec<serde_json::Map<String, serde_json::Value>>>,
    }

    #[test]
    fn a_422_names_the_field_in_plain_words() {
        let e = json_body::<Run>(b"[]").unwrap_err();
        assert_eq!(e.detail[0]["loc"], serde_json::json!(["body"]));
        let msg = e.detail[0]["msg"].as_str().unwrap();
        assert!(
            msg.contains("JSON object") && !msg.contains("struct"),
            "{msg}"
        );
        let e = json_body::<Run>(br#"{"seed": "x"}"#).unwrap_err();
        assert_eq!(e.detail[0]["loc"], serde_json::json!(["body", "seed"]));
        assert_eq!(
            e.detail[0]["msg"],
            "should be an object, not the string \"x\""
        );
        let e = json_body::<Run>(br#"{"version": "1"}"#).unwrap_err();
        assert_eq!(e.detail[0]["loc"], serde_json::json!(["body", "version"]));
        assert_eq!(
            e.detail[0]["msg"],
            "should be a whole number, not the string \"1\""
        );
        let e = json_body::<Run>(br#"{"seeds": [{}, 2]}"#).unwrap_err();
        assert_eq!(
            e.detail[0]["loc"],
            serde_json::json!(["body", "seeds", "1"])
        );
        assert_eq!(e.detail[0]["msg"], "should be an object, not the number 2");
    }
}
