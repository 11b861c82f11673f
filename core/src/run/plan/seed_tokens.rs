//! The `<key>` tokens a step holds, which a run's seed fills in ([`super::substitute_seed`] replaces
//! `<key>` in every string of a step but its `id` and `type`). Only a run the explorer starts with a
//! seed has one: any other run runs a step's tokens as written (`echo <who> > who.txt` is then a
//! redirection bash refuses), so [`unfilled_note`] says which tokens a run leaves so, before it
//! runs. What is no token stays unsaid: `a <b` and `<<EOF` are a shell's, not a seed's.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::bundle::step_fields::step_id;

/// Every `<name>` token in the strings of `step`, in the fields a seed fills in (every one but `id`
/// and `type`): a name is one or more characters, none of them `<`, `>` or white space.
pub fn tokens(step: &Map<String, Value>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (key, value) in step {
        if key != "id" && key != "type" {
            collect(value, &mut found);
        }
    }
    found
}

/// Every token of `steps`, as [`tokens`] finds them in each.
pub fn tokens_of_steps(steps: &[Map<String, Value>]) -> BTreeSet<String> {
    steps.iter().flat_map(tokens).collect()
}

/// The sentence for the tokens of `step` that `seed` (the run's, when it has one) does not fill:
/// the step runs with them as written. `None` when it fills every one, or the step has none.
pub fn unfilled_note(
    step: &Map<String, Value>,
    seed: Option<&Map<String, Value>>,
) -> Option<String> {
    let unfilled: Vec<String> = tokens(step)
        .into_iter()
        .filter(|token| !seed.is_some_and(|seed| seed.contains_key(token)))
        .map(|token| format!("<{token}>"))
        .collect();
    let (last, first) = unfilled.split_last()?;
    let (named, them, are) = match first.is_empty() {
        true => (last.clone(), "it", "is a seed token"),
        false => (
            format!("{} and {last}", first.join(", ")),
            "them",
            "are seed tokens",
        ),
    };
    let filled_by = match seed {
        Some(_) => format!("this run's seed has no value for {them}"),
        None => format!("this run has no seed to fill {them}"),
    };
    Some(format!(
        "step '{}': {named} {are}, and {filled_by}, so the step runs with {them} as written; only a run started from the explorer with a seed fills a step's <key> tokens",
        step_id(step)
    ))
}

fn collect(value: &Value, found: &mut BTreeSet<String>) {
    match value {
        Value::String(text) => {
            for (start, _) in text.match_indices('<') {
                let rest = &text[start + 1..];
                let Some(end) = rest.find(['<', '>']) else {
                    continue;
                };
                let name = &rest[..end];
                if rest[end..].starts_with('>')
                    && !name.is_empty()
                    && !name.chars().any(char::is_whitespace)
                {
                    found.insert(name.to_string());
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect(i, found)),
        Value::Object(map) => map.values().for_each(|v| collect(v, found)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(v: Value) -> Map<String, Value> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_tokens_are_those_of_the_fields_a_seed_fills_in() {
        let s = step(json!(
            {"id": "<not-this>", "type": "bash", "cmd": "echo <who> <<both>> a < b > c <<EOF",
             "env": {"X": ["<deep>"]}}
        ));
        let found: Vec<String> = tokens(&s).into_iter().collect();
        assert_eq!(found, ["both", "deep", "who"]);
    }

    #[test]
    fn a_step_with_shell_redirections_only_has_no_note() {
        let s = step(json!({"id": "c", "command": "sort <in.txt > out; cat <<EOF\nx\nEOF"}));
        assert_eq!(unfilled_note(&s, None), None);
    }

    #[test]
    fn the_tokens_no_seed_fills_are_named_with_their_step() {
        let s = step(json!({"id": "greet", "command": "echo <who> <where> > who.txt"}));
        assert_eq!(
            unfilled_note(&s, None).unwrap(),
            "step 'greet': <where> and <who> are seed tokens, and this run has no seed to fill them, so the step runs with them as written; only a run started from the explorer with a seed fills a step's <key> tokens"
        );
        let seed = step(json!({"who": "ann"}));
        assert_eq!(
            unfilled_note(&s, Some(&seed)).unwrap(),
            "step 'greet': <where> is a seed token, and this run's seed has no value for it, so the step runs with it as written; only a run started from the explorer with a seed fills a step's <key> tokens"
        );
        let seed = step(json!({"who": "ann", "where": "here"}));
        assert_eq!(unfilled_note(&s, Some(&seed)), None);
    }
}
