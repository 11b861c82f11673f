//! The object kit's 3 grant cases, run over real HTTP(S) against a store that issues transfer grants:
//! a read grant fetches the object, a write grant uploads with its signed content type, and an upload
//! policy admits objects under its root only, within its size bound.
//!
//! They need an HTTP client, which the `grant-kit` feature brings; a build without it lists them as
//! skipped with that reason.

use std::time::Duration;

use super::support::{ensure, ensure_eq, put, Ctx};
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
    let mut config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)));
    if let Some(pem) = store.grant_trust_pem() {
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

/// Status and body of one request.
fn exchange(
    store: &dyn ObjectStore,
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
    let agent = agent(store)?;
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
    // A grant's URL is a credential until it expires: messages show it without its query (the
    // signature), which is enough to tell which request failed.
    let shown = url.split_once('?').map_or(url, |(path, _)| path);
    let mut response = sent.map_err(|e| format!("{method} {shown} failed: {e}"))?;
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .with_config()
        .limit(16 * 1024 * 1024)
        .read_to_vec()
        .map_err(|e| format!("reading the answer to {method} {shown}: {e}"))?;
    Ok((status, body))
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
            format!("the write grant should require Content-Type application/json, its headers are {:?}", grant.headers)
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
