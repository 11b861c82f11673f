//! HTTP plumbing the API's handlers share: errors as `{"detail": …}`, query strings read by hand
//! (repeatable keys, FastAPI-shaped validation errors), the pagination envelope, percent-decoding, and
//! the masking of secrets in every answer, and ids echoed in answers cut short (`shown`).

pub mod blocking;
pub mod common_headers;
pub mod errors;
pub mod page;
pub mod percent;
pub mod problem;
pub mod query;
pub mod redact;
pub mod shown;
