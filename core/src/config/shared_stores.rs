//! A document store other machines share with the object store left on this machine: what an
//! artifact put records then points at this machine's files (`file://` URLs), which a teammate's
//! `task run` and `bundle init --from-task` cannot read. Said by `config check` and `artifact put`.

use super::document::ConfigDocument;
use super::store_selection::{selection, StoreSelection};
use crate::stores::local::{fs_object, sqlite_docs};
use crate::stores::{local_builtin, StoreKind};

/// The warning, when the selected document store is not the built-in local one while the object
/// store is the built-in `LocalFilesystemObjectStore`; `None` otherwise, or when either section
/// cannot be read (that is the section's own problem).
pub fn local_objects_behind_shared_documents(doc: &ConfigDocument) -> Option<String> {
    let documents = selection(doc, "document").ok()?;
    let objects = selection(doc, "object").ok()?;
    let shared_documents =
        local_builtin(StoreKind::Document, &documents.impl_name) != Some(sqlite_docs::CLASS);
    let local_objects =
        local_builtin(StoreKind::Object, &objects.impl_name) == Some(fs_object::CLASS);
    (shared_documents && local_objects).then(|| warning(&documents, &objects))
}

fn warning(documents: &StoreSelection, objects: &StoreSelection) -> String {
    let chosen_by = |s: &StoreSelection| match s.origin.location.as_str() {
        "built-in default" => "the built-in default".to_string(),
        place => place.to_string(),
    };
    format!(
        "the document store is {} ({}), which other machines may share, but the object store is {} ({}), which keeps its files on this machine: artifacts put through the shared document store will point at this machine's local files (file:// URLs), which teammates cannot read (their task run fails at its load_artifact step); set [stores.object] to a shared store (S3ObjectStore, or a plugin's)",
        documents.class_name(),
        chosen_by(documents),
        objects.class_name(),
        chosen_by(objects),
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
}
