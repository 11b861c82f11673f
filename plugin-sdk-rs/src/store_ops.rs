//! Decoding `store.<kind>.<op>` params and calling the opened store.

use std::path::Path;

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::bytes;
use serde_json::{json, Map, Value};

use crate::store::{DocumentStore, ImageStore, ObjectStore, OpenedStore, SecretStore};

type Params = Map<String, Value>;

fn bad(message: String) -> RpcError {
    RpcError::new(ErrorKind::InvalidParams, message)
}

fn text<'a>(p: &'a Params, key: &str) -> Result<&'a str, RpcError> {
    p.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| bad(format!("'{key}' must be a string")))
}

fn opt_text<'a>(p: &'a Params, key: &str) -> Option<&'a str> {
    p.get(key).and_then(Value::as_str)
}

fn flag(p: &Params, key: &str) -> bool {
    p.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn object(p: &Params, key: &str) -> Result<Map<String, Value>, RpcError> {
    match p.get(key) {
        Some(Value::Object(m)) => Ok(m.clone()),
        _ => Err(bad(format!("'{key}' must be an object"))),
    }
}

fn value<'a>(p: &'a Params, key: &str) -> &'a Value {
    p.get(key).unwrap_or(&Value::Null)
}

/// Runs `op` on `store`.
pub(crate) fn call(store: &OpenedStore, op: &str, p: &Params) -> Result<Value, RpcError> {
    match store {
        OpenedStore::Object(s) => object_op(s.as_ref(), op, p),
        OpenedStore::Document(s) => document_op(s.as_ref(), op, p),
        OpenedStore::Image(s) => image_op(s.as_ref(), op, p),
        OpenedStore::Secret(s) => secret_op(s.as_ref(), op, p),
    }
}

fn unknown(kind: &str, op: &str) -> RpcError {
    RpcError::new(
        ErrorKind::MethodNotFound,
        format!("no {kind} store operation '{op}'"),
    )
}

fn object_op(s: &dyn ObjectStore, op: &str, p: &Params) -> Result<Value, RpcError> {
    Ok(match op {
        "put" => {
            let data = bytes::decode(text(p, "data")?)
                .map_err(|e| bad(format!("'data' is not base64: {e}")))?;
            let url = s.put(
                text(p, "key")?,
                &data,
                opt_text(p, "content_type"),
                flag(p, "allow_overwrite"),
            )?;
            json!({ "url": url })
        }
        "put_file" => {
            let url = s.put_file(
                text(p, "key")?,
                Path::new(text(p, "path")?),
                opt_text(p, "content_type"),
            )?;
            json!({ "url": url })
        }
        "put_file_at" => {
            let url = s.put_file_at(
                text(p, "url")?,
                Path::new(text(p, "path")?),
                opt_text(p, "content_type"),
            )?;
            json!({ "url": url })
        }
        "get" => json!({ "data": bytes::encode(&s.get(text(p, "url")?)?) }),
        "read" => json!({ "data": bytes::encode(&s.read(text(p, "key")?)?) }),
        "download_to_file" => {
            s.download_to_file(text(p, "url")?, Path::new(text(p, "path")?))?;
            Value::Null
        }
        "get_object_metadata" => json!({ "metadata": s.get_object_metadata(text(p, "key")?)? }),
        "get_object_metadata_at" => {
            json!({ "metadata": s.get_object_metadata_at(text(p, "url")?)? })
        }
        "list" => json!({ "keys": s.list(opt_text(p, "prefix").unwrap_or(""))? }),
        "list_at" => json!({ "urls": s.list_at(text(p, "url_prefix")?)? }),
        "object_url" => json!({ "url": s.object_url(text(p, "key")?)? }),
        "get_object_key" => json!({ "key": s.get_object_key(text(p, "url")?)? }),
        "exists" => json!({ "exists": s.exists(text(p, "key")?)? }),
        "owns" => json!({ "owns": s.owns(text(p, "url")?)? }),
        _ => return Err(unknown("object", op)),
    })
}

fn document_op(s: &dyn DocumentStore, op: &str, p: &Params) -> Result<Value, RpcError> {
    let collection = text(p, "collection")?;
    let filter = value(p, "filter");
    let upsert = flag(p, "upsert");
    Ok(match op {
        "find_one" => json!({ "doc": s.find_one(collection, filter, value(p, "sort"))? }),
        "query" => {
            let limit = p.get("limit").and_then(Value::as_u64).filter(|l| *l > 0);
            let offset = p.get("offset").and_then(Value::as_u64).unwrap_or(0);
            json!({ "docs": s.query(collection, filter, value(p, "sort"), limit, offset)? })
        }
        "count" => json!({ "count": s.count(collection, filter)? }),
        "insert" => {
            s.insert(collection, object(p, "doc")?)?;
            Value::Null
        }
        "update" => json!({ "matched": s.update(collection, filter, value(p, "update"), upsert)? }),
        "update_one_and_get" => json!({ "doc": s.update_one_and_get(
            collection,
            filter,
            value(p, "update"),
            flag(p, "return_after"),
            upsert,
        )? }),
        "replace" => {
            json!({ "matched": s.replace(collection, filter, object(p, "doc")?, upsert)? })
        }
        "delete" => json!({ "deleted": s.delete(collection, filter)? }),
        "ensure_index" => {
            let fields: Vec<String> = p
                .get("fields")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .ok_or_else(|| bad("'fields' must be a list of paths".into()))?;
            s.ensure_index(collection, &fields, flag(p, "unique"))?;
            Value::Null
        }
        _ => return Err(unknown("document", op)),
    })
}

fn image_op(s: &dyn ImageStore, op: &str, p: &Params) -> Result<Value, RpcError> {
    Ok(match op {
        "image_ref" => json!({ "ref": s.image_ref(text(p, "repository")?, text(p, "tag")?)? }),
        "ensure_repository" => {
            s.ensure_repository(text(p, "repository")?)?;
            Value::Null
        }
        "owns" => json!({ "owns": s.owns(text(p, "ref")?)? }),
        "auth" => json!({ "auth": s.auth(text(p, "ref")?)? }),
        _ => return Err(unknown("image", op)),
    })
}

fn secret_op(s: &dyn SecretStore, op: &str, p: &Params) -> Result<Value, RpcError> {
    match op {
        "get" => Ok(json!({ "value": s.get(text(p, "name")?)? })),
        _ => Err(unknown("secret", op)),
    }
}
