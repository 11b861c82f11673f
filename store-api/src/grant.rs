//! Transfer grants: short-lived HTTP(S) requests a store signs so that a process without the store's
//! credentials (a sandbox, a browser, another machine) can read or write one object directly.
//!
//! The shapes are the wire models of the Python original: a read grant is `http-get`, a write grant is
//! `http-put`, and an upload policy wraps an `http-post-policy` that admits any key under one prefix.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{StoreError, StoreResult};

/// The shortest grant lifetime a store accepts in its settings: long enough to outlast a transfer.
pub const MIN_GRANT_LIFETIME_SECONDS: u64 = 900;
/// The lifetime a store's grants get when its settings name none: 12 hours.
pub const DEFAULT_GRANT_LIFETIME_SECONDS: u64 = 43_200;

/// A signed GET (HEAD also works) of one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpGetGrant {
    /// Always `http-get`.
    pub kind: String,
    /// The URL to GET.
    pub url: String,
    /// When the grant stops working, RFC 3339 UTC.
    pub expires_at: String,
    /// Headers the request must carry exactly.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

/// A signed PUT of one object, with the content type it must declare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpPutGrant {
    /// Always `http-put`.
    pub kind: String,
    /// The URL to PUT the bytes to.
    pub url: String,
    /// When the grant stops working, RFC 3339 UTC.
    pub expires_at: String,
    /// Headers the request must carry exactly (at least `Content-Type`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

/// A multipart/form-data POST that uploads one file to any key under the policy's prefix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpPostPolicyGrant {
    /// Always `http-post-policy`.
    pub kind: String,
    /// The URL to POST the form to.
    pub url: String,
    /// Form fields to send as they are, before the path and the file.
    #[serde(default)]
    pub fields: BTreeMap<String, String>,
    /// The name of the form field that carries the object's key.
    pub path_field: String,
    /// The name of the form field that carries the file (it must come last).
    pub file_field: String,
    /// Headers the request must carry exactly.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

/// Permission to upload any number of objects under one prefix until `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadPolicy {
    /// How to upload one object.
    pub write: HttpPostPolicyGrant,
    /// When the policy stops working, RFC 3339 UTC.
    pub expires_at: String,
}

impl HttpGetGrant {
    /// A read grant for `url` until `expires_at`, with no required headers.
    pub fn new(url: impl Into<String>, expires_at: impl Into<String>) -> Self {
        HttpGetGrant {
            kind: "http-get".into(),
            url: url.into(),
            expires_at: expires_at.into(),
            headers: BTreeMap::new(),
        }
    }
}

impl HttpPutGrant {
    /// A write grant for `url` until `expires_at` that must declare `media_type`.
    pub fn new(url: impl Into<String>, expires_at: impl Into<String>, media_type: &str) -> Self {
        HttpPutGrant {
            kind: "http-put".into(),
            url: url.into(),
            expires_at: expires_at.into(),
            headers: BTreeMap::from([("Content-Type".to_string(), media_type.to_string())]),
        }
    }
}

impl HttpPostPolicyGrant {
    /// A POST policy grant with the form's fixed fields and the names of its key and file fields.
    pub fn new(
        url: impl Into<String>,
        fields: BTreeMap<String, String>,
        path_field: &str,
        file_field: &str,
    ) -> Self {
        HttpPostPolicyGrant {
            kind: "http-post-policy".into(),
            url: url.into(),
            fields,
            path_field: path_field.into(),
            file_field: file_field.into(),
            headers: BTreeMap::new(),
        }
    }
}

/// The lifetime a grant gets: `expires_in` when given (positive, and at most the backend's `max`
/// seconds), else the store's default.
pub fn grant_lifetime(
    expires_in: Option<Duration>,
    default: Duration,
    max: u64,
) -> StoreResult<Duration> {
    let lifetime = match expires_in {
        Some(d) if d.is_zero() => {
            return Err(StoreError::InvalidValue(
                "expires_in must be positive, got 0".into(),
            ))
        }
        Some(d) => d,
        None => default,
    };
    if lifetime.as_secs() > max {
        return Err(StoreError::InvalidValue(format!(
            "expires_in can be at most {max} seconds for this store, got {}",
            lifetime.as_secs()
        )));
    }
    Ok(lifetime)
}

/// Checks a store setting `grant_lifetime_seconds` against the rules every store shares: a whole number,
/// at least [`MIN_GRANT_LIFETIME_SECONDS`], at most the backend's `max`.
pub fn check_grant_lifetime_setting(value: &serde_json::Value, max: u64) -> StoreResult<u64> {
    let seconds = match value {
        serde_json::Value::Number(n) if n.is_u64() || n.is_i64() => n.as_i64().unwrap_or(i64::MAX),
        other => {
            return Err(StoreError::Config(format!(
                "grant_lifetime_seconds must be a whole number of seconds, got {other}"
            )))
        }
    };
    if seconds < MIN_GRANT_LIFETIME_SECONDS as i64 {
        return Err(StoreError::Config(format!(
            "grant_lifetime_seconds must be at least {MIN_GRANT_LIFETIME_SECONDS}, to outlast a transfer; got {seconds}"
        )));
    }
    let seconds = seconds as u64;
    if seconds > max {
        return Err(StoreError::Config(format!(
            "grant_lifetime_seconds can be at most {max} for this store, got {seconds}"
        )));
    }
    Ok(seconds)
}

/// What a store that does not grant answers: `<Store> cannot issue remote object-transfer grants`.
pub fn grants_unsupported(store: &str) -> StoreError {
    StoreError::NotSupported(format!(
        "{store} cannot issue remote object-transfer grants"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn grants_serialize_as_the_original_wire_models() {
        let get = HttpGetGrant::new("https://h/o", "2026-01-01T00:00:00Z");
        assert_eq!(
            serde_json::to_value(&get).unwrap(),
            json!({"kind": "http-get", "url": "https://h/o", "expires_at": "2026-01-01T00:00:00Z"})
        );
        let put = HttpPutGrant::new("https://h/o", "2026-01-01T00:00:00Z", "application/json");
        assert_eq!(
            serde_json::to_value(&put).unwrap()["headers"],
            json!({"Content-Type": "application/json"})
        );
    }

    #[test]
    fn lifetime_settings_are_checked_with_the_original_messages() {
        assert_eq!(
            check_grant_lifetime_setting(&json!(3600), 604_800).unwrap(),
            3600
        );
        assert_eq!(
            check_grant_lifetime_setting(&json!(true), 604_800)
                .unwrap_err()
                .to_string(),
            "grant_lifetime_seconds must be a whole number of seconds, got true"
        );
        assert_eq!(
            check_grant_lifetime_setting(&json!(60), 604_800)
                .unwrap_err()
                .to_string(),
            "grant_lifetime_seconds must be at least 900, to outlast a transfer; got 60"
        );
        assert_eq!(
            check_grant_lifetime_setting(&json!(700_000), 604_800)
                .unwrap_err()
                .to_string(),
            "grant_lifetime_seconds can be at most 604800 for this store, got 700000"
        );
        assert!(grant_lifetime(Some(Duration::ZERO), Duration::from_secs(1), 10).is_err());
        assert_eq!(
            grant_lifetime(Some(Duration::from_secs(11)), Duration::from_secs(1), 10)
                .unwrap_err()
                .to_string(),
            "expires_in can be at most 10 seconds for this store, got 11"
        );
    }
}
