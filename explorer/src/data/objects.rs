//! The object proxy's side of the stores: which store owns a URL, what the object is, its bytes as a
//! stream, and the policy a browser shows it under.

use std::sync::Arc;

use agent_env_store::error::StoreError;
use agent_env_store::object::{ObjectReader, ObjectStore};

use axum::http::StatusCode;

use crate::http::problem::{ApiError, ApiResult};

/// The answer for a URL no store holds an object at.
pub const NO_OBJECT: &str = "no object at the given object_url";

/// An object found: its store, size, content type and a name for downloads.
pub struct FoundObject {
    pub store: Arc<dyn ObjectStore>,
    /// Whether `store` is the local one (else the configured one).
    pub local: bool,
    pub url: String,
    pub size: Option<u64>,
    pub content_type: String,
    pub file_name: String,
}

/// Finds the object at `url` in the first store that owns the URL (`stores`: the @local one, then
/// the configured one unless it is left out). A URL no store owns says so, as `agent-env store get`
/// does, and so does a URL a store refuses as its own or an object it refuses to read (400, the
/// store's words: a key with a part longer than a file name may be, a symlink); a configured store
/// that fails to answer is a 503 naming it.
pub fn find(stores: &[Arc<dyn ObjectStore>], url: &str) -> ApiResult<FoundObject> {
    for (i, store) in stores.iter().enumerate() {
        let failed = |e: StoreError| failed(i == 0, e);
        match store.owns(url) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e @ StoreError::InvalidValue(_)) => return Err(refused(e)),
            Err(e) if e.is_value_error() => continue,
            Err(e) => return Err(failed(e)),
        }
        let metadata = match store.get_object_metadata_at(url) {
            Ok(Some(m)) => Some(m),
            Ok(None) => return Err(ApiError::not_found(NO_OBJECT)),
            Err(StoreError::NotFound(_)) => return Err(ApiError::not_found(NO_OBJECT)),
            Err(StoreError::NotSupported(_)) => None,
            Err(e @ StoreError::InvalidValue(_)) => return Err(refused(e)),
            Err(e) if e.is_value_error() => return Err(ApiError::not_found(NO_OBJECT)),
            Err(e) => return Err(failed(e)),
        };
        let file_name = file_name(url);
        let stored_type = metadata
            .as_ref()
            .and_then(|m| m.content_type.clone())
            .filter(|t| !t.is_empty() && t != "application/octet-stream");
        return Ok(FoundObject {
            store: store.clone(),
            local: i == 0,
            url: url.to_string(),
            size: metadata.as_ref().and_then(|m| m.size),
            content_type: stored_type.unwrap_or_else(|| guess_type(&file_name).to_string()),
            file_name,
        });
    }
    Err(ApiError::not_found(not_owned(url, stores.len() > 1)))
}

/// Why no store was asked for `url`: none of them owns it. `with_configured`: the configured store
/// was among them (else it is left out, and the answer adds why).
pub fn not_owned(url: &str, with_configured: bool) -> String {
    if with_configured {
        format!("'{url}' is not a URL of the configured object store or of the local one")
    } else {
        format!("'{url}' is not a URL of the local object store")
    }
}

/// The 400 for an object its store refuses to read (a symlink in the local object store, which it
/// follows nowhere under its root), as the API answers any value a store refuses: the store's own
/// words, as `agent-env store get` says them. Not a 404: there may well be something at the URL,
/// and saying there is not would hide what to fix.
fn refused(error: StoreError) -> ApiError {
    ApiError::bad_request(error.to_string())
}

/// A store's failure as the API answers it: a store that can't be used (its files unreadable, its
/// server down) is a 503 naming it, anything else as [`ApiError::from`] says it.
fn failed(local: bool, error: StoreError) -> ApiError {
    if crate::data::watched::fails_to_answer(&error) {
        unanswered(local, &error)
    } else {
        ApiError::from(error)
    }
}

/// The 503 for an object store that can't be used: the local one names what to fix (its folder),
/// the configured one is asked anew by each request.
fn unanswered(local: bool, error: &StoreError) -> ApiError {
    let detail = if local {
        format!(
            "the local object store can't be read ({error}); let the user the explorer runs as read and write its folder (or point XDG_STATE_HOME at a folder it may use and restart agent-env up), then ask again"
        )
    } else {
        format!(
            "the configured object store did not answer ({error}); ask again once it is back (each request asks it anew)"
        )
    };
    ApiError::new(StatusCode::SERVICE_UNAVAILABLE, detail)
}

/// Opens the object's bytes; a store that lost it since [`find`] is a 404.
pub fn open(found: &FoundObject) -> ApiResult<ObjectReader> {
    found.store.open(&found.url).map_err(|e| match e {
        StoreError::NotFound(_) => ApiError::not_found(NO_OBJECT),
        refusal @ StoreError::InvalidValue(_) => refused(refusal),
        other => failed(found.local, other),
    })
}

/// The last path segment of a URL, percent-decoded (`report.html`), or `object`.
pub fn file_name(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let last = path.rsplit('/').next().unwrap_or("");
    let decoded = crate::http::percent::decode(last, false).unwrap_or_else(|_| last.to_string());
    if decoded.is_empty() {
        "object".to_string()
    } else {
        decoded
    }
}

/// A content type from a file name's extension, for stores that keep none.
pub fn guess_type(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "txt" | "log" | "sh" | "py" | "rs" | "go" | "toml" | "yaml" | "yml" | "md" | "csv" => {
            "text/plain; charset=utf-8"
        }
        "json" | "jsonl" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "mp3" => "audio/mpeg",
        "pdf" => "application/pdf",
        "xml" => "application/xml",
        _ => "application/octet-stream",
    }
}

/// How a browser may show an object of `content_type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectPolicy {
    /// The `Content-Type` sent.
    pub content_type: String,
    /// The `Content-Security-Policy` sent.
    pub csp: &'static str,
    /// `inline`, or `attachment` for what a browser would run or cannot show.
    pub disposition: &'static str,
}

impl ObjectPolicy {
    /// Whether a browser is served the object to show in the page (when no download is asked for):
    /// the one answer the UI reads to choose between a preview and a download link.
    pub fn shown_inline(&self) -> bool {
        self.disposition == "inline"
    }
}

/// A document that can carry script (HTML, SVG, XML) runs sandboxed in an opaque origin: its
/// scripts (a stored HTML replay's player) run, but can reach neither the explorer's pages nor its
/// API, and it may load nothing from the network.
pub const ACTIVE_CSP: &str = "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; media-src data: blob:; font-src data:; connect-src 'none'; frame-ancestors 'self'";

/// Passive media, text and data: shown as is, nothing loaded, nothing run.
pub const PASSIVE_CSP: &str = "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'self'";

/// The policy for `content_type`; `download` asks for an attachment whatever the type.
pub fn policy(content_type: &str, download: bool) -> ObjectPolicy {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let active = matches!(
        essence.as_str(),
        "text/html" | "application/xhtml+xml" | "image/svg+xml" | "application/xml" | "text/xml"
    );
    let passive = !active
        && (essence.starts_with("image/")
            || essence.starts_with("video/")
            || essence.starts_with("audio/")
            || essence.starts_with("text/")
            || matches!(essence.as_str(), "application/json" | "application/pdf"));
    if active {
        return ObjectPolicy {
            content_type: content_type.to_string(),
            csp: ACTIVE_CSP,
            disposition: if download { "attachment" } else { "inline" },
        };
    }
    if passive {
        // Text of any kind is shown as plain text, so a browser never renders it as something else.
        let shown = if essence.starts_with("text/") {
            "text/plain; charset=utf-8".to_string()
        } else {
            content_type.to_string()
        };
        return ObjectPolicy {
            content_type: shown,
            csp: PASSIVE_CSP,
            disposition: if download { "attachment" } else { "inline" },
        };
    }
    ObjectPolicy {
        content_type: "application/octet-stream".to_string(),
        csp: PASSIVE_CSP,
        disposition: "attachment",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_that_cannot_be_read_is_a_503_naming_it_and_what_to_do() {
        let io = || StoreError::Io {
            message: "opening /s/object_store: Permission denied (os error 13)".into(),
            raw_os_error: Some(13),
        };
        let local = failed(true, io());
        assert_eq!(local.status, StatusCode::SERVICE_UNAVAILABLE);
        let detail = local.detail.as_str().unwrap();
        assert!(
            detail.starts_with(
                "the local object store can't be read (opening /s/object_store: Permission denied"
            ) && detail.contains("read and write its folder"),
            "{detail}"
        );
        let configured = failed(false, io());
        assert_eq!(configured.status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(configured
            .detail
            .as_str()
            .unwrap()
            .starts_with("the configured object store did not answer"));
        // What is not the store failing keeps its status.
        assert_eq!(
            failed(true, StoreError::NotFound("gone".into())).status,
            StatusCode::NOT_FOUND
        );
    }

    #[test]
    fn html_runs_sandboxed_and_text_stays_text() {
        let html = policy("text/html; charset=utf-8", false);
        assert_eq!(html.csp, ACTIVE_CSP);
        assert!(html.csp.starts_with("sandbox allow-scripts;"));
        assert!(!html.csp.contains("allow-same-origin"));
        assert_eq!(html.disposition, "inline");
        let svg = policy("image/svg+xml", false);
        assert_eq!(svg.csp, ACTIVE_CSP);
        let text = policy("text/x-shellscript", false);
        assert_eq!(text.content_type, "text/plain; charset=utf-8");
        assert_eq!(text.csp, PASSIVE_CSP);
        let png = policy("image/png", true);
        assert_eq!(
            (png.content_type.as_str(), png.disposition),
            ("image/png", "attachment")
        );
        let blob = policy("application/x-tar", false);
        assert_eq!(
            (blob.content_type.as_str(), blob.disposition),
            ("application/octet-stream", "attachment")
        );
    }

    #[test]
    fn what_is_shown_inline_is_what_is_served_inline() {
        for shown in [
            "text/html",
            "text/x-shellscript",
            "image/png",
            "image/svg+xml",
            "video/webm",
            "audio/mpeg",
            "application/json",
            "application/pdf",
            "application/xml",
            "application/xhtml+xml",
            "TEXT/PLAIN; charset=utf-8",
        ] {
            assert!(policy(shown, false).shown_inline(), "{shown}");
            assert!(!policy(shown, true).shown_inline(), "{shown} downloaded");
        }
        for downloaded in [
            "application/octet-stream",
            "application/x-tar",
            "application/zip",
            "",
        ] {
            assert!(!policy(downloaded, false).shown_inline(), "{downloaded}");
        }
    }

    #[test]
    fn names_and_types_come_from_the_url() {
        assert_eq!(
            file_name("file:///a/b/r%C3%A9sum%C3%A9.html"),
            "résumé.html"
        );
        assert_eq!(file_name("s3://bucket/"), "object");
        assert_eq!(guess_type("x.HTML"), "text/html; charset=utf-8");
        assert_eq!(guess_type("check.sh"), "text/plain; charset=utf-8");
        assert_eq!(guess_type("blob"), "application/octet-stream");
    }
}
