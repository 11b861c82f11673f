//! Reads a secret file written as a flat YAML mapping: `name: value` lines, `#` comments, blank lines
//! and an optional `---` document start. A value is a plain scalar (trimmed), or a single- or
//! double-quoted one (with YAML's escapes in double quotes). As the original's `str()` of what its
//! YAML loader gave: `true`/`yes`/`on` (any of YAML's spellings) read as `True`, their opposites as
//! `False`, `~`/`null`/nothing as `None`, and a number as it is written. Anything else YAML has
//! (nesting, lists, anchors, tags, multi-line or flow values) is refused, naming its line.

use std::collections::HashMap;

/// Why a file is not a flat YAML mapping: its 1-based line and what is there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct FlatYamlError {
    pub line: usize,
    pub what: String,
}

/// The name -> value mapping `text` writes (a later line for a name wins, as in the original).
pub fn read(text: &str) -> Result<HashMap<String, String>, FlatYamlError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut values = HashMap::new();
    let mut started = false;
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let refuse = |what: &str| FlatYamlError {
            line,
            what: what.to_string(),
        };
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if is_document_start(raw) {
            if started {
                return Err(refuse(
                    "a second YAML document ('---') is more than one mapping",
                ));
            }
            started = true;
            continue;
        }
        started = true;
        if raw.starts_with([' ', '\t']) {
            return Err(refuse(
                "an indented line (a nested value or a value over several lines)",
            ));
        }
        let (name, rest) = split_entry(raw).map_err(|what| refuse(&what))?;
        let value = read_value(rest).map_err(|what| refuse(&what))?;
        values.insert(name, value);
    }
    Ok(values)
}

/// `---`, alone or followed by a comment.
fn is_document_start(raw: &str) -> bool {
    raw.strip_prefix("---").is_some_and(|rest| {
        let rest = rest.trim();
        rest.is_empty() || rest.starts_with('#')
    })
}

/// The entry's name and the text after its `:`.
fn split_entry(raw: &str) -> Result<(String, &str), String> {
    match raw.chars().next() {
        Some('"') | Some('\'') => {
            let (name, after) = quoted(raw)?;
            let rest = after
                .strip_prefix(':')
                .filter(|r| r.is_empty() || r.starts_with([' ', '\t']))
                .ok_or_else(|| "a quoted name not followed by ':'".to_string())?;
            Ok((name, rest))
        }
        Some(c) if "-[{?&*!|>%@`,".contains(c) => Err(construct(c)),
        _ => {
            let colon =
                find_separator(raw).ok_or_else(|| "not a 'name: value' line".to_string())?;
            let name = raw[..colon].trim_end();
            if name.is_empty() || name.contains(" #") || name.contains("\t#") {
                return Err("not a 'name: value' line".to_string());
            }
            Ok((name.to_string(), &raw[colon + 1..]))
        }
    }
}

/// What a line starting with an indicator character is.
fn construct(c: char) -> String {
    match c {
        '-' => "a list item".to_string(),
        '[' | '{' => "a flow collection ('[' or '{')".to_string(),
        '&' | '*' => "an anchor or alias".to_string(),
        '!' => "a tag".to_string(),
        '|' | '>' => "a block scalar (a value over several lines)".to_string(),
        '?' => "a complex key ('?')".to_string(),
        _ => format!("a line starting with '{c}'"),
    }
}

/// The byte index of the first `:` followed by a space, a tab or the line's end.
fn find_separator(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().find_map(|(i, b)| {
        (*b == b':' && matches!(bytes.get(i + 1), None | Some(b' ') | Some(b'\t'))).then_some(i)
    })
}

/// The value after a name's `:`, stringified as the original did.
fn read_value(rest: &str) -> Result<String, String> {
    let rest = rest.trim_start();
    match rest.chars().next() {
        None | Some('#') => Ok("None".to_string()),
        Some('"') | Some('\'') => {
            let (value, after) = quoted(rest)?;
            let after = after.trim_start();
            if after.is_empty() || after.starts_with('#') {
                Ok(value)
            } else {
                Err("text after a quoted value".to_string())
            }
        }
        Some(c) if "[{&*!|>%@`".contains(c) => Err(format!("a value that is {}", construct(c))),
        Some('-') if rest == "-" || rest.starts_with("- ") => Err("a list item".to_string()),
        Some(_) => {
            let plain = strip_comment(rest).trim_end();
            if find_separator(plain).is_some() {
                return Err("a value holding ': ' (a nested mapping; quote it)".to_string());
            }
            Ok(resolve_plain(plain))
        }
    }
}

/// A plain value without its trailing ` # comment`.
fn strip_comment(text: &str) -> &str {
    let bytes = text.as_bytes();
    let start = bytes
        .windows(2)
        .position(|w| matches!(w[0], b' ' | b'\t') && w[1] == b'#');
    start.map_or(text, |i| &text[..i])
}

/// The original's `str()` of what YAML 1.1 (its loader) makes of a plain value: booleans and null by
/// name, anything else (numbers too) as written.
fn resolve_plain(plain: &str) -> String {
    match plain {
        "~" | "null" | "Null" | "NULL" => "None".to_string(),
        "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => "True".to_string(),
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => {
            "False".to_string()
        }
        _ => plain.to_string(),
    }
}

/// A quoted scalar at the start of `text` (which starts with its quote) and the text after it; it
/// must close on its line.
fn quoted(text: &str) -> Result<(String, &str), String> {
    let mut chars = text.char_indices();
    let quote = match chars.next() {
        Some((_, q)) => q,
        None => return Err("an empty line".to_string()),
    };
    let unclosed = || "a quoted value that does not close on its line".to_string();
    let mut out = String::new();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            ('\'', '\'') => {
                if text[i + 1..].starts_with('\'') {
                    chars.next();
                    out.push('\'');
                } else {
                    return Ok((out, &text[i + 1..]));
                }
            }
            ('"', '"') => return Ok((out, &text[i + 1..])),
            ('"', '\\') => {
                let (_, e) = chars.next().ok_or_else(unclosed)?;
                out.push(escape(e, &mut chars)?);
            }
            _ => out.push(c),
        }
    }
    Err(unclosed())
}

/// The character a double-quoted `\e` escape stands for (reading `\x`, `\u` and `\U` digits).
fn escape(e: char, chars: &mut std::str::CharIndices<'_>) -> Result<char, String> {
    let simple = match e {
        '0' => Some('\0'),
        'a' => Some('\u{07}'),
        'b' => Some('\u{08}'),
        't' | '\t' => Some('\t'),
        'n' => Some('\n'),
        'v' => Some('\u{0b}'),
        'f' => Some('\u{0c}'),
        'r' => Some('\r'),
        'e' => Some('\u{1b}'),
        ' ' => Some(' '),
        '"' => Some('"'),
        '/' => Some('/'),
        '\\' => Some('\\'),
        'N' => Some('\u{85}'),
        '_' => Some('\u{a0}'),
        'L' => Some('\u{2028}'),
        'P' => Some('\u{2029}'),
        _ => None,
    };
    if let Some(c) = simple {
        return Ok(c);
    }
    let digits = match e {
        'x' => 2,
        'u' => 4,
        'U' => 8,
        _ => {
            return Err(format!(
                "an unknown escape '\\{e}' in a double-quoted value"
            ))
        }
    };
    let hex: String = chars.by_ref().take(digits).map(|(_, c)| c).collect();
    u32::from_str_radix(&hex, 16)
        .ok()
        .filter(|_| hex.len() == digits)
        .and_then(char::from_u32)
        .ok_or_else(|| format!("an escape '\\{e}{hex}' that is no character"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> HashMap<String, String> {
        read(text).expect("a flat mapping")
    }

    fn refused(text: &str) -> FlatYamlError {
        read(text).expect_err("refused")
    }

    #[test]
    fn reads_plain_values_comments_and_blank_lines() {
        let got =
            ok("# secrets\n\ntok: abc\napi_key:   s3cr3t  # the key\nurl: http://h:80/x#frag\n");
        assert_eq!(got["tok"], "abc");
        assert_eq!(got["api_key"], "s3cr3t");
        assert_eq!(got["url"], "http://h:80/x#frag");
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn takes_a_document_start_crlf_and_a_bom() {
        let got = ok("\u{feff}--- # start\r\ntok: abc\r\n");
        assert_eq!(got["tok"], "abc");
    }

    #[test]
    fn an_empty_or_comment_only_file_is_an_empty_mapping() {
        assert!(ok("").is_empty());
        assert!(ok("# nothing yet\n---\n").is_empty());
    }

    #[test]
    fn stringifies_booleans_null_and_numbers_as_the_original() {
        let got = ok("a: true\nb: no\nc: ~\nd:\ne: 5432\nf: 1.50\ng: 'true'\n");
        assert_eq!(got["a"], "True");
        assert_eq!(got["b"], "False");
        assert_eq!(got["c"], "None");
        assert_eq!(got["d"], "None");
        assert_eq!(got["e"], "5432");
        assert_eq!(got["f"], "1.50");
        assert_eq!(got["g"], "true");
    }

    #[test]
    fn reads_quoted_values_and_names() {
        let got = ok(concat!(
            "s: 'it''s # not a comment'\n",
            "d: \"tab\\there \\\"q\\\" \\u00e9\\x41\\\\\"  # comment\n",
            "\"quoted name\": v\n",
            "'single': ''\n",
        ));
        assert_eq!(got["s"], "it's # not a comment");
        assert_eq!(got["d"], "tab\there \"q\" éA\\");
        assert_eq!(got["quoted name"], "v");
        assert_eq!(got["single"], "");
    }

    #[test]
    fn a_later_line_for_a_name_wins() {
        assert_eq!(ok("tok: a\ntok: b\n")["tok"], "b");
    }

    #[test]
    fn refuses_nesting_naming_the_line() {
        let e = refused("tok: a\ndb:\n  password: x\n");
        assert_eq!(e.line, 3);
        assert!(e.what.contains("indented"), "{e}");
    }

    #[test]
    fn refuses_lists_anchors_flow_and_block_values() {
        assert!(refused("- a\n").what.contains("list item"));
        assert!(refused("a: [1, 2]\n").what.contains("flow"));
        assert!(refused("a: {b: 1}\n").what.contains("flow"));
        assert!(refused("{a: 1}\n").what.contains("flow"));
        assert!(refused("a: &x v\n").what.contains("anchor"));
        assert!(refused("a: *x\n").what.contains("alias"));
        assert!(refused("a: !!str v\n").what.contains("tag"));
        assert!(refused("a: |\n  x\n").what.contains("block scalar"));
        assert!(refused("a: >\n").what.contains("several lines"));
    }

    #[test]
    fn refuses_what_is_not_a_name_value_line() {
        assert_eq!(refused("tok: a\njust text\n").line, 2);
        assert!(refused("a: b: c\n").what.contains("': '"));
        assert!(refused("a: \"open\n").what.contains("does not close"));
        assert!(refused("a: \"x\" y\n").what.contains("after a quoted"));
        assert!(refused("a: \"\\q\"\n").what.contains("unknown escape"));
        assert!(refused("a: 1\n---\nb: 2\n")
            .what
            .contains("second YAML document"));
    }
}
