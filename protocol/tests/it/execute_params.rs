//! `execute`'s params with and without `timeout_ms`, the time the host gives a step: a host that
//! does not send it (one older than the field) is read as giving no limit, and the field is written
//! only when there is one, so an older plugin reading strictly sees nothing new.

use agent_env_protocol::methods::ExecuteParams;
use serde_json::{json, Map};

fn params(timeout_ms: Option<u64>) -> ExecuteParams {
    ExecuteParams {
        type_name: "grade_essay".into(),
        step: Map::from_iter([("id".to_string(), json!("grade"))]),
        context: json!({"metadata": {}}),
        timeout_ms,
    }
}

#[test]
fn a_timeout_is_written_and_read_back() {
    let written = serde_json::to_value(params(Some(5000))).unwrap();
    assert_eq!(written["timeout_ms"], json!(5000));
    let read: ExecuteParams = serde_json::from_value(written).unwrap();
    assert_eq!(read, params(Some(5000)));
}

#[test]
fn no_timeout_is_not_written_and_its_absence_reads_as_none() {
    let written = serde_json::to_value(params(None)).unwrap();
    assert!(written.get("timeout_ms").is_none(), "{written}");
    let read: ExecuteParams = serde_json::from_value(json!({
        "type": "grade_essay", "step": {"id": "grade"}, "context": {"metadata": {}}
    }))
    .unwrap();
    assert_eq!(read, params(None));
    let null: ExecuteParams = serde_json::from_value(json!({
        "type": "grade_essay", "step": {"id": "grade"}, "context": {"metadata": {}},
        "timeout_ms": null
    }))
    .unwrap();
    assert_eq!(null.timeout_ms, None);
}

#[test]
fn a_timeout_that_is_not_a_whole_number_of_milliseconds_is_refused() {
    for bad in [json!(-1), json!(1.5), json!("5000")] {
        let read = serde_json::from_value::<ExecuteParams>(json!({
            "type": "x", "step": {}, "context": {}, "timeout_ms": bad
        }));
        assert!(read.is_err(), "timeout_ms {bad} was read as {read:?}");
    }
}
