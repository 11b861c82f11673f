//! The shared document query vectors (`protocol/vectors/document-queries.jsonl`) held to the reference
//! evaluator (`agent_env_store::document::eval`). The Python and Go SDKs' evaluators read the same file
//! in their own tests, so a vector that passes here is a rule all three keep.
//!
//! Each line is one case, `name` saying what it shows, `op` which kind:
//! - `match`: `doc`, `filter` and `matches` (a bool), or `error`;
//! - `query`: `docs`, `filter`, `sort` (or null), `limit` (or null), `offset` and `expect` (the documents
//!   `query` answers, in order), or `error`;
//! - `update`: `doc`, `update` and `expect` (the document after it), or `error`;
//! - `upsert`: `filter`, `update` and `expect` (the document an upsert inserts on a miss), or `error`.
//!
//! `error` is an error kind: `invalid-params` for a filter, sort or update that does not parse (what the
//! store methods answer for one), `invalid-value` for an update that cannot apply.

// Tests stop at the first thing that is not as expected: unwrapping is how they say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_env_store::document::eval;
use agent_env_store::document::{Document, Filter, Sort, UpdateSpec};
use agent_env_store::StoreError;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

const VECTORS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../protocol/vectors/document-queries.jsonl"
);

/// What a case came to: a value, or the kind of error it was refused with.
type Outcome = Result<Value, String>;

fn parse<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    serde_json::from_value(value.clone()).map_err(|_| "invalid-params".to_string())
}

fn kind(err: StoreError) -> String {
    err.kind().as_str().to_string()
}

fn doc(value: &Value) -> Document {
    value.as_object().cloned().expect("a document is an object")
}

fn run(case: &Value) -> Outcome {
    match case["op"].as_str().expect("op") {
        "match" => {
            let filter: Filter = parse(&case["filter"])?;
            Ok(json!(eval::matches(&doc(&case["doc"]), &filter)))
        }
        "query" => {
            let filter: Filter = parse(&case["filter"])?;
            let sort: Option<Sort> = parse(&case["sort"])?;
            let limit = case["limit"].as_u64().map(|n| n as usize);
            let offset = case["offset"].as_u64().expect("offset") as usize;
            let docs: Vec<Document> = case["docs"]
                .as_array()
                .expect("docs")
                .iter()
                .map(doc)
                .filter(|d| eval::matches(d, &filter))
                .collect();
            let found = eval::window(docs, sort.as_ref(), eval::query_order, limit, offset);
            Ok(Value::Array(found.into_iter().map(Value::Object).collect()))
        }
        "update" => {
            let update: UpdateSpec = parse(&case["update"])?;
            let mut changed = doc(&case["doc"]);
            eval::apply_update(&mut changed, &update).map_err(kind)?;
            Ok(Value::Object(changed))
        }
        "upsert" => {
            let filter: Filter = parse(&case["filter"])?;
            let update: UpdateSpec = parse(&case["update"])?;
            let made = eval::synthesize_upsert(&filter, &update).map_err(kind)?;
            Ok(Value::Object(made))
        }
        other => panic!("{}: no op '{other}'", case["name"]),
    }
}

fn expected(case: &Value) -> Outcome {
    if let Some(error) = case.get("error") {
        return Err(error.as_str().expect("error is a kind").to_string());
    }
    let key = if case["op"] == "match" {
        "matches"
    } else {
        "expect"
    };
    Ok(case.get(key).cloned().expect("an expectation"))
}

#[test]
fn the_reference_evaluator_passes_every_document_vector() {
    let text = std::fs::read_to_string(VECTORS).unwrap_or_else(|e| panic!("{VECTORS}: {e}"));
    let cases: Vec<Value> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}")))
        .collect();
    assert!(cases.len() >= 150, "{VECTORS} holds {} cases", cases.len());
    let mut names = std::collections::HashSet::new();
    let mut wrong = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().expect("name");
        assert!(names.insert(name), "two cases are named '{name}'");
        // Strict equality: serde_json's numbers keep int and float apart (2 is not 2.0).
        let (got, want) = (run(case), expected(case));
        if got != want {
            wrong.push(format!(
                "{name}: the evaluator gives {got:?}, the vector says {want:?}"
            ));
        }
    }
    for op in ["match", "query", "update", "upsert"] {
        assert!(
            cases.iter().any(|c| c["op"] == op),
            "no '{op}' case in {VECTORS}"
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
