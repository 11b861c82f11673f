//! A task file's JSON, read so that a key given twice in one object (a copy-paste leftover, whose
//! first value a plain reader drops without a word) is refused rather than read as its last value.

use std::cell::RefCell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Why a task file's text is not a task's JSON.
#[derive(Debug, thiserror::Error)]
pub enum TaskJsonError {
    #[error("{0}")]
    Invalid(serde_json::Error),
    #[error("has the key '{key}' twice in one object (line {line}), and only the last would be read: keep the one you mean")]
    DuplicateKey { key: String, line: usize },
}

/// The JSON value of `text`, refusing an object that gives one key twice.
pub fn parse(text: &[u8]) -> Result<Value, TaskJsonError> {
    let duplicate = RefCell::new(None);
    let mut reader = serde_json::Deserializer::from_slice(text);
    let parsed = UniqueKeys {
        duplicate: &duplicate,
    }
    .deserialize(&mut reader)
    .and_then(|value| reader.end().map(|()| value));
    match (parsed, duplicate.into_inner()) {
        (Err(e), Some(key)) => Err(TaskJsonError::DuplicateKey {
            key,
            line: e.line(),
        }),
        (Err(e), None) => Err(TaskJsonError::Invalid(e)),
        (Ok(value), _) => Ok(value),
    }
}

/// Reads one JSON value as [`Value`] does, and notes in `duplicate` the first key an object gives
/// twice (the reader's error then says where).
#[derive(Clone, Copy)]
struct UniqueKeys<'a> {
    duplicate: &'a RefCell<Option<String>>,
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
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                let message = format!("duplicate key '{key}'");
                self.duplicate.replace(Some(key));
                return Err(serde::de::Error::custom(message));
            }
            let value = map.next_value_seed(self)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_is_refused_with_its_line() {
        let text = "[{\"id\": \"v\",\n \"criteria\": [1],\n \"criteria\": []}]";
        match parse(text.as_bytes()) {
            Err(TaskJsonError::DuplicateKey { key, line }) => {
                assert_eq!((key.as_str(), line), ("criteria", 3));
            }
            other => panic!("{other:?}"),
        }
        // In a nested object too; one key in two objects is no duplicate.
        assert!(matches!(
            parse(br#"[{"a": {"x": 1, "x": 2}}]"#),
            Err(TaskJsonError::DuplicateKey { .. })
        ));
        let value = parse(br#"[{"x": 1, "y": [true, null, -2, 2.5, "s"]}, {"x": 2}]"#).unwrap();
        assert_eq!(
            value,
            serde_json::json!([{"x": 1, "y": [true, null, -2, 2.5, "s"]}, {"x": 2}])
        );
    }

    #[test]
    fn text_that_is_not_json_says_what_a_json_reader_says() {
        let e = parse(b"[1,").unwrap_err();
        assert!(matches!(e, TaskJsonError::Invalid(_)), "{e:?}");
        assert!(parse(b"[] x").is_err());
    }
}
