//! The committed schemas are what the Rust types give: a type changed without regenerating the schemas
//! (`cargo run -p agent-env-schema-gen -- write`) fails here.

// Tests stop at the first thing that is not as expected: unwrapping is how they say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use agent_env_schema_gen::{
    manifest_schema, manifest_schema_path, message_schema, message_schema_path, read_committed,
    render, report_schema, report_schema_path, TYPED,
};
use serde_json::Value;

/// The committed file at `path`, after checking it is what `make` gives from it.
fn committed_as_generated(path: PathBuf, make: fn(&Value) -> Result<Value, String>) -> Value {
    let committed = read_committed(&path).unwrap();
    let generated = render(&make(&committed).unwrap()).unwrap();
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert!(
        on_disk == generated,
        "{} differs from what the Rust types give; run `cargo run -p agent-env-schema-gen -- write` and commit it",
        path.display()
    );
    committed
}

fn is_generated(def: &Value) -> bool {
    def["$comment"]
        .as_str()
        .is_some_and(|c| c.starts_with("Generated from the Rust types"))
}

#[test]
fn the_committed_message_schema_is_what_the_types_give() {
    let committed = committed_as_generated(message_schema_path(), message_schema);
    for (name, _) in TYPED {
        assert!(
            is_generated(&committed["$defs"][*name]),
            "{name} is not generated"
        );
    }
}

#[test]
fn the_committed_report_schema_is_what_the_types_give() {
    let committed = committed_as_generated(report_schema_path(), report_schema);
    for name in [
        "Report",
        "Contribution",
        "ContributionFields",
        "Distribution",
        "Status",
    ] {
        assert!(
            is_generated(&committed["$defs"][name]),
            "{name} is not generated"
        );
    }
}

#[test]
fn the_committed_manifest_schema_is_what_the_types_give() {
    let committed = committed_as_generated(manifest_schema_path(), manifest_schema);
    assert!(
        is_generated(&committed),
        "the manifest schema is not generated"
    );
}
