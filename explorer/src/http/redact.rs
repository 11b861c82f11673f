//! No answer carries a secret the explorer's process holds: a plugin's stderr in the plugin report, a
//! store's error, a step's message in an instance may quote one. Every JSON or text answer (the API's
//! and an explorer plugin's) is passed through [`agent_env::redaction`] on its way out. Event
//! streams are masked where their lines are kept, and objects' bytes are the user's own and pass as
//! they are.

use axum::body::Body;
use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;

use agent_env::redaction;

/// The largest answer that is read whole to be masked; a larger one (none of the API's is) is
/// refused rather than sent unread.
const MAX_MASKED_BYTES: usize = 256 * 1024 * 1024;

/// Masks every remembered secret in a JSON or text answer.
pub async fn redact_answers(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    if !redaction::holds_any() || !is_masked_type(&response) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_MASKED_BYTES).await else {
        parts.status = axum::http::StatusCode::INTERNAL_SERVER_ERROR;
        parts.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(
            parts,
            Body::from(r#"{"detail":"the answer could not be read to mask its secrets"}"#),
        );
    };
    let text = String::from_utf8_lossy(&bytes);
    match redaction::redact(&text) {
        std::borrow::Cow::Borrowed(_) => Response::from_parts(parts, Body::from(bytes)),
        std::borrow::Cow::Owned(masked) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, Body::from(masked))
        }
    }
}

/// JSON and text answers are masked; event streams (endless) and everything else are not.
fn is_masked_type(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|t| t.to_str().ok())
        .is_some_and(|t| {
            let t = t.to_ascii_lowercase();
            (t.starts_with("application/") && t.contains("json")) || t.starts_with("text/plain")
        })
}
