//! The object kit's 3 grant cases, run over real HTTP(S) against a store that issues transfer grants:
//! a read grant fetches the object, a write grant uploads with its signed content type, and an upload
//! policy admits objects under its root only, within its size bound.
//!
//! They need an HTTP client, which the `grant-kit` feature brings; a build without it lists them as
//! skipped with that reason.

use std::time::Duration;

use super::support::{as_json, ensure, ensure_eq, put, Ctx};
use super::Case;
use crate::error::StoreError;
use crate::grant::HttpPostPolicyGrant;
use crate::object::ObjectStore;

type ObjectCase = Case<dyn ObjectStore>;

/// The grant cases, in the original's order.
pub const GRANT_CASES: [ObjectCase; 3] = [
    ObjectCase {
        name: "read_grant_fetches_the_object",
        run: read_grant_fetches_the_object,
    },
    ObjectCase {
        name: "write_grant_uploads_with_the_signed_content_type",
        run: write_grant_uploads_with_the_signed_content_type,
    },
    ObjectCase {
        name: "namespace_grant_confines_uploads_to_its_root",
        run: namespace_grant_confines_uploads_to_its_root,
    },
];

/// A client that trusts what the store says its grants need (its private CA), or the public CAs.
fn agent(store: &dyn ObjectStore) -> Result<ureq::Agent, String> {
    agent_trusting(store.grant_trust_pem().as_deref())
}

/// A client that trusts the CA `pem` when given, else the public CAs.
fn agent_trusting(pem: Option<&str>) -> Result<ureq::Agent, String> {
    let mut config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)));
    if let Some(pem) = pem {
        let cert = ureq::tls::Certificate::from_pem(pem.as_bytes())
            .map_err(|e| format!("the store's grant CA is not a PEM certificate: {e}"))?;
        config = config.tls_config(
            ureq::tls::TlsConfig::builder()
                .root_certs(ureq::tls::RootCerts::new_with_certs(&[cert]))
                .build(),
        );
    }
    Ok(config.build().into())
}

/// Status and body of one request, with a client that trusts what the store's grants need.
fn exchange(
    store: &dyn ObjectStore,
    method: &str,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    extra: &[(&str, String)],
    body: Option<Vec<u8>>,
) -> Result<(u16, Vec<u8>), String> {
    exchange_with(&agent(store)?, method, url, headers, extra, body)
}

/// Status and body of one request sent with `agent`.
fn exchange_with(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    extra: &[(&str, String)],
    body: Option<Vec<u8>>,
) -> Result<(u16, Vec<u8>), String> {
    let mut builder = ureq::http::Request::builder().method(method).uri(url);
    for (name, value) in headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    for (name, value) in extra {
        builder = builder.header(*name, value.as_str());
    }
    let sent = match body {
        Some(bytes) => builder
            .header("Content-Length", bytes.len().to_string())
            .body(bytes)
            .map_err(|e| e.to_string())
            .and_then(|r| agent.run(r).map_err(|e| e.to_string())),
        None => builder
            .body(())
            .map_err(|e| e.to_string())
            .and_then(|r| agent.run(r).map_err(|e| e.to_string())),
    };
    let shown = shown_url(url);
    let mut response = sent.map_err(|e| {
        format!(
            "{method} {shown} failed: {}",
            without_grant(&e, url, &shown)
        )
    })?;
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .with_config()
        .limit(16 * 1024 * 1024)
        .read_to_vec()
        .map_err(|e| format!("reading the answer to {method} {shown}: {e}"))?;
    Ok((status, body))
}

/// The shortest path segment taken for a signed token: longer than any name the kit gives an object.
const MIN_TOKEN_CHARS: usize = 32;

/// A grant's URL as messages show it. The URL is a credential until it expires, so what signs it is
/// left out: the query and fragment (where an S3 grant's signature is), and every path segment that is
/// a token ([`is_token`]; the local object store's grant is `/v1/grants/<signed token>`), shown as
/// `***`. What is left tells which request failed.
fn shown_url(url: &str) -> String {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    url[..end]
        .split('/')
        .map(|segment| if is_token(segment) { "***" } else { segment })
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether a path segment is a token rather than a name: [`MIN_TOKEN_CHARS`] or more of the characters
/// base64url, hex and signed-token formats use (letters, digits, `-`, `_`, `.`, `=`, `~`, `%`).
fn is_token(segment: &str) -> bool {
    segment.len() >= MIN_TOKEN_CHARS
        && segment
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '=' | '~' | '%'))
}

/// An HTTP client's error text with the grant's URL, and each token of it, as [`shown_url`] shows
/// them, should the text quote the URL.
fn without_grant(error: &impl std::fmt::Display, url: &str, shown: &str) -> String {
    let mut text = error.to_string().replace(url, shown);
    let end = url.find(['?', '#']).unwrap_or(url.len());
    for token in url[..end].split('/').filter(|s| is_token(s)) {
        text = text.replace(token, "***");
    }
    if end < url.len() {
        text = text.replace(&url[end..], "");
    }
    text
}

fn read_grant_fetches_the_object(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let url = put(
        store,
        &format!("{ns}grant/read.bin"),
        b"granted bytes\x00\xff",
    )?;
    let grant = store.issue_read_grant(&url, None).ctx("issue_read_grant")?;
    ensure_eq(grant.kind.as_str(), "http-get", "the read grant's kind")?;
    let (status, body) = exchange(store, "GET", &grant.url, &grant.headers, &[], None)?;
    ensure_eq(status, 200, "the status of GET on the read grant")?;
    ensure_eq(
        body,
        b"granted bytes\x00\xff".to_vec(),
        "the bytes the read grant fetched",
    )
}

fn write_grant_uploads_with_the_signed_content_type(
    store: &dyn ObjectStore,
    ns: &str,
) -> Result<(), String> {
    let url = store
        .object_url(&format!("{ns}grant/write.json"))
        .ctx("object_url")?;
    let grant = store
        .issue_write_grant(&url, "application/json", 64, None)
        .ctx("issue_write_grant")?;
    ensure_eq(grant.kind.as_str(), "http-put", "the write grant's kind")?;
    ensure(
        grant.headers.get("Content-Type").map(String::as_str) == Some("application/json"),
        || {
            format!(
                "the write grant should require Content-Type application/json, its headers are {}",
                as_json(&grant.headers)
            )
        },
    )?;
    let (status, body) = exchange(
        store,
        "PUT",
        &grant.url,
        &grant.headers,
        &[],
        Some(b"{}".to_vec()),
    )?;
    ensure((200..300).contains(&status), || {
        format!(
            "PUT on the write grant answered {status}: {}",
            String::from_utf8_lossy(&body)
        )
    })?;
    ensure_eq(
        store.get(&url).ctx("get")?,
        b"{}".to_vec(),
        "the object the grant wrote",
    )?;
    let meta = store
        .get_object_metadata_at(&url)
        .ctx("get_object_metadata_at")?
        .ok_or("no metadata for the object the grant wrote")?;
    ensure_eq(
        meta.content_type.as_deref(),
        Some("application/json"),
        "the content type of the object the grant wrote",
    )
}

/// A multipart/form-data body: the policy's fields, then the key, then the file.
fn form(grant: &HttpPostPolicyGrant, key: &str, data: &[u8]) -> (String, Vec<u8>) {
    let boundary = format!("agent-env-kit-{}", super::support::unique_suffix());
    let mut body = Vec::new();
    let mut field = |name: &str, value: &str| {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    };
    field("Content-Type", "application/octet-stream");
    for (name, value) in &grant.fields {
        field(name, value);
    }
    field(&grant.path_field, key);
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{}\"; filename=\"upload.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n",
            grant.file_field
        )
        .as_bytes(),
    );
    body.extend_from_slice(data);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

fn post(
    store: &dyn ObjectStore,
    grant: &HttpPostPolicyGrant,
    key: &str,
    data: &[u8],
) -> Result<(u16, String), String> {
    let (content_type, body) = form(grant, key, data);
    let (status, answer) = exchange(
        store,
        "POST",
        &grant.url,
        &grant.headers,
        &[("Content-Type", content_type)],
        Some(body),
    )?;
    Ok((status, String::from_utf8_lossy(&answer).into_owned()))
}

fn namespace_grant_confines_uploads_to_its_root(
    store: &dyn ObjectStore,
    ns: &str,
) -> Result<(), String> {
    let prefix_url = store
        .object_url(&format!("{ns}grant/namespace/"))
        .ctx("object_url")?;
    let policy = match store.issue_upload_policy(&prefix_url, 8, Duration::from_secs(600)) {
        // The original lets a store that cannot keep a policy for its whole lifetime refuse one.
        Err(StoreError::NotSupported(_)) => return Ok(()),
        other => other.ctx("issue_upload_policy")?,
    };
    ensure_eq(
        policy.write.kind.as_str(),
        "http-post-policy",
        "the upload policy's kind",
    )?;
    let root_url = store
        .object_url(&format!("{ns}grant/namespace"))
        .ctx("object_url")?;
    let root = store.get_object_key(&root_url).ctx("get_object_key")?;
    let root = root.trim_end_matches('/');

    let inside = format!("{root}/000000");
    let (status, answer) = post(store, &policy.write, &inside, b"inside")?;
    ensure((200..300).contains(&status), || {
        format!("an upload under the policy's root answered {status}: {answer}")
    })?;
    ensure_eq(
        store.read(&inside).ctx("read")?,
        b"inside".to_vec(),
        "the uploaded object",
    )?;

    let sibling = format!("{root}-sibling/000000");
    let (status, _) = post(store, &policy.write, &sibling, b"outside")?;
    ensure((400..500).contains(&status), || {
        format!("an upload outside the policy's root should be refused with a 4xx, it answered {status}")
    })?;
    ensure(!store.exists(&sibling).ctx("exists")?, || {
        format!("the refused upload outside the root wrote {sibling}")
    })?;

    let oversized = format!("{root}/000001");
    let (status, _) = post(store, &policy.write, &oversized, b"123456789")?;
    ensure((400..500).contains(&status), || {
        format!("a 9-byte upload under an 8-byte policy should be refused with a 4xx, it answered {status}")
    })?;
    ensure(!store.exists(&oversized).ctx("exists")?, || {
        format!("the refused oversized upload wrote {oversized}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The local object store's grant carries its signed token in the path; an S3 grant its signature
    /// in the query. Neither is shown; the host and the object's key are.
    #[test]
    fn a_grant_url_is_shown_without_its_token_or_signature() {
        let local = "https://127.0.0.1:37517/v1/grants/v1.eyJvcCI6ImdldCIsInMiOiIwMTIzNDU2Nzg5YWJjZGVmIn0.3q2-7wTi1mXh8yC0nQZ5P4sVbA9uLkR6dEoJfGhIwUs";
        assert_eq!(shown_url(local), "https://127.0.0.1:37517/v1/grants/***");
        let s3 = "http://127.0.0.1:8333/kit/agent-env-kit/0123456789ab/grant/read.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=abcdef0123456789";
        assert_eq!(
            shown_url(s3),
            "http://127.0.0.1:8333/kit/agent-env-kit/0123456789ab/grant/read.bin"
        );
        let hex_token = format!("https://h/t/{}", "ab".repeat(32));
        assert_eq!(shown_url(&hex_token), "https://h/t/***");
    }

    /// An HTTP client's error that quotes the URL quotes it as messages show it.
    #[test]
    fn an_error_quoting_the_grant_url_shows_it_shortened() {
        let url = "https://h:1/v1/grants/v1.eyJvcCI6ImdldCJ9eyJvcCI6ImdldCJ9.c2lnbmF0dXJlc2lnbmF0dXJl?x=sig";
        let shown = shown_url(url);
        let text = without_grant(
            &format!(
                "bad uri {url} and v1.eyJvcCI6ImdldCJ9eyJvcCI6ImdldCJ9.c2lnbmF0dXJlc2lnbmF0dXJl"
            ),
            url,
            &shown,
        );
        assert_eq!(text, "bad uri https://h:1/v1/grants/*** and ***");
        let refused = exchange_error_text(url);
        assert!(
            refused.starts_with("GET https://h:1/v1/grants/*** failed: "),
            "{refused}"
        );
        assert!(
            !refused.contains("c2lnbmF0dXJl") && !refused.contains("sig"),
            "{refused}"
        );
    }

    /// What `exchange_with` says when the request cannot be sent (no server on port 1).
    fn exchange_error_text(url: &str) -> String {
        let agent = agent_trusting(None).unwrap();
        exchange_with(&agent, "GET", url, &Default::default(), &[], None).unwrap_err()
    }
}
