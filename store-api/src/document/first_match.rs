//! The writes of a document store built on one primitive, "change the first document a filter matches,
//! atomically": `update`, `update_one_and_get`, `replace` and `delete` with their upsert rules, written
//! once for every backend that offers the primitive (the local SQLite store, PostgreSQL).

use super::eval;
use super::query::{Document, Filter, UpdateSpec};
use crate::error::StoreResult;

/// What a write does to the first match.
pub enum Change<'a> {
    /// Applies an update spec.
    Update(&'a UpdateSpec),
    /// Replaces the document wholesale.
    Replace(&'a Document),
    /// Deletes it.
    Delete,
}

/// The first match before a change and after it; `None` for no match, and after a delete.
pub type Images = (Option<Document>, Option<Document>);

/// Makes the document an upsert inserts on a miss.
pub type UpsertDoc<'a> = &'a dyn Fn() -> StoreResult<Document>;

/// A backend that changes the first match of a filter in one atomic step.
pub trait FirstMatchWriter {
    /// In one atomic step: finds the first match of `filter` in `collection`, changes it (see
    /// [`post_image`]) or, on a miss with `upsert_doc`, inserts what it makes; returns what it touched.
    fn change_first(
        &self,
        collection: &str,
        filter: &Filter,
        change: &Change<'_>,
        upsert_doc: Option<UpsertDoc<'_>>,
    ) -> StoreResult<Images>;
}

/// The document `change` makes of `before` (`None` for a delete).
pub fn post_image(before: &Document, change: &Change<'_>) -> StoreResult<Option<Document>> {
    Ok(match change {
        Change::Update(update) => {
            let mut doc = before.clone();
            eval::apply_update(&mut doc, update)?;
            Some(doc)
        }
        Change::Replace(doc) => Some((*doc).clone()),
        Change::Delete => None,
    })
}

/// [`DocumentStore::update_one_and_get`](super::DocumentStore::update_one_and_get) on the primitive.
pub fn update_one_and_get(
    store: &impl FirstMatchWriter,
    collection: &str,
    filter: &Filter,
    update: &UpdateSpec,
    return_after: bool,
    upsert: bool,
) -> StoreResult<Option<Document>> {
    update.validate()?;
    let make = || eval::synthesize_upsert(filter, update);
    let (before, after) = store.change_first(
        collection,
        filter,
        &Change::Update(update),
        upsert.then_some(&make as UpsertDoc<'_>),
    )?;
    Ok(if return_after { after } else { before })
}

/// [`DocumentStore::update`](super::DocumentStore::update) on the primitive: 1 when it matched (or
/// upserted), else 0.
pub fn update(
    store: &impl FirstMatchWriter,
    collection: &str,
    filter: &Filter,
    update: &UpdateSpec,
    upsert: bool,
) -> StoreResult<u64> {
    let after = update_one_and_get(store, collection, filter, update, true, upsert)?;
    Ok(u64::from(after.is_some()))
}

/// [`DocumentStore::replace`](super::DocumentStore::replace) on the primitive.
pub fn replace(
    store: &impl FirstMatchWriter,
    collection: &str,
    filter: &Filter,
    doc: &Document,
    upsert: bool,
) -> StoreResult<u64> {
    let make = || Ok(doc.clone());
    let (_, after) = store.change_first(
        collection,
        filter,
        &Change::Replace(doc),
        upsert.then_some(&make as UpsertDoc<'_>),
    )?;
    Ok(u64::from(after.is_some()))
}

/// [`DocumentStore::delete`](super::DocumentStore::delete) on the primitive.
pub fn delete(
    store: &impl FirstMatchWriter,
    collection: &str,
    filter: &Filter,
) -> StoreResult<u64> {
    let (before, _) = store.change_first(collection, filter, &Change::Delete, None)?;
    Ok(u64::from(before.is_some()))
}
