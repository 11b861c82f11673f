//! Percent-decoding of query strings and path segments, and RFC 6266 / 5987 `filename*` encoding.

/// Decodes `%XX` escapes (and `+` as a space when `plus_is_space`, as in a query string). Invalid
/// escapes are kept as written; the bytes must then be UTF-8.
pub fn decode(text: &str, plus_is_space: bool) -> Result<String, std::string::FromUtf8Error> {
    String::from_utf8(agent_env_protocol::explorer::percent_decode_bytes(
        text,
        plus_is_space,
    ))
}

/// Encodes `text` for a URL path segment or query value: everything but unreserved characters.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `inline; filename="<ascii>"; filename*=UTF-8''<encoded>` (RFC 6266): the plain form for old
/// clients, with non-ASCII and quoting characters replaced, and the exact name encoded.
pub fn content_disposition(kind: &str, name: &str) -> String {
    let ascii: String = name
        .chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() && c != '"' && c != '\\' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if ascii == name {
        format!("{kind}; filename=\"{name}\"")
    } else {
        format!(
            "{kind}; filename=\"{ascii}\"; filename*=UTF-8''{}",
            encode(name)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_plus_and_keeps_bad_escapes() {
        assert_eq!(decode("a%2Fb%25c", false).unwrap(), "a/b%c");
        assert_eq!(decode("a+b", true).unwrap(), "a b");
        assert_eq!(decode("a+b", false).unwrap(), "a+b");
        assert_eq!(decode("100%", false).unwrap(), "100%");
        assert_eq!(decode("%zz", false).unwrap(), "%zz");
        assert_eq!(decode("%E2%9C%93", false).unwrap(), "✓");
        assert!(decode("%FF", false).is_err());
    }

    #[test]
    fn encodes_a_segment_so_it_stays_one_segment() {
        assert_eq!(encode("@local/a b%"), "%40local%2Fa%20b%25");
        assert_eq!(decode(&encode("@local/ü"), false).unwrap(), "@local/ü");
    }

    #[test]
    fn filenames_get_an_rfc_6266_form_when_not_plain_ascii() {
        assert_eq!(
            content_disposition("inline", "a.txt"),
            "inline; filename=\"a.txt\""
        );
        assert_eq!(
            content_disposition("attachment", "résumé \"1\".pdf"),
            "attachment; filename=\"r_sum_ _1_.pdf\"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%221%22.pdf"
        );
    }
}
