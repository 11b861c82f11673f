//! The committed message schema is what the Rust types give: a type changed without regenerating the
//! schema (`cargo run -p agent-env-schema-gen -- write`) fails here.

use agent_env_schema_gen::{message_schema, message_schema_path, read_committed, render, TYPED};

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
