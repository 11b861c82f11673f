//! The protocol's JSON Schemas, generated from the Rust types the host and the Rust SDK read and write.
//!
//! `protocol/schema/message.schema.json` holds one definition per method's params and result. Those of
//! the methods with a Rust type ([`TYPED`]) are generated here with `schemars`, so the schema cannot say
//! other than the types; the envelope, the few methods without params of their own and the store
//! operations (whose params the store API reads field by field, with no type to derive from) stay
//! written by hand in the same file. [`message_schema`] takes the committed file and puts the generated
//! definitions into it; `agent-env-schema-gen write` saves that, and the crate's test fails when the
//! committed file differs from it.

use std::path::{Path, PathBuf};

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

/// Hand-written definitions the generated ones replace (the types' own names take their place).
const REPLACED: &[&str] = &["protocol_range", "contribution", "store_class"];

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
    for name in REPLACED {
        defs.remove(*name);
    }
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
                }
                defs.insert(type_name, def);
            }
        }
        tidy_descriptions(object);
        let mut generated = Map::new();
        generated.insert(
            "$comment".into(),
            Value::String("Generated from the Rust types by agent-env-schema-gen; do not edit.".into()),
        );
        generated.extend(std::mem::take(object));
        defs.insert((*name).to_string(), Value::Object(generated));
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
