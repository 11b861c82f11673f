//! Request parts as the handlers take them, each failure an [`ApiError`] in the API's shape: the
//! path's ids (percent-decoded, so `%2F` is a `/` inside one id), the query string, a JSON body.

use axum::extract::{FromRequestParts, Path, RawQuery};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::http::problem::{ApiError, ApiResult};
use crate::http::query::Query;

/// The path's parameters in order, decoded.
pub struct Ids(pub Vec<String>);

impl<S: Send + Sync> FromRequestParts<S> for Ids {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Path::<Vec<String>>::from_request_parts(parts, state).await {
            Ok(Path(ids)) => Ok(Ids(ids)),
            Err(e) => Err(ApiError::bad_request(format!(
                "the path does not decode: {}",
                e.body_text()
            ))),
        }
    }
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
/// FastAPI answers (unknown keys included).
pub fn json_body<T: DeserializeOwned>(body: &[u8]) -> ApiResult<T> {
    let text = if body.iter().all(u8::is_ascii_whitespace) {
        &b"{}"[..]
    } else {
        body
    };
    serde_json::from_slice(text).map_err(|e| {
        let message = e.to_string();
        let kind = if message.starts_with("unknown field") {
            "extra_forbidden"
        } else if e.is_syntax() || e.is_eof() {
            "json_invalid"
        } else {
            "value_error"
        };
        let field = message
            .split('`')
            .nth(1)
            .filter(|_| kind == "extra_forbidden")
            .unwrap_or("")
            .to_string();
        let mut loc = vec!["body"];
        if !field.is_empty() {
            loc.push(&field);
        }
        ApiError::invalid(&loc, message, kind)
    })
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
        assert_eq!(e.detail[0]["loc"][1], "nope");
        let e = json_body::<Body>(b"{").unwrap_err();
        assert_eq!(e.detail[0]["type"], "json_invalid");
        let e = json_body::<Body>(br#"{"count": "x"}"#).unwrap_err();
        assert_eq!(e.detail[0]["type"], "value_error");
    }
}
