//! The connection to one bucket: its settings, the signer's handles, and the requests every operation is
//! made of (a signed PUT, GET, HEAD, a listing), with S3's answers turned into store errors.

use std::sync::Arc;

use rusty_s3::actions::{GetObject, HeadObject, ListObjectsV2, PutObject};
use rusty_s3::{Bucket, Credentials, S3Action, UrlStyle};
use ureq::http::Method;

use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::object::ObjectMetadata;

use crate::location::Locations;
use crate::settings::{S3Settings, CLASS};
use crate::wire::{header, Outgoing, Wire, REQUEST_SIGNATURE_LIFETIME};

/// One bucket of an S3-compatible server, as the store's operations reach it.
pub struct S3Client {
    pub(crate) settings: S3Settings,
    pub(crate) bucket: Bucket,
    pub(crate) credentials: Option<Credentials>,
    pub(crate) at: Locations,
    pub(crate) wire: Arc<Wire>,
}

impl std::fmt::Debug for S3Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Client")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl S3Client {
    /// A store for the bucket the settings name. Nothing is sent until the first call.
    pub fn new(settings: S3Settings) -> StoreResult<S3Client> {
        if settings.bucket.trim().is_empty() {
            return Err(StoreError::Config(format!(
                "{CLASS}: bucket is not set; name the bucket the store keeps its objects in, such as bucket = \"team-agent-env\""
            )));
        }
        let endpoint = settings.endpoint.parse().map_err(|e| {
            StoreError::Config(format!(
                "{CLASS}: endpoint '{}' is not a URL ({e})",
                settings.endpoint
            ))
        })?;
        let style = if settings.path_style {
            UrlStyle::Path
        } else {
            UrlStyle::VirtualHost
        };
        let bucket = Bucket::new(
            endpoint,
            style,
            settings.bucket.clone(),
            settings.region.clone(),
        )
        .map_err(|e| unaddressable(&settings, &e))?;
        let credentials = settings
            .credentials
            .as_ref()
            .map(|c| match &c.session_token {
                Some(token) => Credentials::new_with_token(
                    c.access_key_id.clone(),
                    c.secret_access_key.clone(),
                    token.clone(),
                ),
                None => Credentials::new(c.access_key_id.clone(), c.secret_access_key.clone()),
            });
        Ok(S3Client {
            at: Locations::new(&settings.bucket),
            wire: Arc::new(
                Wire::new(
                    (&settings.endpoint, settings.endpoint_from.clone()),
                    &settings.bucket,
                    settings.timeout,
                    credentials.is_some(),
                )
                .bucket_read_from(settings.bucket_read_from.clone()),
            ),
            settings,
            bucket,
            credentials,
        })
    }

    /// The settings it was built with.
    pub fn settings(&self) -> &S3Settings {
        &self.settings
    }

    /// The presigned URL of a PUT of `key` with these signed headers.
    pub(crate) fn signed_put(&self, key: &str, headers: &[(&'static str, String)]) -> String {
        let mut action = PutObject::new(&self.bucket, self.credentials.as_ref(), key);
        for (name, value) in headers {
            action.headers_mut().insert(*name, value.clone());
        }
        action.sign(REQUEST_SIGNATURE_LIFETIME).to_string()
    }

    /// One PUT of `len` bytes at `key`; write-once unless `allow_overwrite`.
    pub(crate) fn put_body(
        &self,
        key: &str,
        body: Outgoing<'_>,
        content_type: &str,
        allow_overwrite: bool,
    ) -> StoreResult<String> {
        let url = self.at.url(key)?;
        let mut headers = vec![("content-type", content_type.to_string())];
        if !allow_overwrite {
            headers.push(("if-none-match", "*".to_string()));
        }
        let signed = self.signed_put(key, &headers);
        let sent: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let response = self
            .wire
            .send_body(Method::PUT, &signed, &sent, body, &url)?;
        if response.status().is_success() {
            Ok(url)
        } else {
            Err(self.wire.write_failure(response, "write", &url))
        }
    }

    pub(crate) fn get_response(
        &self,
        key: &str,
        url: &str,
    ) -> StoreResult<ureq::http::Response<ureq::Body>> {
        let action = GetObject::new(&self.bucket, self.credentials.as_ref(), key);
        let signed = action.sign(REQUEST_SIGNATURE_LIFETIME);
        let response = self.wire.send(Method::GET, signed.as_str(), &[])?;
        if response.status().is_success() {
            Ok(response)
        } else {
            Err(self.wire.failure(response, "read", url))
        }
    }

    /// The key a read URL names; a URL of another store is [`StoreError::ForeignUrl`], and a URL naming a
    /// prefix holds no object.
    pub(crate) fn readable_key(&self, url: &str) -> StoreResult<String> {
        let key = self.at.key_of(url)?;
        if key.is_empty() || key.ends_with('/') {
            return Err(StoreError::object_not_found(url));
        }
        Ok(key)
    }

    pub(crate) fn metadata_of(&self, key: &str) -> StoreResult<Option<ObjectMetadata>> {
        if key.is_empty() || key.ends_with('/') {
            return Ok(None);
        }
        let url = self.at.url(key)?;
        let action = HeadObject::new(&self.bucket, self.credentials.as_ref(), key);
        let signed = action.sign(REQUEST_SIGNATURE_LIFETIME);
        let response = self.wire.send(Method::HEAD, signed.as_str(), &[])?;
        let status = response.status().as_u16();
        if status == 404 {
            return Ok(None);
        }
        if !response.status().is_success() {
            return Err(self.wire.failure(response, "read the metadata of", &url));
        }
        Ok(Some(ObjectMetadata {
            content_type: header(&response, "content-type"),
            size: header(&response, "content-length").and_then(|n| n.parse().ok()),
            last_modified: header(&response, "last-modified")
                .and_then(|d| http_date_to_rfc3339(&d)),
            content_encoding: header(&response, "content-encoding"),
            etag: header(&response, "etag").map(|e| e.trim_matches('"').to_string()),
        }))
    }

    pub(crate) fn list_keys(&self, prefix: &str) -> StoreResult<Vec<String>> {
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut action = ListObjectsV2::new(&self.bucket, self.credentials.as_ref());
            if !prefix.is_empty() {
                action.with_prefix(prefix);
            }
            if let Some(token) = &token {
                action.with_continuation_token(token.clone());
            }
            let signed = action.sign(REQUEST_SIGNATURE_LIFETIME);
            let mut response = self.wire.send(Method::GET, signed.as_str(), &[])?;
            if !response.status().is_success() {
                let root = self.at.root().to_string();
                return Err(self.wire.failure(response, "list", &root));
            }
            let text = response
                .body_mut()
                .with_config()
                .limit(64 * 1024 * 1024)
                .read_to_string()
                .map_err(|e| self.wire.reading("a listing").failed(&e))?;
            let page = ListObjectsV2::parse_response(&text).map_err(|e| {
                StoreError::Internal(format!(
                    "{CLASS}: {} answered a listing that is not S3's XML ({e})",
                    self.settings.endpoint
                ))
            })?;
            keys.extend(
                page.contents
                    .into_iter()
                    .map(|c| c.key)
                    .filter(|k| !k.ends_with('/') && k.starts_with(prefix)),
            );
            match page.next_continuation_token {
                Some(next) if !next.is_empty() => token = Some(next),
                _ => break,
            }
        }
        keys.sort();
        keys.dedup();
        Ok(keys)
    }

    /// Whether this bucket can issue grants: it has credentials to sign them with, and they work (over
    /// HTTPS, or against a server on this machine).
    pub(crate) fn grants_supported(&self) -> bool {
        self.credentials.is_some() && self.grants_reachable()
    }

    /// Whether grants from this store work: over HTTPS, or against a server on this machine.
    fn grants_reachable(&self) -> bool {
        let endpoint = &self.settings.endpoint;
        endpoint.starts_with("https://") || plain_http_to_this_machine(endpoint)
    }
}

/// Why the bucket's URLs cannot be made from the settings: a bucket name no host name can take, in
/// virtual-host style (an endpoint that is an IP address is refused earlier, by the settings' checks).
fn unaddressable(settings: &S3Settings, err: &rusty_s3::BucketError) -> StoreError {
    let said = err.to_string();
    StoreError::Config(if settings.path_style {
        format!(
            "{CLASS}: the bucket '{}' cannot be reached at '{}' ({said}); check bucket and endpoint",
            settings.bucket, settings.endpoint
        )
    } else {
        let host = settings
            .endpoint
            .split_once("://")
            .map_or(settings.endpoint.as_str(), |(_, rest)| rest);
        format!(
            "{CLASS}: path_style = false puts the bucket in the host name ('{bucket}.{host}'), which the bucket's name '{bucket}' cannot be part of ({said}); set path_style = true, or name a bucket a host name can take (lower-case letters, digits, '-' and '.')",
            bucket = settings.bucket,
        )
    })
}

/// Whether `endpoint` is a plain-HTTP URL whose host is this machine: `localhost`, an address of
/// 127.0.0.0/8, or `[::1]` (as a whole host name, not a prefix: `localhost.example.com` is another
/// machine, and a grant sent there travels in clear text).
fn plain_http_to_this_machine(endpoint: &str) -> bool {
    let Some(rest) = endpoint.strip_prefix("http://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host_port.split(':').next().unwrap_or(""),
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// An HTTP date (`Fri, 04 Dec 2026 03:17:38 GMT`) as RFC 3339 UTC.
fn http_date_to_rfc3339(date: &str) -> Option<String> {
    let zoned = jiff::fmt::rfc2822::parse(date).ok()?;
    Some(zoned.timestamp().to_string())
}

#[cfg(test)]
mod tests {
    use super::plain_http_to_this_machine;

    #[test]
    fn a_bare_404_is_no_s3_server_rather_than_a_missing_bucket() {
        use std::io::{Read, Write};
        // A web server that is not S3: every request is a 404 with no body.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            if let Ok((mut conn, _)) = listener.accept() {
                let mut request = [0u8; 4096];
                let _ = conn.read(&mut request);
                let _ = conn.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        });
        let endpoint = format!("http://127.0.0.1:{port}");
        let table = serde_json::json!({"bucket": "team", "endpoint": endpoint,
            "access_key_id": "k", "secret_access_key": "s", "timeout_seconds": 5});
        let settings =
            crate::settings::S3Settings::from_table(table.as_object().unwrap(), &|_: &str| None)
                .unwrap();
        let client = super::S3Client::new(settings).unwrap();
        let err = crate::check::connection(&client).unwrap_err().to_string();
        assert!(
            err.contains(&format!(
                "{endpoint} answered 404 to a listing of the bucket 'team', without an S3 error; check that [stores.object.config] endpoint names an S3 server"
            )),
            "{err}"
        );
    }

    #[test]
    fn only_a_loopback_host_counts_as_this_machine() {
        for local in [
            "http://127.0.0.1:9000",
            "http://127.8.9.10",
            "http://localhost:9000/",
            "http://LOCALHOST",
            "http://[::1]:9000",
        ] {
            assert!(plain_http_to_this_machine(local), "{local}");
        }
        for remote in [
            "http://localhost.example.com:9000",
            "http://localhost-minio.corp",
            "http://127.example.com",
            "http://10.0.0.1:9000",
            "https://127.0.0.1:9000",
            "http://user@evil.example.com",
        ] {
            assert!(!plain_http_to_this_machine(remote), "{remote}");
        }
    }
}
