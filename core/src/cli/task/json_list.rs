//! The `--json` document of `task list` and `task instances`, written as its instances are read:
//! `{"format_version": 1, "instances": [...], "warnings": [...]}` in the very bytes
//! `serde_json::to_string_pretty` makes of the whole document, without holding it. What is written
//! goes out in pieces of about [`PIECE`] bytes, each ending after an instance, so a secret a value
//! holds is never split between two writes (each write is masked on its own).

use serde_json::Value;

use super::pretty;

/// About how many bytes are gathered before they are written.
const PIECE: usize = 64 * 1024;

/// A document being written to `out`.
pub(super) struct JsonList<'o> {
    out: &'o dyn Fn(&str),
    /// Gathered, not yet written.
    piece: String,
    instances: usize,
}

impl<'o> JsonList<'o> {
    /// Begins the document: nothing is written until an instance fills a piece, or [`JsonList::end`].
    pub(super) fn start(out: &'o dyn Fn(&str)) -> Self {
        JsonList {
            out,
            piece: String::from("{\n  \"format_version\": 1,\n  \"instances\": ["),
            instances: 0,
        }
    }

    /// Adds one instance to the list.
    pub(super) fn instance(&mut self, instance: &Value) {
        self.piece
            .push_str(if self.instances == 0 { "\n" } else { ",\n" });
        self.piece.push_str(&nested(&pretty(instance), "    "));
        self.instances += 1;
        if self.piece.len() >= PIECE {
            (self.out)(&std::mem::take(&mut self.piece));
        }
    }

    /// Ends the list and the document, with `warnings` when there are some, and writes what is left.
    pub(super) fn end(mut self, warnings: &[String]) {
        self.piece
            .push_str(if self.instances == 0 { "]" } else { "\n  ]" });
        if !warnings.is_empty() {
            let listed = Value::from(warnings.to_vec());
            self.piece.push_str(",\n  \"warnings\": ");
            self.piece.push_str(&pretty(&listed).replace('\n', "\n  "));
        }
        self.piece.push_str("\n}\n");
        (self.out)(&self.piece);
    }
}

/// `text`, pretty-printed JSON, with every line indented by `indent`: as it reads inside a list.
/// Pretty JSON holds a new line only between its tokens (one inside a string is written `\n`).
fn nested(text: &str, indent: &str) -> String {
    format!("{indent}{}", text.replace('\n', &format!("\n{indent}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::cell::RefCell;

    /// What the writer writes for `instances` and `warnings`, in the pieces it wrote.
    fn written(instances: &[Value], warnings: &[String]) -> Vec<String> {
        let pieces = RefCell::new(Vec::new());
        let out = |text: &str| pieces.borrow_mut().push(text.to_string());
        let mut list = JsonList::start(&out);
        for instance in instances {
            list.instance(instance);
        }
        list.end(warnings);
        pieces.into_inner()
    }

    /// The bytes are those of the whole document pretty-printed at once, as the list printed it
    /// before it was written as read: with no instance, with warnings, with nested values.
    #[test]
    fn the_document_is_the_whole_one_pretty_printed() {
        let instance = |n: u32| {
            json!({"instance_id": format!("@local/b/t-{n}"), "task_id": "@local/b/t", "task_version": 1,
                "status": "completed", "stale": false, "end_waiting_here": false, "heartbeat_at_utc": null,
                "scores": {"check": 1.0, "other": 0.5}, "started_at_utc": "2026-01-01T00:00:00.000000Z",
                "completed_at_utc": null, "ended_at_utc": "x", "run_group_id": "run-\"quoted\"\nline"})
        };
        let empty_scores =
            json!({"instance_id": "i", "scores": {}, "list": [], "nested": {"a": [1, {"b": []}]}});
        let cases: Vec<(Vec<Value>, Vec<String>)> = vec![
            (vec![], vec![]),
            (
                vec![],
                vec!["None of the 3 recorded task instances matches --task x; …".into()],
            ),
            (vec![instance(1)], vec![]),
            (
                vec![instance(1), empty_scores, instance(2)],
                vec!["one".into(), "two\nlines".into()],
            ),
        ];
        for (instances, warnings) in cases {
            let mut whole = json!({"format_version": 1, "instances": instances});
            if !warnings.is_empty() {
                whole["warnings"] = json!(warnings);
            }
            let expected = format!("{}\n", pretty(&whole));
            assert_eq!(written(&instances, &warnings).concat(), expected);
        }
    }

    /// A long list is written in pieces as it goes, each ending after an instance.
    #[test]
    fn a_long_list_is_written_in_pieces_that_end_after_an_instance() {
        let instances: Vec<Value> = (0..2000)
            .map(|n| json!({"instance_id": format!("i-{n}"), "padding": "x".repeat(100)}))
            .collect();
        let pieces = written(&instances, &[]);
        assert!(pieces.len() > 3, "{}", pieces.len());
        for piece in &pieces[..pieces.len() - 1] {
            assert!(piece.len() < 2 * PIECE, "{}", piece.len());
            assert!(piece.ends_with("    }"), "{}", &piece[piece.len() - 20..]);
        }
        let whole = json!({"format_version": 1, "instances": instances});
        assert_eq!(pieces.concat(), format!("{}\n", pretty(&whole)));
    }
}
