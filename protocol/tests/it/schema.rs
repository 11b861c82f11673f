//! `protocol/schema/`: the examples the JSON Schemas are tested against (by
//! `protocol/schema/tests/test_schema.py`, with a JSON Schema validator) are held here to the crate's
//! own types and manifest parser, so that the schemas and the types agree on every example: a valid
//! example deserializes into its type and serializes back to a value the type reads the same; an invalid
//! one is refused.

use std::path::{Path, PathBuf};

use agent_env_protocol::explorer::{
    ExplorerRequestParams, ExplorerResponse, ExplorerRouterParams, ExplorerRouterResult,
};
use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::methods::{
    self, CancelParams, CliRunParams, CliRunResult, ExecuteParams, ExecuteResult, InitializeParams,
    InitializeResult, ProgressParams, RootOptionParams, RootOptionResult, StoreOpenParams,
    StoreOpenResult, ValidateParams,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schema")
}

fn examples() -> Vec<Value> {
    let path = schema_dir().join("examples/messages.jsonl");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Whether `value` reads as `T`; a value that does is written back and must read the same again.
fn reads_as<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(value: &Value) -> bool {
    let Ok(typed) = serde_json::from_value::<T>(value.clone()) else {
        return false;
    };
    let written = serde_json::to_value(&typed).expect("serializes");
    let again: T = serde_json::from_value(written).expect("reads what it wrote");
    assert_eq!(again, typed);
    true
}

/// How the crate's type for a schema definition judges a value; `None` for definitions the crate has
/// no type for (the store operations, whose params the store API reads field by field).
fn judged_by_type(definition: &str, value: &Value) -> Option<bool> {
    Some(match definition {
        "initialize.params" => reads_as::<InitializeParams>(value),
        "initialize.result" => reads_as::<InitializeResult>(value),
        "execute.params" => reads_as::<ExecuteParams>(value),
        "execute.result" => reads_as::<ExecuteResult>(value),
        "task_step.validate.params" => reads_as::<ValidateParams>(value),
        "store.open.params" => reads_as::<StoreOpenParams>(value),
        "store.open.result" => reads_as::<StoreOpenResult>(value),
        "cli.run.params" => reads_as::<CliRunParams>(value),
        "cli.run.result" => reads_as::<CliRunResult>(value),
        "cli.root_option.params" => reads_as::<RootOptionParams>(value),
        "cli.root_option.result" => reads_as::<RootOptionResult>(value),
        "explorer.router.params" => reads_as::<ExplorerRouterParams>(value),
        "explorer.router.result" => reads_as::<ExplorerRouterResult>(value),
        "explorer.request.params" => reads_as::<ExplorerRequestParams>(value),
        "explorer.request.result" => reads_as::<ExplorerResponse>(value),
        "$/cancelRequest.params" => reads_as::<CancelParams>(value),
        "$/progress.params" => reads_as::<ProgressParams>(value),
        _ => return None,
    })
}

#[test]
fn the_types_judge_every_schema_example_as_the_schema_does() {
    let mut typed = 0;
    for example in examples() {
        let definition = example["def"].as_str().expect("def");
        let name = example["name"].as_str().expect("name");
        let valid = example["valid"].as_bool().expect("valid");
        if let Some(read) = judged_by_type(definition, &example["value"]) {
            assert_eq!(read, valid, "{definition}: {name}");
            typed += 1;
        }
    }
    assert!(typed >= 30, "only {typed} examples have a type");
}

#[test]
fn the_message_schema_defines_every_method_the_crate_names() {
    let text = std::fs::read_to_string(schema_dir().join("message.schema.json")).expect("schema");
    let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
    let defs = schema["$defs"].as_object().expect("$defs");
    let calls = [
        methods::INITIALIZE,
        methods::SHUTDOWN,
        methods::EXECUTE,
        methods::TASK_STEP_VALIDATE,
        methods::STORE_OPEN,
        methods::CLI_RUN,
        methods::CLI_ROOT_OPTION,
        methods::HOST_SETTINGS,
        agent_env_protocol::explorer::EXPLORER_ROUTER,
        agent_env_protocol::explorer::EXPLORER_REQUEST,
    ];
    for method in calls {
        for part in ["params", "result"] {
            let name = format!("{method}.{part}");
            assert!(defs.contains_key(&name), "no {name}");
        }
    }
    for method in [methods::CANCEL_REQUEST, methods::PROGRESS, methods::LOG] {
        assert!(
            defs.contains_key(&format!("{method}.params")),
            "no {method}"
        );
    }
    for (kind, op) in [
        ("object", "put"),
        ("document", "query"),
        ("image", "auth"),
        ("secret", "get"),
    ] {
        for method in [
            methods::store_method(kind, op),
            methods::host_store_method(kind, op),
        ] {
            assert!(
                defs.contains_key(&format!("{method}.params")),
                "no {method}"
            );
        }
    }
}

fn manifests(prefix: &str) -> Vec<PathBuf> {
    let dir = schema_dir().join("examples/manifests");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("manifest examples")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".toml"))
        })
        .collect();
    found.sort();
    assert!(!found.is_empty(), "no {prefix}*.toml examples");
    found
}

#[test]
fn the_manifest_parser_accepts_the_valid_examples_and_refuses_the_invalid_ones() {
    for path in manifests("valid-") {
        if let Err(e) = Manifest::load(&path) {
            panic!("{}: {e}", path.display());
        }
    }
    for path in manifests("invalid-") {
        assert!(
            Manifest::load(&path).is_err(),
            "{} parses, but the schema refuses it",
            path.display()
        );
    }
}
