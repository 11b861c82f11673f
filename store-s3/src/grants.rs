//! Transfer grants over S3's own signatures: presigned GET and PUT URLs, and a POST policy form for
//! uploads under one prefix (the policy bounds each object's size and its key's prefix; the server
//! enforces both).

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine;
use hmac::{Hmac, Mac};
use rusty_s3::actions::{GetObject, PutObject};
use rusty_s3::S3Action;
use sha2::Sha256;

use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::grant::{
    grant_lifetime, grants_unsupported, HttpGetGrant, HttpPostPolicyGrant, HttpPutGrant,
    UploadPolicy,
};

use crate::client::S3Client;
use crate::settings::{CLASS, MAX_GRANT_LIFETIME_SECONDS};

/// The form field that carries an upload's key, and the one that carries its file.
pub const PATH_FIELD: &str = "key";
/// The form field that carries the uploaded file.
pub const FILE_FIELD: &str = "file";

fn lifetime(store: &S3Client, expires_in: Option<Duration>) -> StoreResult<Duration> {
    if !store.grants_supported() {
        return Err(grants_unsupported(&format!(
            "{CLASS} without credentials or over plain HTTP to another machine"
        )));
    }
    grant_lifetime(
        expires_in,
        store.settings.grant_lifetime,
        MAX_GRANT_LIFETIME_SECONDS,
    )
}

/// Now, and when a grant of `lifetime` made now expires (RFC 3339, whole seconds).
fn expiry(lifetime: Duration) -> (jiff::Timestamp, String) {
    let now = jiff::Timestamp::now();
    let secs = now.as_second().saturating_add(lifetime.as_secs() as i64);
    let at = jiff::Timestamp::from_second(secs).unwrap_or(jiff::Timestamp::MAX);
    (now, at.to_string())
}

fn object_key(store: &S3Client, object_url: &str) -> StoreResult<String> {
    let key = store.at.key_of(object_url)?;
    store.at.object_key(&key)
}

/// A presigned GET of one object.
pub fn read_grant(
    store: &S3Client,
    object_url: &str,
    expires_in: Option<Duration>,
) -> StoreResult<HttpGetGrant> {
    let lifetime = lifetime(store, expires_in)?;
    let key = object_key(store, object_url)?;
    let (_, expires_at) = expiry(lifetime);
    let action = GetObject::new(&store.bucket, store.credentials.as_ref(), &key);
    Ok(HttpGetGrant::new(
        action.sign(lifetime).to_string(),
        expires_at,
    ))
}

/// A presigned PUT of one object that must declare `media_type` and may only create it (`If-None-Match:
/// *` is signed in, so the URL cannot replace the object, and a second use fails). S3 cannot bound a
/// presigned PUT's size below its own 5 GiB limit, so `max_bytes` is checked against that limit only;
/// an upload policy ([`upload_policy`]) is what bounds a size.
pub fn write_grant(
    store: &S3Client,
    object_url: &str,
    media_type: &str,
    max_bytes: u64,
    expires_in: Option<Duration>,
) -> StoreResult<HttpPutGrant> {
    const MAX_SINGLE_UPLOAD_BYTES: u64 = 5 * 1024 * 1024 * 1024;
    let lifetime = lifetime(store, expires_in)?;
    let key = object_key(store, object_url)?;
    if max_bytes > MAX_SINGLE_UPLOAD_BYTES {
        return Err(StoreError::InvalidValue(format!(
            "max_bytes can be at most {MAX_SINGLE_UPLOAD_BYTES} for one PUT to {CLASS}, got {max_bytes}"
        )));
    }
    let (_, expires_at) = expiry(lifetime);
    let mut action = PutObject::new(&store.bucket, store.credentials.as_ref(), &key);
    action
        .headers_mut()
        .insert("content-type", media_type.to_string());
    action.headers_mut().insert("if-none-match", "*");
    let mut grant = HttpPutGrant::new(action.sign(lifetime).to_string(), expires_at, media_type);
    grant
        .headers
        .insert("If-None-Match".to_string(), "*".to_string());
    Ok(grant)
}

/// An S3 POST policy admitting uploads of at most `max_object_bytes` under `prefix_url`.
pub fn upload_policy(
    store: &S3Client,
    prefix_url: &str,
    max_object_bytes: u64,
    expires_in: Duration,
) -> StoreResult<UploadPolicy> {
    let lifetime = lifetime(store, Some(expires_in))?;
    let Some(credentials) = &store.settings.credentials else {
        return Err(grants_unsupported(CLASS));
    };
    let key = store.at.key_of(prefix_url)?;
    let prefix = if key.is_empty() || key.ends_with('/') {
        key
    } else {
        format!("{key}/")
    };
    let (now, expires_at) = expiry(lifetime);
    let date = now.strftime("%Y%m%d").to_string();
    let stamp = now.strftime("%Y%m%dT%H%M%SZ").to_string();
    let credential = format!(
        "{}/{date}/{}/s3/aws4_request",
        credentials.access_key_id, store.settings.region
    );
    let mut fields = BTreeMap::from([
        (
            "x-amz-algorithm".to_string(),
            "AWS4-HMAC-SHA256".to_string(),
        ),
        ("x-amz-credential".to_string(), credential.clone()),
        ("x-amz-date".to_string(), stamp.clone()),
    ]);
    let mut conditions = vec![
        serde_json::json!({"bucket": store.settings.bucket}),
        serde_json::json!(["starts-with", "$key", prefix]),
        serde_json::json!(["content-length-range", 0, max_object_bytes]),
        serde_json::json!(["starts-with", "$Content-Type", ""]),
        serde_json::json!({"x-amz-algorithm": "AWS4-HMAC-SHA256"}),
        serde_json::json!({"x-amz-credential": credential}),
        serde_json::json!({"x-amz-date": stamp}),
    ];
    if let Some(token) = &credentials.session_token {
        conditions.push(serde_json::json!({"x-amz-security-token": token}));
        fields.insert("x-amz-security-token".to_string(), token.clone());
    }
    let policy = serde_json::json!({"expiration": expires_at, "conditions": conditions});
    let encoded = base64::engine::general_purpose::STANDARD.encode(policy.to_string());
    let signature = sign_policy(
        &credentials.secret_access_key,
        &date,
        &store.settings.region,
        &encoded,
    );
    fields.insert("policy".to_string(), encoded);
    fields.insert("x-amz-signature".to_string(), signature);
    let write = HttpPostPolicyGrant::new(
        store.bucket.base_url().to_string(),
        fields,
        PATH_FIELD,
        FILE_FIELD,
    );
    Ok(UploadPolicy { write, expires_at })
}

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    // An HMAC takes a key of any length, so this never fails.
    match HmacSha256::new_from_slice(key) {
        Ok(mut mac) => {
            mac.update(data);
            mac.finalize().into_bytes().to_vec()
        }
        Err(_) => Vec::new(),
    }
}

/// SigV4's signature of a POST policy: the day's signing key applied to the base64 policy.
fn sign_policy(secret: &str, date: &str, region: &str, policy_b64: &str) -> String {
    let k_date = hmac(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k_region = hmac(&k_date, region.as_bytes());
    let k_service = hmac(&k_region, b"s3");
    let k_signing = hmac(&k_service, b"aws4_request");
    hex::encode(hmac(&k_signing, policy_b64.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::sign_policy;

    #[test]
    fn policy_signatures_follow_sigv4() {
        // AWS's published example: "Example: Browser-Based Upload using HTTP POST (Using AWS Signature
        // Version 4)", whose policy and signature are reproduced here.
        let policy = "eyAiZXhwaXJhdGlvbiI6ICIyMDE1LTEyLTMwVDEyOjAwOjAwLjAwMFoiLA0KICAiY29uZGl0aW9ucyI6IFsNCiAgICB7ImJ1Y2tldCI6ICJzaWd2NGV4YW1wbGVidWNrZXQifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRrZXkiLCAidXNlci91c2VyMS8iXSwNCiAgICB7ImFjbCI6ICJwdWJsaWMtcmVhZCJ9LA0KICAgIHsic3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiOiAiaHR0cDovL3NpZ3Y0ZXhhbXBsZWJ1Y2tldC5zMy5hbWF6b25hd3MuY29tL3N1Y2Nlc3NmdWxfdXBsb2FkLmh0bWwifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRDb250ZW50LVR5cGUiLCAiaW1hZ2UvIl0sDQogICAgeyJ4LWFtei1tZXRhLXV1aWQiOiAiMTQzNjUxMjM2NTEyNzQifSwNCiAgICB7IngtYW16LXNlcnZlci1zaWRlLWVuY3J5cHRpb24iOiAiQUVTMjU2In0sDQogICAgWyJzdGFydHMtd2l0aCIsICIkeC1hbXotbWV0YS10YWciLCAiIl0sDQoNCiAgICB7IngtYW16LWNyZWRlbnRpYWwiOiAiQUtJQUlPU0ZPRE5ON0VYQU1QTEUvMjAxNTEyMjkvdXMtZWFzdC0xL3MzL2F3czRfcmVxdWVzdCJ9LA0KICAgIHsieC1hbXotYWxnb3JpdGhtIjogIkFXUzQtSE1BQy1TSEEyNTYifSwNCiAgICB7IngtYW16LWRhdGUiOiAiMjAxNTEyMjlUMDAwMDAwWiIgfQ0KICBdDQp9";
        assert_eq!(
            sign_policy(
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "20151229",
                "us-east-1",
                policy
            ),
            "8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e"
        );
    }
}
