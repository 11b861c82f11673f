//! Answering store operations against a store of this process: the server half of docs/protocol.md §4.4.
//! The host uses it for `host.store.*` requests; the Rust plugin SDK uses it for `store.*` requests to a
//! plugin's own store (after looking up the handle). Fields a request leaves out take the defaults the
//! protocol names (`content_type` is [`DEFAULT_CONTENT_TYPE`], `allow_overwrite` and `upsert` are false,
//! `return_after` is true); extra fields (such as `handle`) are ignored. `document.drop_collection` is
//! answered too (with the store's own way, or the trait's default of deleting one document at a time);
//! the host, which must not let a plugin drop a collection of the user's stores, refuses it before it
//! gets here.

use std::path::Path;

use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::bytes;
use serde_json::{json, Value};

use crate::any::AnyStore;
use crate::document::query::{Document, Filter, Sort, UpdateSpec};
use crate::document::DocumentStore;
use crate::image::ImageStore;
use crate::object::{ObjectStore, DEFAULT_CONTENT_TYPE};
use crate::secret::SecretStore;
use crate::wire::{unknown_op, Params};

/// Answers `<prefix><kind>.<op>` against a store of any kind; `method` is the full name, for messages.
/// The caller has checked that the method's kind is the store's.
pub fn any(store: &AnyStore, method: &str, op: &str, params: &Value) -> Result<Value, RpcError> {
    match store {
        AnyStore::Object(s) => object(s.as_ref(), method, op, params),
        AnyStore::Document(s) => document(s.as_ref(), method, op, params),
        AnyStore::Image(s) => image(s.as_ref(), method, op, params),
        AnyStore::Secret(s) => secret(s.as_ref(), method, op, params),
    }
}

/// Answers `<prefix>object.<op>`; `method` is the full name, for messages.
pub fn object(
    store: &dyn ObjectStore,
    method: &str,
    op: &str,
    params: &Value,
) -> Result<Value, RpcError> {
    let p = Params::new(method, params);
    let ct = || p.str_or("content_type", DEFAULT_CONTENT_TYPE);
    Ok(match op {
        "put" => {
            let url = store.put(
                p.str("key")?,
                &p.bytes("data")?,
                ct()?,
                p.bool_or("allow_overwrite", false)?,
            )?;
            json!({ "url": url })
        }
        "put_file" => {
            json!({ "url": store.put_file(p.str("key")?, Path::new(p.str("path")?), ct()?)? })
        }
        "put_file_at" => {
            json!({ "url": store.put_file_at(p.str("url")?, Path::new(p.str("path")?), ct()?)? })
        }
        "get" => json!({ "data": bytes::encode(&store.get(p.str("url")?)?) }),
        "read" => json!({ "data": bytes::encode(&store.read(p.str("key")?)?) }),
        "download_to_file" => {
            store.download_to_file(p.str("url")?, Path::new(p.str("path")?))?;
            Value::Null
        }
        "get_object_metadata" => json!({ "metadata": store.get_object_metadata(p.str("key")?)? }),
        "get_object_metadata_at" => {
            json!({ "metadata": store.get_object_metadata_at(p.str("url")?)? })
        }
        "list" => json!({ "keys": store.list(p.str_or("prefix", "")?)? }),
        "list_at" => json!({ "urls": store.list_at(p.str("url_prefix")?)? }),
        "object_url" => json!({ "url": store.object_url(p.str("key")?)? }),
        "get_object_key" => json!({ "key": store.get_object_key(p.str("url")?)? }),
        "exists" => json!({ "exists": store.exists(p.str("key")?)? }),
        "owns" => json!({ "owns": store.owns(p.str("url")?)? }),
        _ => return Err(unknown_op(method)),
    })
}

/// Answers `<prefix>document.<op>`.
pub fn document(
    store: &dyn DocumentStore,
    method: &str,
    op: &str,
    params: &Value,
) -> Result<Value, RpcError> {
    let p = Params::new(method, params);
    let coll = p.str("collection")?;
    let filter = || -> Result<Filter, RpcError> { Ok(p.opt("filter")?.unwrap_or_default()) };
    let sort = || -> Result<Option<Sort>, RpcError> { p.opt("sort") };
    let update = || -> Result<UpdateSpec, RpcError> { Ok(p.opt("update")?.unwrap_or_default()) };
    let doc = || -> Result<Document, RpcError> { Ok(p.opt("doc")?.unwrap_or_default()) };
    let upsert = || p.bool_or("upsert", false);
    Ok(match op {
        "find_one" => json!({ "doc": store.find_one(coll, &filter()?, sort()?.as_ref())? }),
        "query" => {
            let limit: Option<usize> = p.opt("limit")?;
            let offset: Option<usize> = p.opt("offset")?;
            let docs = store.query(
                coll,
                &filter()?,
                sort()?.as_ref(),
                limit,
                offset.unwrap_or(0),
            )?;
            json!({ "docs": docs })
        }
        "count" => json!({ "count": store.count(coll, &filter()?)? }),
        "insert" => {
            store.insert(coll, &doc()?)?;
            Value::Null
        }
        "update" => json!({ "matched": store.update(coll, &filter()?, &update()?, upsert()?)? }),
        "update_one_and_get" => {
            let got = store.update_one_and_get(
                coll,
                &filter()?,
                &update()?,
                p.bool_or("return_after", true)?,
                upsert()?,
            )?;
            json!({ "doc": got })
        }
        "replace" => json!({ "matched": store.replace(coll, &filter()?, &doc()?, upsert()?)? }),
        "delete" => json!({ "deleted": store.delete(coll, &filter()?)? }),
        "ensure_index" => {
            let fields: Vec<String> = p.opt("fields")?.unwrap_or_default();
            let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
            store.ensure_index(coll, &fields, p.bool_or("unique", false)?)?;
            Value::Null
        }
        "drop_collection" => {
            store.drop_collection(coll)?;
            Value::Null
        }
        _ => return Err(unknown_op(method)),
    })
}

/// Answers `<prefix>image.<op>`.
pub fn image(
    store: &dyn ImageStore,
    method: &str,
    op: &str,
    params: &Value,
) -> Result<Value, RpcError> {
    let p = Params::new(method, params);
    Ok(match op {
        "image_ref" => json!({ "ref": store.image_ref(p.str("repository")?, p.str("tag")?)? }),
        "ensure_repository" => {
            store.ensure_repository(p.str("repository")?)?;
            Value::Null
        }
        "owns" => json!({ "owns": store.owns(p.str("ref")?)? }),
        "auth" => json!({ "auth": store.auth(p.str("ref")?)? }),
        _ => return Err(unknown_op(method)),
    })
}

/// Answers `<prefix>secret.<op>`.
pub fn secret(
    store: &dyn SecretStore,
    method: &str,
    op: &str,
    params: &Value,
) -> Result<Value, RpcError> {
    let p = Params::new(method, params);
    match op {
        "get" => Ok(json!({ "value": store.get(p.str("name")?)? })),
        _ => Err(unknown_op(method)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::StoreResult;
    use agent_env_protocol::codes::ErrorKind;

    /// A store that writes only the two required operations.
    struct PutGetOnly;

    impl ObjectStore for PutGetOnly {
        fn put(&self, _: &str, _: &[u8], _: &str, _: bool) -> StoreResult<String> {
            Ok("x://k".into())
        }
        fn get(&self, _url: &str) -> StoreResult<Vec<u8>> {
            Ok(Vec::new())
        }
    }

    #[test]
    fn an_operation_a_store_leaves_at_its_default_answers_not_supported() {
        let params = json!({"handle": "s1", "url_prefix": "x://"});
        let Err(e) = object(&PutGetOnly, "store.object.list_at", "list_at", &params) else {
            panic!("a default list_at answered")
        };
        assert_eq!(e.kind(), Some(ErrorKind::NotSupported));
        assert_eq!(e.message, "this store does not implement list_at");
    }

    /// Keys `k` only, with `object_url` and nothing else beyond put and get.
    struct OneKey;

    impl ObjectStore for OneKey {
        fn put(&self, _: &str, _: &[u8], _: &str, _: bool) -> StoreResult<String> {
            Ok("x://k".into())
        }
        fn get(&self, url: &str) -> StoreResult<Vec<u8>> {
            match url {
                "x://k" => Ok(b"v".to_vec()),
                other => Err(crate::StoreError::object_not_found(other)),
            }
        }
        fn object_url(&self, key: &str) -> StoreResult<String> {
            Ok(format!("x://{key}"))
        }
    }

    #[test]
    fn exists_falls_back_to_reading_when_metadata_is_not_offered() {
        for (key, want) in [("k", true), ("absent", false)] {
            let answer = object(
                &OneKey,
                "store.object.exists",
                "exists",
                &json!({ "key": key }),
            )
            .unwrap();
            assert_eq!(answer, json!({ "exists": want }), "{key}");
        }
    }

    #[test]
    fn drop_collection_reaches_the_store_and_answers_null() {
        // Any call but drop_collection fails, so counting and deleting instead would not answer null.
        let store = crate::test_stores::Drops::refusing(&[]);
        let params = json!({"handle": "s1", "collection": "kit_x"});
        let answer = document(
            &store,
            "store.document.drop_collection",
            "drop_collection",
            &params,
        )
        .unwrap();
        assert_eq!(answer, Value::Null);
        assert_eq!(*store.asked.lock().unwrap(), ["kit_x"]);
        let Err(e) = document(
            &store,
            "store.document.drop_collection",
            "drop_collection",
            &json!({}),
        ) else {
            panic!("a drop_collection without a collection answered")
        };
        assert_eq!(e.kind(), Some(ErrorKind::InvalidParams));
    }

    #[test]
    fn a_write_that_names_no_content_type_gets_the_default() {
        struct Recorder(std::sync::Mutex<String>);
        impl ObjectStore for Recorder {
            fn put(&self, _: &str, _: &[u8], content_type: &str, _: bool) -> StoreResult<String> {
                *self.0.lock().unwrap() = content_type.to_string();
                Ok("x://k".into())
            }
            fn get(&self, _url: &str) -> StoreResult<Vec<u8>> {
                Ok(Vec::new())
            }
        }
        let store = Recorder(std::sync::Mutex::new(String::new()));
        let params = json!({"key": "k", "data": ""});
        object(&store, "store.object.put", "put", &params).unwrap();
        assert_eq!(*store.0.lock().unwrap(), DEFAULT_CONTENT_TYPE);
    }
}
