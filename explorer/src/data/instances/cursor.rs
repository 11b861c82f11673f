//! Paging instances by a cursor. Each page's answer names the place its last item holds in the
//! list's order (`next_cursor`: that item's sort key, its id the last part, and where it stood), and
//! a request with that cursor starts right after that place, wherever instances recorded or
//! removed since have moved it: a client paging while a run writes sees each instance once, where
//! an `offset` counted from the newest would show some twice.
//!
//! The place and the page after it are core's ([`agent_env::run::recorded::cursor`], which `task
//! list` pages by too); here is only how an answer writes a cursor and a request reads it back.

use agent_env::run::recorded::cursor as place;
use agent_env_store::document::{Document, DocumentStore, Filter, Sort};
use agent_env_store::error::StoreResult;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::http::problem::{ApiError, ApiResult};

/// A place in a list: right after an item.
#[derive(Debug, Clone, PartialEq)]
pub struct Cursor(place::Cursor);

/// A cursor as the answer writes it (base64url of this JSON): opaque to a client.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    after: Vec<Value>,
    at: u64,
}

impl Cursor {
    /// The place right after `doc`, in `sort`'s order, the next item standing at `at`.
    pub fn after(doc: &Document, sort: &Sort, at: u64) -> Cursor {
        Cursor(place::Cursor::after(doc, sort, at))
    }

    /// The text a client passes back as `cursor`.
    pub fn encode(&self) -> String {
        let written = Written {
            after: self.0.key().to_vec(),
            at: self.0.at(),
        };
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&written).unwrap_or_default())
    }

    /// The cursor `text` names, for a list in `sort`'s order; a 422 at `cursor` for text that is
    /// not one a page of that list gave.
    pub fn decode(text: &str, sort: &Sort) -> ApiResult<Cursor> {
        let written = URL_SAFE_NO_PAD
            .decode(text.trim())
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Written>(&bytes).ok())
            .filter(|w| w.after.len() == sort.keys.len());
        match written {
            Some(w) => Ok(Cursor(place::Cursor::from_parts(w.after, w.at))),
            None => Err(ApiError::invalid(
                &["query", "cursor"],
                format!(
                    "'{text}' is not a cursor a page of this list gave; pass the next_cursor of the page before, as it was answered, or page by offset"
                ),
                "value_error",
            )),
        }
    }

    /// Whether `doc` comes at or before this place in `sort`'s order.
    pub fn holds(&self, doc: &Document, sort: &Sort) -> bool {
        self.0.holds(doc, sort)
    }
}

/// Where the first instance past `cursor` stands now among those `filter` selects (in `sort`'s
/// order), and the `limit` instances from there (core's [`place::page_after`]).
pub fn page_after(
    docs: &dyn DocumentStore,
    filter: &Filter,
    sort: &Sort,
    cursor: &Cursor,
    limit: u64,
) -> StoreResult<(u64, Vec<Document>)> {
    place::page_after(docs, filter, sort, &cursor.0, limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sort() -> Sort {
        Sort::by("n", true).then("instance_id", false)
    }

    fn instance(n: i64) -> Document {
        let Value::Object(doc) = json!({"n": n, "instance_id": format!("i{n:04}")}) else {
            unreachable!()
        };
        doc
    }

    #[test]
    fn a_cursor_reads_back_as_written_and_other_text_is_a_422() {
        let sort = sort();
        let cursor = Cursor::after(&instance(7), &sort, 3);
        assert_eq!(Cursor::decode(&cursor.encode(), &sort).unwrap(), cursor);
        for bad in [
            "",
            "nothing",
            &URL_SAFE_NO_PAD.encode(br#"{"after": [1], "at": 0}"#),
        ] {
            let e = Cursor::decode(bad, &sort).unwrap_err();
            assert_eq!(e.detail[0]["loc"], json!(["query", "cursor"]), "{bad}");
        }
    }
}
