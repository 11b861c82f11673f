//! An instance named by its short id, as `agent-env task list` prints it: the part of its id after
//! the last `/` (`hello-ab12cd34` for `@local/agentenv-framework/hello/hello-ab12cd34`). A short id
//! is looked for among every recorded instance (of one task, when given), a page at a time, so a
//! store of many instances is never held whole.

use serde_json::Value;

use crate::stores::error::StoreResult;
use crate::stores::{Document, DocumentStore, Filter, Predicate, Sort};

use super::recorder::{short_id, INSTANCES};

/// How many instances one read of the scan takes.
const PAGE: usize = 500;

/// Whether `wanted` can be a short id: no `/`, not empty.
pub fn is_short(wanted: &str) -> bool {
    !wanted.is_empty() && !wanted.contains('/')
}

/// Every instance (of `task_id`, when given) whose short id is `wanted`, read a page at a time.
pub fn ending_in(
    docs: &dyn DocumentStore,
    wanted: &str,
    task_id: Option<&str>,
) -> StoreResult<Vec<Document>> {
    let filter = match task_id {
        Some(t) => Filter::eq("task_id", t),
        None => Filter::default(),
    };
    // Each page starts at the last id of the one before (kept, then skipped), not at an offset: the
    // merged stores would read every earlier page again to find an offset.
    let sort = Sort::by("instance_id", false);
    let mut found = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let from = match &after {
            Some(last) => filter
                .clone()
                .and("instance_id", Predicate::Gte(Value::from(last.as_str()))),
            None => filter.clone(),
        };
        let page = docs.query(INSTANCES, &from, Some(&sort), Some(PAGE), 0)?;
        let read = page.len();
        let last = page.last().and_then(id_of).map(str::to_string);
        found.extend(
            page.into_iter()
                .filter(|d| id_of(d) != after.as_deref())
                .filter(|d| id_of(d).map(short_id) == Some(wanted)),
        );
        if read < PAGE || last == after {
            return Ok(found);
        }
        after = last;
    }
}

fn id_of(doc: &Document) -> Option<&str> {
    doc.get("instance_id").and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_id_is_the_end_after_the_last_slash() {
        assert_eq!(short_id("@local/~/slowpoke/slow-dkta22co"), "slow-dkta22co");
        assert_eq!(short_id("plain-1"), "plain-1");
        assert!(is_short("slow-dkta22co"));
        assert!(!is_short("@local/x-1"));
        assert!(!is_short(""));
    }

    #[test]
    fn every_instance_is_read_once_across_pages() {
        let dir = tempfile::tempdir().unwrap();
        let docs = crate::run::local_stores::open(dir.path()).documents;
        let mut ids: Vec<String> = (0..PAGE * 2 + 3)
            .map(|n| format!("@local/b/t-{n:04}"))
            .collect();
        // A short id two instances end in, one of them read on the last page.
        ids.push(format!("@local/z/t-{:04}", PAGE));
        for id in &ids {
            let serde_json::Value::Object(doc) = serde_json::json!({"instance_id": id}) else {
                unreachable!()
            };
            docs.insert(INSTANCES, &doc).unwrap();
        }
        let found = |wanted: &str| -> Vec<String> {
            ending_in(docs.as_ref(), wanted, None)
                .unwrap()
                .iter()
                .filter_map(|d| id_of(d).map(str::to_string))
                .collect()
        };
        assert_eq!(found("t-0000"), ["@local/b/t-0000"]);
        assert_eq!(
            found(&format!("t-{PAGE:04}")),
            [
                format!("@local/b/t-{PAGE:04}"),
                format!("@local/z/t-{PAGE:04}")
            ]
        );
        assert_eq!(found(&format!("t-{:04}", PAGE * 2 + 2)).len(), 1);
        assert!(found("t-9999").is_empty());
    }
}
