//! A grading step with a typed input: `count_words` reads its step document into `CountInput` (serde)
//! and scores whether the text has at least `min_words` words, into
//! `metadata.verifications[<verifier_id>]`, which is how a run scores a task.
//!
//! A task step that uses it: `{"id": "length", "type": "count_words", "text": "…", "min_words": 3,
//! "verifier_id": "length"}`.

use agent_env_plugin_sdk::{
    json, ExecuteResult, Map, Plugin, StepContext, StepError, TypedStep, Value,
};
use serde::Deserialize;

/// The fields of a `count_words` step this plugin reads; the others (`id`, `type`, ...) are ignored.
#[derive(Deserialize)]
struct CountInput {
    text: String,
    #[serde(default = "at_least_one")]
    min_words: usize,
    verifier_id: Option<String>,
}

fn at_least_one() -> usize {
    1
}

struct CountWords;

impl TypedStep for CountWords {
    type Input = CountInput;

    fn type_name(&self) -> &str {
        "count_words"
    }

    fn class(&self) -> &str {
        "CountWords"
    }

    fn description(&self) -> Option<&str> {
        Some("Scores whether a text has at least min_words words")
    }

    fn execute(
        &self,
        _ctx: &StepContext<'_>,
        input: CountInput,
        _context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        let words = input.text.split_whitespace().count();
        let score = if words >= input.min_words { 1.0 } else { 0.0 };
        let verifier = input.verifier_id.unwrap_or_else(|| "count_words".into());
        let mut metadata = Map::new();
        metadata.insert(
            "verifications".into(),
            json!({ verifier: {"score": score, "results": [{"words": words, "min_words": input.min_words}]} }),
        );
        Ok(ExecuteResult { metadata })
    }
}

fn main() {
    Plugin::new("agentenv-count-words", "0.1.0")
        .typed_step(CountWords)
        .serve()
}
