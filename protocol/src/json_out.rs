//! Compact JSON output for messages, with a string escaper that scans 32 bytes at a time.
//!
//! serde_json escapes strings byte by byte; for the large base64 or text payloads that cross the
//! pipe this was the top cost of a 16 MiB call (`agent-env-bench host`, perf). The output is the same
//! compact JSON serde_json writes (same escapes), so either side can read it with any JSON parser.

use serde_json::Value;

#[inline]
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// The index of the first byte that needs escaping.
fn find_escape(bytes: &[u8]) -> Option<usize> {
    const LANES: usize = 32;
    let mut at = 0;
    while at + LANES <= bytes.len() {
        let chunk = &bytes[at..at + LANES];
        // No early exit inside the chunk, so the compiler can vectorise the test.
        let any = chunk.iter().fold(false, |acc, &b| acc | needs_escape(b));
        if any {
            return chunk.iter().position(|&b| needs_escape(b)).map(|i| at + i);
        }
        at += LANES;
    }
    bytes[at..]
        .iter()
        .position(|&b| needs_escape(b))
        .map(|i| at + i)
}

/// Appends `s` as a JSON string.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let mut rest = s.as_bytes();
    while let Some(i) = find_escape(rest) {
        out.extend_from_slice(&rest[..i]);
        let b = rest[i];
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(b >> 4) as usize],
                HEX[(b & 0xf) as usize],
            ]),
        }
        rest = &rest[i + 1..];
    }
    out.extend_from_slice(rest);
    out.push(b'"');
}

/// Appends `value` as compact JSON.
pub fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, k);
                out.push(b':');
                write_value(out, v);
            }
            out.push(b'}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn output_matches_serde_json_exactly() {
        let long = format!(
            "{}\"{}\\{}\n",
            "a".repeat(70),
            "b".repeat(40),
            "c".repeat(33)
        );
        let cases = [
            json!(null),
            json!({"a": [1, -2, 3.5, true, false, null], "b": {"c": "d"}}),
            json!("control \u{1} \u{1f} \u{8} \u{c} \t \r \n tab"),
            json!("unicode é ✓ 𝄞"),
            json!({ "long": long }),
            json!(u64::MAX),
            json!(1e300),
        ];
        for v in cases {
            let mut ours = Vec::new();
            write_value(&mut ours, &v);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(&v).unwrap()
            );
        }
    }
}
