//! The pagination envelope every list answers with: `{"items", "total", "limit", "offset", "has_more"}`,
//! and `warnings` when the list left something out (a configured document store that cannot be read).

use serde::Serialize;
use serde_json::Value;

use super::problem::ApiResult;
use super::query::Query;

/// The largest page a list gives.
pub const MAX_LIMIT: i64 = 500;

/// One page of a list.
#[derive(Debug, Clone, Serialize)]
pub struct Page {
    pub items: Vec<Value>,
    pub total: u64,
    pub limit: u64,
    pub offset: u64,
    pub has_more: bool,
    /// What the list left out, and why; absent when nothing was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Page {
    /// A page of `items` starting at `offset`, out of `total`.
    pub fn new(items: Vec<Value>, total: u64, window: Window) -> Page {
        let has_more = window.offset + (items.len() as u64) < total;
        Page {
            items,
            total,
            limit: window.limit,
            offset: window.offset,
            has_more,
            warnings: Vec::new(),
        }
    }

    /// The page of an already complete list.
    pub fn of_all(all: Vec<Value>, window: Window) -> Page {
        let total = all.len() as u64;
        let items = all
            .into_iter()
            .skip(window.offset as usize)
            .take(window.limit as usize)
            .collect();
        Page::new(items, total, window)
    }
}

/// The `limit` and `offset` a list was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub limit: u64,
    pub offset: u64,
}

impl Window {
    /// `limit` (1..=500, default `default_limit`) and `offset` (≥ 0, default 0) from the query.
    pub fn from_query(query: &Query, default_limit: i64) -> ApiResult<Window> {
        let limit = query.int("limit", default_limit, 1, Some(MAX_LIMIT))?;
        let offset = query.int("offset", 0, 0, None)?;
        Ok(Window {
            limit: limit as u64,
            offset: offset as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn has_more_says_whether_items_follow_the_page() {
        let all: Vec<Value> = (0..5).map(|i| json!(i)).collect();
        let p = Page::of_all(
            all.clone(),
            Window {
                limit: 2,
                offset: 2,
            },
        );
        assert_eq!(p.items, vec![json!(2), json!(3)]);
        assert!(p.has_more);
        let p = Page::of_all(
            all,
            Window {
                limit: 2,
                offset: 4,
            },
        );
        assert_eq!((p.items.len(), p.total, p.has_more), (1, 5, false));
    }
}
