//! Reading nodes of the document: type names as the reference spells them, tables by dotted path, TOML key
//! spelling, and a Python-like rendering of a value for messages that quote a table.

use super::error::ConfigError;
use toml::{Table, Value};

/// The reference's name for a value's type (`int`, `str`, `float`, `bool`, `list`, `dict`, `datetime`).
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "str",
        Value::Integer(_) => "int",
        Value::Float(_) => "float",
        Value::Boolean(_) => "bool",
        Value::Datetime(_) => "datetime",
        Value::Array(_) => "list",
        Value::Table(_) => "dict",
    }
}

/// The table at `path` (segments from the top), or `None` when any segment is absent. A present node that is
/// not a table is `config.toml [a.b] must be a table, got int`.
pub fn table_at<'a>(root: &'a Table, path: &[&str]) -> Result<Option<&'a Table>, ConfigError> {
    let mut current = root;
    for (depth, segment) in path.iter().enumerate() {
        match current.get(*segment) {
            None => return Ok(None),
            Some(Value::Table(t)) => current = t,
            Some(other) => {
                return Err(ConfigError::NotATable {
                    path: dotted(&path[..=depth]),
                    got: type_name(other),
                })
            }
        }
    }
    Ok(Some(current))
}

/// A key as TOML writes it: bare when it is made of `A-Za-z0-9_-`, quoted otherwise.
pub fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_string()
    } else {
        let mut out = String::from("\"");
        for c in key.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }
}

/// Segments joined as a TOML path, each spelled with [`toml_key`].
pub fn dotted(segments: &[&str]) -> String {
    segments
        .iter()
        .map(|s| toml_key(s))
        .collect::<Vec<_>>()
        .join(".")
}

/// A table's keys and values as TOML writes them inline, for a message that quotes what a table
/// holds: `type = "nope", config = { root = "/x" }`; `nothing` for an empty one.
pub fn toml_keys(table: &Table) -> String {
    if table.is_empty() {
        return "nothing".to_string();
    }
    table
        .iter()
        .map(|(k, v)| format!("{} = {}", toml_key(k), toml_inline(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn toml_inline(value: &Value) -> String {
    match value {
        Value::Table(t) if t.is_empty() => "{}".to_string(),
        Value::Table(t) => format!("{{ {} }}", toml_keys(t)),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_inline).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

/// A value written the way Python's `repr` writes the equivalent dict/list/str, for messages that quote a
/// whole table (`Store section is missing an 'impl' dotted path: {'config': {'root': '/x'}}`).
pub fn py_repr(value: &Value) -> String {
    match value {
        Value::String(s) => py_str(s),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => py_float(*f),
        Value::Boolean(b) => if *b { "True" } else { "False" }.to_string(),
        Value::Datetime(d) => py_str(&d.to_string()),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(py_repr).collect::<Vec<_>>().join(", ")
        ),
        Value::Table(t) => py_repr_table(t),
    }
}

/// A table as Python's `repr` writes a dict.
pub fn py_repr_table(table: &Table) -> String {
    format!(
        "{{{}}}",
        table
            .iter()
            .map(|(k, v)| format!("{}: {}", py_str(k), py_repr(v)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `items` as Python's `repr` writes a list of strings: `['a', 'b']`.
pub fn py_list<S: AsRef<str>>(items: &[S]) -> String {
    let items: Vec<String> = items.iter().map(|s| py_str(s.as_ref())).collect();
    format!("[{}]", items.join(", "))
}

/// `s` as Python's `repr` writes a string: single quotes unless it holds one and no double quote.
pub fn py_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::new();
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

fn py_float(f: f64) -> String {
    if f.is_nan() {
        "nan".to_string()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.to_string()
    } else if f.fract() == 0.0 && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        f.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tables_keys_are_quoted_as_toml_writes_them() {
        let t: Table =
            toml::from_str("type = 'nope'\nconfig = { root = '/x', n = [1, 2] }\n\"a b\" = true")
                .unwrap();
        assert_eq!(
            toml_keys(&t),
            r#"type = "nope", config = { root = "/x", n = [1, 2] }, "a b" = true"#
        );
        assert_eq!(toml_keys(&Table::new()), "nothing");
    }

    #[test]
    fn table_at_names_the_first_non_table() {
        let t: Table = toml::from_str("stores = 'x'\n[a]\nb = 5").unwrap();
        assert_eq!(
            table_at(&t, &["stores", "object"]).unwrap_err().to_string(),
            "config.toml [stores] must be a table, got str"
        );
        assert_eq!(
            table_at(&t, &["a", "b"]).unwrap_err().to_string(),
            "config.toml [a.b] must be a table, got int"
        );
        assert!(table_at(&t, &["nope", "x"]).unwrap().is_none());
    }

    #[test]
    fn keys_are_quoted_only_when_toml_needs_it() {
        assert_eq!(toml_key("acme_browser"), "acme_browser");
        assert_eq!(toml_key("acme.browser"), "\"acme.browser\"");
    }

    #[test]
    fn repr_looks_like_python() {
        let t: Table = toml::from_str("config = { root = '/x', n = 1.0, ok = true }").unwrap();
        assert_eq!(
            py_repr_table(&t),
            "{'config': {'root': '/x', 'n': 1.0, 'ok': True}}"
        );
    }
}
