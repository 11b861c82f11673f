//! The headers every answer carries, the object proxy's included.

use axum::http::header;
use axum::http::{HeaderMap, HeaderValue};

/// Adds them: no type sniffing, and no referrer sent on from a page of the explorer.
pub fn add_common_headers(headers: &mut HeaderMap) {
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}
