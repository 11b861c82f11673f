//! The `<key>` tokens a task's steps hold, which a run's seed fills in (core's `substitute_seed`
//! replaces `<key>` in every string of a step but its `id` and `type`): so a seed naming a token no
//! step has, which would run the task exactly as unseeded, is refused with the tokens it does have.

use std::collections::BTreeSet;

use agent_env::run::plan::seed_tokens::tokens_of_steps;
use serde_json::{Map, Value};

/// Every `<name>` token in the strings of `steps`, in the fields a seed fills in: core's finder, the
/// one a run's note on unfilled tokens uses.
pub fn tokens(steps: &[Map<String, Value>]) -> BTreeSet<String> {
    tokens_of_steps(steps)
}

/// The keys of `seed` that name no token of `steps`, in the seed's order.
pub fn unused<'a>(seed: &'a Map<String, Value>, steps: &[Map<String, Value>]) -> Vec<&'a str> {
    let have = tokens(steps);
    seed.keys()
        .filter(|key| !have.contains(key.as_str()))
        .map(String::as_str)
        .collect()
}

/// What a refused seed value is told: a seed value is text, put in place of its token.
pub const NOT_TEXT: &str = "a seed value is the text put in place of its token: a string, or a whole number or true/false, which is put in as written; not null, a list, an object, or a number with a fraction or an exponent, which would not be put in as written (send it as a string: \"1.50\")";

/// The keys of `seed` whose values are no text a token could take, in the seed's order: null, a
/// list, an object, and a number that is not a whole one JSON writes back as sent (`1.50` would be
/// put in as `1.5`, `1e2` as `100.0`, a whole number past 64 bits rounded). A whole number or a
/// boolean is its text as JSON writes it (`5`, `-3`, `true`).
pub fn not_text(seed: &Map<String, Value>) -> Vec<&str> {
    seed.iter()
        .filter(|(_, value)| match value {
            Value::Null | Value::Array(_) | Value::Object(_) => true,
            Value::Number(n) => !(n.is_i64() || n.is_u64()),
            Value::String(_) | Value::Bool(_) => false,
        })
        .map(|(key, _)| key.as_str())
        .collect()
}

/// The sentence for a seed key no step has a token of, naming the tokens the steps do have.
pub fn refusal(unused: &str, steps: &[Map<String, Value>]) -> String {
    let have: Vec<String> = tokens(steps).iter().map(|t| format!("<{t}>")).collect();
    let takes = if have.is_empty() {
        "its steps have no <key> tokens, so it takes no seed".to_string()
    } else {
        format!("its steps' tokens are {}", have.join(", "))
    };
    format!(
        "no step of the task has the token <{unused}>, so its value would change nothing; {takes}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn steps(v: Value) -> Vec<Map<String, Value>> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_tokens_are_those_of_the_fields_a_seed_fills_in() {
        let s = steps(json!([
            {"id": "<not-this>", "type": "bash", "cmd": "echo <who> <<both>> a < b > c",
             "env": {"X": ["<deep>"]}},
            {"id": "two", "note": "<who>"}
        ]));
        let found: Vec<String> = tokens(&s).into_iter().collect();
        assert_eq!(found, ["both", "deep", "who"]);
    }

    #[test]
    fn a_seed_key_no_step_has_is_named_with_the_tokens_there_are() {
        let s = steps(json!([{"id": "a", "cmd": "echo <who>"}]));
        let seed: Map<String, Value> =
            serde_json::from_value(json!({"who": "ann", "whoo": "x"})).unwrap();
        let bad = unused(&seed, &s);
        assert_eq!(bad, ["whoo"]);
        assert_eq!(
            refusal("whoo", &s),
            "no step of the task has the token <whoo>, so its value would change nothing; its steps' tokens are <who>"
        );
        let none = steps(json!([{"id": "a", "cmd": "true"}]));
        assert_eq!(
            refusal("a", &none),
            "no step of the task has the token <a>, so its value would change nothing; its steps have no <key> tokens, so it takes no seed"
        );
    }
}
