//! `examples/count_words.rs`: a step with a typed input, through the wire.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    dir.join("examples").join("count_words")
}

#[test]
fn a_typed_step_reads_its_document_scores_it_and_refuses_one_that_does_not_fit() {
    let mut child = Command::new(example())
        .env("AGENT_ENV_PLUGIN", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |line: Value| -> Value {
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        let mut answer = String::new();
        stdout.read_line(&mut answer).unwrap();
        serde_json::from_str(&answer).unwrap()
    };
    let init = ask(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "host": {"name": "agent-env", "version": "0.1.0"}, "protocol": {"min": 1, "max": 1},
        "package": "agentenv-count-words"}}),
    );
    let step = &init["result"]["contributions"][0];
    assert_eq!(step["type"], "count_words");
    assert_eq!(step["methods"], json!(["execute", "from_dict", "validate"]));
    let execute = |id: u32, doc: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "execute",
               "params": {"type": "count_words", "step": doc, "context": {}}})
    };
    let passed = ask(execute(
        2,
        json!({"id": "len", "type": "count_words", "text": "one two three", "min_words": 3,
               "verifier_id": "length"}),
    ));
    assert_eq!(
        passed["result"]["metadata"]["verifications"]["length"]["score"],
        1.0
    );
    let short = ask(execute(
        3,
        json!({"id": "len", "type": "count_words", "text": "one", "min_words": 3}),
    ));
    assert_eq!(
        short["result"]["metadata"]["verifications"]["count_words"]["score"],
        0.0
    );
    let wrong = ask(execute(
        4,
        json!({"id": "len", "type": "count_words", "text": ["not", "text"]}),
    ));
    assert_eq!(wrong["error"]["code"], -32020, "{wrong}");
    let message = wrong["error"]["data"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "step 'len' of type 'count_words' does not fit what the step takes: text: invalid type: sequence"
        ),
        "{message}"
    );
    let planned = ask(
        json!({"jsonrpc": "2.0", "id": 5, "method": "task_step.validate",
        "params": {"type": "count_words", "step": {"id": "len", "type": "count_words"}}}),
    );
    assert!(
        planned["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing field `text`"),
        "{planned}"
    );
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
