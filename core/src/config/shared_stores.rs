//! A document store other machines share with the object store left on this machine: what an
//! artifact put records then points at this machine's files (`file://` URLs), which a teammate's
//! `task run` and `bundle init --from-task` cannot read. Said by `config check` and `artifact put`.
//!
//! A hosted document store (`PostgresDocumentStore`) is shared by what it is. A plugin's may be, or may
//! keep files on this machine (as the one `plugin new` writes does), and nothing says which: `config
//! check` says so as a note, worded for the case where it is shared, and `artifact put`, where the
//! files' URLs are recorded, warns.

use super::document::ConfigDocument;
use super::store_selection::{selection, StoreSelection};
use crate::stores::from_spec::{classify, Target};
use crate::stores::local::{fs_object, sqlite_docs};
use crate::stores::{local_builtin, StoreKind};

/// What `config check` says of the document and object stores together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SharedStores {
    /// A hosted document store, shared by what it is, over the local object store: a warning.
    Warning(String),
    /// A plugin's document store, which may be shared or local, over the local object store: a note.
    Note(String),
}

/// The document store selected, when it is not the built-in local one, and whether it is known to be
/// shared (a built-in hosted store) or a plugin's; `None` when the object store is not the built-in
/// `LocalFilesystemObjectStore`, or when either section cannot be read (that is the section's own
/// problem).
fn behind_local_objects(doc: &ConfigDocument) -> Option<(StoreSelection, StoreSelection, bool)> {
    let documents = selection(doc, "document").ok()?;
    let objects = selection(doc, "object").ok()?;
    if local_builtin(StoreKind::Object, &objects.impl_name) != Some(fs_object::CLASS)
        || local_builtin(StoreKind::Document, &documents.impl_name) == Some(sqlite_docs::CLASS)
    {
        return None;
    }
    let known_shared = match classify(StoreKind::Document, &documents.impl_name).ok()? {
        Target::Builtin(_) => true,
        Target::Plugin { .. } => false,
    };
    Some((documents, objects, known_shared))
}

/// The warning `artifact put` gives, when the selected document store is not the built-in local one
/// while the object store is the built-in `LocalFilesystemObjectStore`; `None` otherwise.
pub fn local_objects_behind_shared_documents(doc: &ConfigDocument) -> Option<String> {
    behind_local_objects(doc).map(|(documents, objects, _)| warning(&documents, &objects))
}

/// What `config check` says: a warning for a hosted document store over the local object store, a
/// note for a plugin's, which may keep its documents on this machine too.
pub fn shared_stores_finding(doc: &ConfigDocument) -> Option<SharedStores> {
    let (documents, objects, known_shared) = behind_local_objects(doc)?;
    Some(if known_shared {
        SharedStores::Warning(warning(&documents, &objects))
    } else {
        SharedStores::Note(note(&documents, &objects))
    })
}

fn chosen_by(s: &StoreSelection) -> String {
    match s.origin.location.as_str() {
        "built-in default" => "the built-in default".to_string(),
        place => place.to_string(),
    }
}

fn warning(documents: &StoreSelection, objects: &StoreSelection) -> String {
    format!(
        "the document store is {} ({}), which other machines may share, but the object store is {} ({}), which keeps its files on this machine: artifacts put through the shared document store will point at this machine's local files (file:// URLs), which teammates cannot read (their task run fails at its load_artifact step); set [stores.object] to a shared store (S3ObjectStore, or a plugin's)",
        documents.class_name(),
        chosen_by(documents),
        objects.class_name(),
        chosen_by(objects),
    )
}

fn note(documents: &StoreSelection, objects: &StoreSelection) -> String {
    format!(
        "if other machines share the document store {} ({}), a plugin's, set [stores.object] to a shared store too (S3ObjectStore, or a plugin's): the object store is {} ({}), which keeps its files on this machine, so artifacts put through {} would point at this machine's local files (file:// URLs), which teammates cannot read; a document store that keeps its files on this machine needs nothing",
        documents.class_name(),
        chosen_by(documents),
        objects.class_name(),
        chosen_by(objects),
        documents.class_name(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> ConfigDocument {
        ConfigDocument::from_text(text, std::path::Path::new("/p/.agentenv/config.toml"))
    }

    #[test]
    fn a_hosted_document_store_with_the_default_object_store_is_warned_of() {
        let found = local_objects_behind_shared_documents(&doc(
            "[stores.document]\nimpl = \"PostgresDocumentStore\"\nconfig = { dsn = \"env:TEAM_PG_DSN\" }\n",
        ))
        .expect("a warning");
        assert!(
            found.starts_with("the document store is PostgresDocumentStore ([stores.document]), which other machines may share, but the object store is LocalFilesystemObjectStore (the built-in default)"),
            "{found}"
        );
        assert!(
            found.ends_with("set [stores.object] to a shared store (S3ObjectStore, or a plugin's)")
        );
    }

    #[test]
    fn local_documents_or_shared_objects_are_not_warned_of() {
        for text in [
            "",
            "[stores.object]\nimpl = \"S3ObjectStore\"\nconfig = { bucket = \"b\" }\n[stores.document]\nimpl = \"PostgresDocumentStore\"\n",
            "[stores.object]\nimpl = \"acme:TeamObjects\"\n[stores.document]\nimpl = \"acme:TeamDocuments\"\n",
            "[stores.document]\nimpl = \"agent_env.store.document_store:LocalSqliteDocumentStore\"\n",
        ] {
            assert_eq!(local_objects_behind_shared_documents(&doc(text)), None, "{text}");
        }
        assert!(local_objects_behind_shared_documents(&doc(
            "[stores.document]\nimpl = \"acme:TeamDocuments\"\n"
        ))
        .is_some());
    }

    #[test]
    fn config_check_warns_of_a_hosted_document_store_and_notes_a_plugins() {
        let hosted = doc("[stores.document]\nimpl = \"PostgresDocumentStore\"\n");
        assert!(matches!(
            shared_stores_finding(&hosted),
            Some(SharedStores::Warning(w)) if w.contains("which other machines may share")
        ));
        let plugin = doc("[stores.document]\nimpl = \"notes:NotesDoc\"\n");
        let Some(SharedStores::Note(note)) = shared_stores_finding(&plugin) else {
            panic!("a note for a plugin's document store");
        };
        assert!(
            note.starts_with("if other machines share the document store NotesDoc ([stores.document]), a plugin's, set [stores.object] to a shared store too"),
            "{note}"
        );
        assert_eq!(shared_stores_finding(&doc("")), None);
    }
}
