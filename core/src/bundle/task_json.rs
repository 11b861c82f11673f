//! A task file's JSON, read so that a key given twice in one object (a copy-paste leftover, whose
//! first value a plain reader drops without a word) is found rather than read as its last value:
//! [`parse_all`] finds every such key, with where it is, for a bundle run and `task put` to say
//! each one ([`DuplicateKey::describe`]).

use std::cell::{Cell, RefCell};
use std::fmt;
use std::io::Read;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// A task file's JSON value (a key given twice read as its last value, as any JSON reader does),
/// with every key some object of it gives twice.
#[derive(Debug)]
pub struct TaskJson {
    pub value: Value,
    /// In the order they are written.
    pub duplicates: Vec<DuplicateKey>,
}

/// A key given a second time in one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    pub key: String,
    /// Where the second one starts: its line and its column (in characters), both from 1.
    pub line: usize,
    pub column: usize,
    /// The object's place in the document: the keys and indexes (from 0) that lead to it.
    pub within: Vec<Segment>,
}

/// One step of the way from a document's top to a value in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

impl DuplicateKey {
    /// What a task file's problem says of it, `value` being the file's JSON: the step it is in
    /// (by its number, counted from 1, and its id) and its line and column, since a task file is
    /// often one line.
    pub fn describe(&self, value: &Value) -> String {
        let (key, at) = (
            &self.key,
            format!("line {}, column {}", self.line, self.column),
        );
        let read = "and only the last would be read: keep the one you mean";
        // The steps are the document itself, or its "steps".
        let step_at = match (value, self.within.as_slice()) {
            (Value::Array(_), [Segment::Index(i), rest @ ..]) => Some((value.get(i), *i, rest)),
            (Value::Object(doc), [Segment::Key(k), Segment::Index(i), rest @ ..])
                if k == "steps" =>
            {
                Some((doc.get("steps").and_then(|s| s.get(i)), *i, rest))
            }
            _ => None,
        };
        let Some((step, index, rest)) = step_at else {
            return format!("has the key '{key}' twice in one object ({at}), {read}");
        };
        let step = match step.and_then(|s| s.get("id")).and_then(Value::as_str) {
            Some(id) => format!("step {} ('{id}')", index + 1),
            None => format!("step {}", index + 1),
        };
        match rest.first() {
            None => format!("{step} has the key '{key}' twice ({at}), {read}"),
            Some(Segment::Key(field)) => format!(
                "{step} has the key '{key}' twice in one object of its '{field}' ({at}), {read}"
            ),
            Some(Segment::Index(_)) => {
                format!("{step} has the key '{key}' twice in one object ({at}), {read}")
            }
        }
    }
}

/// The JSON value of `text`, with every key an object of it gives twice.
pub fn parse_all(text: &[u8]) -> Result<TaskJson, serde_json::Error> {
    let read = Cell::new(0);
    let found = Found {
        text,
        read: &read,
        within: RefCell::new(Vec::new()),
        duplicates: RefCell::new(Vec::new()),
    };
    // Read through a counter, so that where a key ends is known when it is found twice.
    let mut reader = serde_json::Deserializer::from_reader(Counted { text, read: &read });
    let value = UniqueKeys { found: &found }.deserialize(&mut reader)?;
    reader.end()?;
    Ok(TaskJson {
        value,
        duplicates: found.duplicates.into_inner(),
    })
}

/// What a task file's problem says of `text`, which does not parse as JSON with `error`: that it is
/// empty, or holds a comment (which JSON has no room for), else what the JSON reader says.
pub fn why_not_json(error: &serde_json::Error, text: &[u8]) -> String {
    if text.iter().all(u8::is_ascii_whitespace) {
        return "is empty: a task file holds its steps, as a JSON array of step objects ([{\"id\": …, \"type\": …}, …]) or an object with a \"steps\" array".to_string();
    }
    let line = error.line();
    if let Some(column) = comment_at(text, line, error.column()) {
        return format!(
            "isn't valid JSON: JSON allows no comments, and one starts at line {line}, column {column}: remove it"
        );
    }
    format!("isn't valid JSON: {error}")
}

/// The column (in characters, from 1) where a comment (`//` or `/*`) starts, when one starts where
/// the JSON reader stopped: line `line`, at or just before byte `column` of it (both from 1).
fn comment_at(text: &[u8], line: usize, column: usize) -> Option<usize> {
    let this_line = text.split(|b| *b == b'\n').nth(line.saturating_sub(1))?;
    let start = [column.saturating_sub(1), column.saturating_sub(2)]
        .into_iter()
        .find(|at| {
            this_line
                .get(*at..)
                .is_some_and(|rest| rest.starts_with(b"//") || rest.starts_with(b"/*"))
        })?;
    Some(1 + String::from_utf8_lossy(&this_line[..start]).chars().count())
}

/// `text` read as a reader, counting the bytes read.
struct Counted<'a> {
    text: &'a [u8],
    read: &'a Cell<usize>,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let at = self.read.get();
        let rest = self.text.get(at..).unwrap_or_default();
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.read.set(at + n);
        Ok(n)
    }
}

/// What reading a document finds: the keys given twice, and where reading is.
struct Found<'a> {
    text: &'a [u8],
    /// How many bytes of `text` were read.
    read: &'a Cell<usize>,
    /// The way to the value being read.
    within: RefCell<Vec<Segment>>,
    duplicates: RefCell<Vec<DuplicateKey>>,
}

impl Found<'_> {
    /// Notes `key`, just read (its closing quote the last byte read), as given twice.
    fn duplicate(&self, key: &str) {
        let start = key_start(self.text, self.read.get());
        let before = &self.text[..start];
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |at| at + 1);
        self.duplicates.borrow_mut().push(DuplicateKey {
            key: key.to_string(),
            line: 1 + before.iter().filter(|b| **b == b'\n').count(),
            column: 1 + String::from_utf8_lossy(&before[line_start..])
                .chars()
                .count(),
            within: self.within.borrow().clone(),
        });
    }
}

/// Where the string whose closing quote ends at `end` (the byte after it) opens: its opening
/// quote, the last unescaped one before the closing one.
fn key_start(text: &[u8], end: usize) -> usize {
    let closing = end.saturating_sub(1).min(text.len());
    let mut at = closing;
    while at > 0 {
        at -= 1;
        if text[at] == b'"' {
            let backslashes = text[..at].iter().rev().take_while(|b| **b == b'\\').count();
            if backslashes % 2 == 0 {
                return at;
            }
        }
    }
    0
}

/// Reads one JSON value as [`Value`] does, and notes in `found` each key an object gives twice.
#[derive(Clone, Copy)]
struct UniqueKeys<'a> {
    found: &'a Found<'a>,
}

impl<'de> DeserializeSeed<'de> for UniqueKeys<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            self.found
                .within
                .borrow_mut()
                .push(Segment::Index(items.len()));
            let item = seq.next_element_seed(self);
            self.found.within.borrow_mut().pop();
            match item? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                self.found.duplicate(&key);
            }
            self.found
                .within
                .borrow_mut()
                .push(Segment::Key(key.clone()));
            let value = map.next_value_seed(self);
            self.found.within.borrow_mut().pop();
            object.insert(key, value?);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_is_found_with_its_line() {
        let text = "[{\"id\": \"v\",\n \"criteria\": [1],\n \"criteria\": []}]";
        let found = parse_all(text.as_bytes()).unwrap().duplicates;
        let found: Vec<(&str, usize)> = found.iter().map(|d| (d.key.as_str(), d.line)).collect();
        assert_eq!(found, [("criteria", 3)]);
        // In a nested object too; one key in two objects is no duplicate.
        assert_eq!(
            parse_all(br#"[{"a": {"x": 1, "x": 2}}]"#)
                .unwrap()
                .duplicates
                .len(),
            1
        );
        let parsed =
            parse_all(br#"[{"x": 1, "y": [true, null, -2, 2.5, "s"]}, {"x": 2}]"#).unwrap();
        assert!(parsed.duplicates.is_empty());
        assert_eq!(
            parsed.value,
            serde_json::json!([{"x": 1, "y": [true, null, -2, 2.5, "s"]}, {"x": 2}])
        );
    }

    #[test]
    fn every_key_given_twice_is_found_with_its_line_column_and_step() {
        let text = "[{\"id\": \"a\", \"x\": 1, \"x\": 2, \"y\": 1, \"y\": 2},\n {\"id\": \"v\", \"criteria\": [{\"p\": 1, \"p\\\"\": 1, \"p\": 3}]}]";
        let parsed = parse_all(text.as_bytes()).unwrap();
        let found: Vec<(&str, usize, usize)> = parsed
            .duplicates
            .iter()
            .map(|d| (d.key.as_str(), d.line, d.column))
            .collect();
        assert_eq!(found, [("x", 1, 22), ("y", 1, 38), ("p", 2, 46)]);
        // The last value is read, as any JSON reader does.
        assert_eq!(parsed.value[0]["x"], 2);
        let said: Vec<String> = parsed
            .duplicates
            .iter()
            .map(|d| d.describe(&parsed.value))
            .collect();
        assert_eq!(
            said[0],
            "step 1 ('a') has the key 'x' twice (line 1, column 22), and only the last would be read: keep the one you mean"
        );
        assert_eq!(
            said[2],
            "step 2 ('v') has the key 'p' twice in one object of its 'criteria' (line 2, column 46), and only the last would be read: keep the one you mean"
        );
        // In the {"steps": [...]} form, and outside any step.
        let parsed =
            parse_all(br#"{"steps": [{"type": 1, "type": 2}], "name": 1, "name": 2}"#).unwrap();
        let said: Vec<String> = parsed
            .duplicates
            .iter()
            .map(|d| d.describe(&parsed.value))
            .collect();
        assert_eq!(
            said,
            [
                "step 1 has the key 'type' twice (line 1, column 24), and only the last would be read: keep the one you mean",
                "has the key 'name' twice in one object (line 1, column 48), and only the last would be read: keep the one you mean"
            ]
        );
    }

    #[test]
    fn an_empty_file_and_a_comment_are_said_as_such() {
        let said =
            |text: &str| why_not_json(&parse_all(text.as_bytes()).unwrap_err(), text.as_bytes());
        assert!(said(" \n").starts_with("is empty: a task file holds its steps"));
        for (text, at) in [
            ("[\n// a step\n]", "line 2, column 1"),
            ("[\n  /* a step */\n]", "line 2, column 3"),
            ("[{\"id\": \"a\"} // a step\n]", "line 1, column 14"),
            ("[{\"id\": \"é\"},\n /*\n*/]", "line 2, column 2"),
        ] {
            let said = said(text);
            assert!(
                said.starts_with("isn't valid JSON: JSON allows no comments, and one starts at ")
                    && said.contains(at),
                "{text}: {said}"
            );
        }
        assert_eq!(
            said("[1,"),
            "isn't valid JSON: EOF while parsing a value at line 1 column 3"
        );
    }

    #[test]
    fn text_that_is_not_json_says_what_a_json_reader_says() {
        assert!(parse_all(b"[1,").is_err());
        assert!(parse_all(b"[] x").is_err());
    }
}
