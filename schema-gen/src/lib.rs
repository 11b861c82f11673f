//! The protocol's JSON Schemas, generated from the Rust types the host and the Rust SDK read and write.
//!
//! - `manifest.schema.json` is generated whole from the types a manifest is read into.
//! - `report.schema.json` has its records generated from the types `plugin list --json` serializes;
//!   the `list`, `show` and `check` documents that extend them are written by hand.
//! - `message.schema.json` holds one definition per method's params and result. Those of the methods
//!   with a Rust type ([`TYPED`]) are generated; the envelope, the few methods without params of their
//!   own and the store operations (whose params the store API reads field by field, with no type to
//!   derive from) stay written by hand in the same file.
//!
//! Each function takes the committed file and gives it with the generated parts put in;
//! `agent-env-schema-gen write` saves them, and the crate's tests fail when a committed file differs.

use std::path::{Path, PathBuf};

use agent_env::report::model::Report;
use agent_env_protocol::explorer::{
    ExplorerRequestParams, ExplorerResponse, ExplorerRouterParams, ExplorerRouterResult,
};
use agent_env_protocol::methods::{
    CancelParams, CliRunParams, CliRunResult, ExecuteParams, ExecuteResult, InitializeParams,
    InitializeResult, ProgressParams, RootOptionParams, RootOptionResult, StoreOpenParams,
    StoreOpenResult, ValidateParams,
};
use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{Map, Value};

/// A definition generated from a type.
type Generate = fn(&mut schemars::SchemaGenerator) -> Value;

fn of<T: JsonSchema>(generator: &mut schemars::SchemaGenerator) -> Value {
    generator.root_schema_for::<T>().to_value()
}

/// The definitions generated from types: `<method>.params` / `<method>.result` and the type.
pub const TYPED: &[(&str, Generate)] = &[
    ("initialize.params", of::<InitializeParams>),
    ("initialize.result", of::<InitializeResult>),
    ("execute.params", of::<ExecuteParams>),
    ("execute.result", of::<ExecuteResult>),
    ("task_step.validate.params", of::<ValidateParams>),
    ("store.open.params", of::<StoreOpenParams>),
    ("store.open.result", of::<StoreOpenResult>),
    ("cli.run.params", of::<CliRunParams>),
    ("cli.run.result", of::<CliRunResult>),
    ("cli.root_option.params", of::<RootOptionParams>),
    ("cli.root_option.result", of::<RootOptionResult>),
    ("explorer.router.params", of::<ExplorerRouterParams>),
    ("explorer.router.result", of::<ExplorerRouterResult>),
    ("explorer.request.params", of::<ExplorerRequestParams>),
    ("explorer.request.result", of::<ExplorerResponse>),
    ("$/cancelRequest.params", of::<CancelParams>),
    ("$/progress.params", of::<ProgressParams>),
];

/// Where the schemas live in the repository.
pub fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("protocol")
        .join("schema")
}

/// `committed` (the message schema as the repository has it) with every [`TYPED`] definition, and
/// the definitions of the types they use, generated from the Rust types.
pub fn message_schema(committed: &Value) -> Result<Value, String> {
    let mut schema = committed.clone();
    let defs = schema
        .get_mut("$defs")
        .and_then(Value::as_object_mut)
        .ok_or("message.schema.json has no $defs object")?;
    drop_generated(defs);
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    for (name, generate) in TYPED {
        let mut root = generate(&mut generator);
        let object = root
            .as_object_mut()
            .ok_or_else(|| format!("the schema of {name} is not an object"))?;
        object.remove("$schema");
        object.remove("title");
        if let Some(Value::Object(nested)) = object.remove("$defs") {
            for (type_name, mut def) in nested {
                if let Some(def_object) = def.as_object_mut() {
                    tidy_descriptions(def_object);
                    defs.insert(type_name, generated(std::mem::take(def_object)));
                }
            }
        }
        tidy_descriptions(object);
        defs.insert((*name).to_string(), generated(std::mem::take(object)));
    }
    Ok(schema)
}

/// Doc comments become descriptions: their rustdoc links (`` [`INITIALIZE`] ``) read as code spans.
fn tidy_descriptions(object: &mut Map<String, Value>) {
    for (key, value) in object.iter_mut() {
        match value {
            Value::String(text) if key == "description" => {
                *text = text.replace("[`", "`").replace("`]", "`");
            }
            Value::Object(inner) => tidy_descriptions(inner),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(inner) = item {
                        tidy_descriptions(inner);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `committed` (the report schema as the repository has it) with the records of the report generated
/// from the types `plugin list --json` serializes: `Report` (the fields every document has, which
/// `list`, `show` and `check` extend), `Contribution`, `Distribution`, `Diagnostic`, ... Each nested
/// record is closed (`additionalProperties: false`); `Report` and `ContributionFields` (the
/// contribution's fields, which `check`'s problems extend) are left open for the documents that extend
/// them to close with `unevaluatedProperties`. `list`, `show`, `check` and `process` stay hand-written:
/// their extra keys are assembled by the CLI, not by a type.
pub fn report_schema(committed: &Value) -> Result<Value, String> {
    let mut schema = committed.clone();
    let defs = schema
        .get_mut("$defs")
        .and_then(Value::as_object_mut)
        .ok_or("report.schema.json has no $defs object")?;
    drop_generated(defs);
    let mut generator = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let mut root = generator.root_schema_for::<Report>().to_value();
    let object = root
        .as_object_mut()
        .ok_or("the report's schema is not an object")?;
    object.remove("$schema");
    object.remove("title");
    let nested = match object.remove("$defs") {
        Some(Value::Object(nested)) => nested,
        _ => Map::new(),
    };
    tidy_descriptions(object);
    defs.insert("Report".into(), generated(std::mem::take(object)));
    for (name, mut def) in nested {
        let Some(def_object) = def.as_object_mut() else {
            continue;
        };
        tidy_descriptions(def_object);
        if name == "Contribution" {
            defs.insert("ContributionFields".into(), generated(def_object.clone()));
        }
        if def_object.contains_key("properties") && !def_object.contains_key("additionalProperties")
        {
            def_object.insert("additionalProperties".into(), Value::Bool(false));
        }
        defs.insert(name, generated(std::mem::take(def_object)));
    }
    Ok(schema)
}

/// Removes every definition an earlier run generated, so that one whose type was renamed or removed
/// does not stay behind; the hand-written ones are kept.
fn drop_generated(defs: &mut Map<String, Value>) {
    defs.retain(|_, def| def.get("$comment").and_then(Value::as_str) != Some(GENERATED));
}

/// The mark on everything this crate writes.
const GENERATED: &str = "Generated from the Rust types by agent-env-schema-gen; do not edit.";

/// A generated definition, marked as such.
fn generated(body: Map<String, Value>) -> Value {
    let mut out = Map::new();
    out.insert("$comment".into(), Value::String(GENERATED.into()));
    out.extend(body);
    Value::Object(out)
}

/// The manifest schema, generated whole from the types the manifest is read into; `committed` gives
/// only its header (`$schema`, `$id`, `title`, `description`).
pub fn manifest_schema(committed: &Value) -> Result<Value, String> {
    let mut generated = agent_env_protocol::manifest::json_schema();
    let object = generated
        .as_object_mut()
        .ok_or("the manifest's schema is not an object")?;
    object.remove("$schema");
    object.remove("title");
    object.remove("description");
    tidy_descriptions(object);
    if let Some(Value::Object(defs)) = object.get_mut("$defs") {
        for def in defs.values_mut() {
            if let Some(def_object) = def.as_object_mut() {
                tidy_descriptions(def_object);
            }
        }
    }
    let body = std::mem::take(object);
    let mut out = Map::new();
    for key in ["$schema", "$id", "title", "description"] {
        if let Some(value) = committed.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    out.insert("$comment".into(), Value::String(GENERATED.into()));
    out.extend(body);
    Ok(Value::Object(out))
}

/// The manifest schema's file.
pub fn manifest_schema_path() -> PathBuf {
    schema_dir().join("manifest.schema.json")
}

/// The report schema's file.
pub fn report_schema_path() -> PathBuf {
    schema_dir().join("report.schema.json")
}

/// The message schema's file.
pub fn message_schema_path() -> PathBuf {
    schema_dir().join("message.schema.json")
}

/// The committed message schema, read.
pub fn read_committed(path: &Path) -> Result<Value, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("can't read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))
}

/// The file's text for `schema`: two-space indents and a final newline.
pub fn render(schema: &Value) -> Result<String, String> {
    serde_json::to_string_pretty(schema)
        .map(|text| text + "\n")
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_generated_definition_goes_and_a_hand_written_one_stays() {
        let committed = serde_json::json!({
            "$defs": {
                "RenamedAway": {"$comment": GENERATED, "type": "object"},
                "shutdown.params": {"type": "null"},
            }
        });
        for schema in [
            message_schema(&committed).unwrap(),
            report_schema(&committed).unwrap(),
        ] {
            let defs = schema["$defs"].as_object().unwrap();
            assert!(!defs.contains_key("RenamedAway"));
            assert_eq!(defs["shutdown.params"], serde_json::json!({"type": "null"}));
        }
    }
}
