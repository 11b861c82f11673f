//! `GET /api/v1/objects/content` and `/objects/metadata`: an object of any configured store, by its
//! URL. The bytes stream from a blocking reader; the headers say how a browser may show them (see
//! [`crate::data::objects::policy`]): HTML and SVG run sandboxed in an opaque origin, text is shown
//! as text, anything else is a download. The metadata says which (`shown_inline`), so the UI never
//! decides it on its own.

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::io::Read;

use super::extract::Q;
use crate::data::objects::{self, policy};
use crate::http::blocking::blocking;
use crate::http::common_headers::add_common_headers;
use crate::http::percent::content_disposition;
use crate::http::problem::{ApiError, ApiResult};
use crate::state::Shared;

/// Bytes read from a store per chunk sent.
const CHUNK: usize = 64 * 1024;

pub async fn metadata(State(s): State<Shared>, Q(q): Q) -> ApiResult<Json<Value>> {
    let url = q.required("object_url")?.to_string();
    let found = blocking(move || {
        let stores = s.object_stores();
        stores.document(objects::find(stores.objects(), &url))
    })
    .await?;
    Ok(Json(json!({
        "size_bytes": found.size,
        "content_type": found.content_type,
        "shown_inline": policy(&found.content_type, false).shown_inline(),
    })))
}

pub async fn content(State(s): State<Shared>, Q(q): Q) -> ApiResult<Response> {
    let url = q.required("object_url")?.to_string();
    let download = q.bool("download", false)?;
    let (found, reader) = blocking(move || {
        let stores = s.object_stores();
        let found = stores.document(objects::find(stores.objects(), &url))?;
        let reader = objects::open(&found)?;
        Ok((found, reader))
    })
    .await?;
    let chosen = policy(&found.content_type, download);
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    std::thread::Builder::new()
        .name("explorer-object".into())
        .spawn(move || pump(reader, tx))
        .map_err(|e| ApiError::internal(format!("can't start a reader thread: {e}")))?;
    let body = Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    }));
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    let value = |v: &str| HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("invalid"));
    headers.insert(header::CONTENT_TYPE, value(&chosen.content_type));
    headers.insert(header::CONTENT_SECURITY_POLICY, value(chosen.csp));
    headers.insert(
        header::CONTENT_DISPOSITION,
        value(&content_disposition(chosen.disposition, &found.file_name)),
    );
    if let Some(size) = found.size {
        headers.insert(header::CONTENT_LENGTH, value(&size.to_string()));
    }
    headers.insert(
        header::X_FRAME_OPTIONS,
        HeaderValue::from_static("SAMEORIGIN"),
    );
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    add_common_headers(headers);
    Ok(response)
}

/// Reads the object and sends it on in chunks until the end, an error, or a client that left.
fn pump(
    mut reader: agent_env_store::object::ObjectReader,
    tx: tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
) {
    let mut buffer = vec![0u8; CHUNK];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => return,
            Ok(n) => {
                if tx
                    .blocking_send(Ok(Bytes::copy_from_slice(&buffer[..n])))
                    .is_err()
                {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.blocking_send(Err(e));
                return;
            }
        }
    }
}
