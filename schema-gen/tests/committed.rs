//! The committed message schema is what the Rust types give: a type changed without regenerating the
//! schema (`cargo run -p agent-env-schema-gen -- write`) fails here.

use agent_env_schema_gen::{
    manifest_schema, manifest_schema_path, message_schema, message_schema_path, read_committed,
    render, report_schema, report_schema_path, TYPED,
};

#[test]
fn the_committed_message_schema_is_what_the_types_give() {
    let path = message_schema_path();
    let committed = read_committed(&path).unwrap();
    let generated = render(&message_schema(&committed).unwrap()).unwrap();
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert!(
        on_disk == generated,
        "{} differs from what the Rust types give; run `cargo run -p agent-env-schema-gen -- write` and commit it",
        path.display()
    );
    let defs = committed["$defs"].as_object().unwrap();
    for (name, _) in TYPED {
        assert!(
            defs[*name]["$comment"]
                .as_str()
                .is_some_and(|c| c.starts_with("Generated from the Rust types")),
            "{name} is not the generated definition"
        );
    }
}

#[test]
fn the_committed_report_schema_is_what_the_types_give() {
    let path = report_schema_path();
    let committed = read_committed(&path).unwrap();
    let generated = render(&report_schema(&committed).unwrap()).unwrap();
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert!(
        on_disk == generated,
        "{} differs from what the Rust types give; run `cargo run -p agent-env-schema-gen -- write` and commit it",
        path.display()
    );
    for name in [
        "Report",
        "Contribution",
        "ContributionFields",
        "Distribution",
        "Status",
    ] {
        assert!(
            committed["$defs"][name]["$comment"]
                .as_str()
                .is_some_and(|c| c.starts_with("Generated from the Rust types")),
            "{name} is not a generated definition"
        );
    }
}

#[test]
fn the_committed_manifest_schema_is_what_the_types_give() {
    let path = manifest_schema_path();
    let committed = read_committed(&path).unwrap();
    let generated = render(&manifest_schema(&committed).unwrap()).unwrap();
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert!(
        on_disk == generated,
        "{} differs from what the Rust types give; run `cargo run -p agent-env-schema-gen -- write` and commit it",
        path.display()
    );
}
