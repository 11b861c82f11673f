//! The multipart/form-data body of an upload-policy POST: form fields, then the key, then the file, with
//! the original's limits and refusals.

/// The most form fields an upload may carry.
const MAX_FIELDS: usize = 32;
/// The most bytes of one field's value.
const MAX_FIELD_BYTES: usize = 64 * 1024;
/// The most bytes of one part's headers.
const MAX_PART_HEADER_BYTES: usize = 16 * 1024;

/// What a form held: the key, the declared content type, and the file's bytes.
#[derive(Debug, PartialEq, Eq)]
pub struct Upload {
    pub key: String,
    pub content_type: Option<String>,
    pub file: Vec<u8>,
}

/// Why a form was refused: the HTTP status and the plain-text sentence.
pub type Refusal = (u16, &'static str);

/// The boundary of a `multipart/form-data; boundary=…` content type.
pub fn boundary(content_type: &str) -> Option<String> {
    let (kind, params) = content_type.split_once(';')?;
    if !kind.trim().eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    params.split(';').find_map(|p| {
        let (name, value) = p.split_once('=')?;
        (name.trim().eq_ignore_ascii_case("boundary"))
            .then(|| value.trim().trim_matches('"').to_string())
            .filter(|b| !b.is_empty())
    })
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| i + from)
}

/// The form field name of a part's headers.
fn field_name(headers: &str) -> Option<String> {
    headers.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        if !name.trim().eq_ignore_ascii_case("content-disposition") {
            return None;
        }
        value.split(';').find_map(|p| {
            let (k, v) = p.split_once('=')?;
            (k.trim() == "name").then(|| v.trim().trim_matches('"').to_string())
        })
    })
}

/// Reads the form: its `key` (which must come before the file), an optional `Content-Type` field, and
/// the `file` part, no larger than `max_file_bytes`.
pub fn parse(body: &[u8], boundary: &str, max_file_bytes: u64) -> Result<Upload, Refusal> {
    const INVALID: Refusal = (400, "The upload is not a valid multipart form.");
    let delimiter = format!("--{boundary}");
    let next_part = format!("\r\n--{boundary}");
    let mut at = find(body, delimiter.as_bytes(), 0).ok_or(INVALID)? + delimiter.len();
    let mut key: Option<String> = None;
    let mut content_type: Option<String> = None;
    let mut fields = 0;
    loop {
        if body.get(at..at + 2) == Some(b"--") {
            return Err((400, "The upload has no 'file' field."));
        }
        if body.get(at..at + 2) != Some(b"\r\n") {
            return Err(INVALID);
        }
        at += 2;
        let head_end = find(body, b"\r\n\r\n", at).ok_or((400, "The upload ended early."))?;
        if head_end - at > MAX_PART_HEADER_BYTES {
            return Err((400, "A part of the upload has headers over 16 KiB."));
        }
        let headers = std::str::from_utf8(&body[at..head_end]).map_err(|_| INVALID)?;
        let name = field_name(headers).ok_or(INVALID)?;
        let value_start = head_end + 4;
        let value_end = find(body, next_part.as_bytes(), value_start)
            .ok_or((400, "The upload ended early."))?;
        let value = &body[value_start..value_end];
        at = value_end + next_part.len();
        if name == "file" {
            let key = key.ok_or((400, "The upload must name its 'key' before its file."))?;
            if value.len() as u64 > max_file_bytes {
                return Err((400, "The upload is larger than the grant allows."));
            }
            return Ok(Upload {
                key,
                content_type,
                file: value.to_vec(),
            });
        }
        fields += 1;
        if fields > MAX_FIELDS {
            return Err((400, "The upload has more than 32 form fields."));
        }
        if value.len() > MAX_FIELD_BYTES {
            return Err((400, "A form field of the upload is over 64 KiB."));
        }
        let text = String::from_utf8(value.to_vec()).map_err(|_| INVALID)?;
        match name.as_str() {
            "key" => key = Some(text),
            "Content-Type" | "content-type" => content_type = Some(text),
            _ => {}
        }
    }
}

/// Whether an upload key is a normalized relative path: no leading `/`, no backslash or NUL, no empty,
/// `.` or `..` segment.
pub fn is_normalized_key(key: &str) -> bool {
    !key.is_empty()
        && !key.starts_with('/')
        && !key.contains(['\\', '\0'])
        && key
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(parts: &[(&str, &[u8])]) -> Vec<u8> {
        let mut body = Vec::new();
        for (name, value) in parts {
            body.extend_from_slice(
                format!("--B\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n")
                    .as_bytes(),
            );
            body.extend_from_slice(value);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(b"--B--\r\n");
        body
    }

    #[test]
    fn a_form_gives_its_key_type_and_file() {
        let body = form(&[
            ("Content-Type", b"text/plain"),
            ("key", b"p/x"),
            ("file", b"abc"),
        ]);
        assert_eq!(
            parse(&body, "B", 8).unwrap(),
            Upload {
                key: "p/x".into(),
                content_type: Some("text/plain".into()),
                file: b"abc".to_vec()
            }
        );
        assert_eq!(
            boundary("multipart/form-data; boundary=B").as_deref(),
            Some("B")
        );
        assert_eq!(boundary("text/plain"), None);
    }

    #[test]
    fn forms_are_refused_with_the_original_sentences() {
        let late_key = form(&[("file", b"abc"), ("key", b"p/x")]);
        assert_eq!(
            parse(&late_key, "B", 8).unwrap_err().1,
            "The upload must name its 'key' before its file."
        );
        let big = form(&[("key", b"p/x"), ("file", b"123456789")]);
        assert_eq!(
            parse(&big, "B", 8).unwrap_err().1,
            "The upload is larger than the grant allows."
        );
        let no_file = form(&[("key", b"p/x")]);
        assert_eq!(
            parse(&no_file, "B", 8).unwrap_err().1,
            "The upload has no 'file' field."
        );
        assert_eq!(
            parse(
                b"--B\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nx",
                "B",
                8
            )
            .unwrap_err()
            .1,
            "The upload ended early."
        );
        for bad in ["/abs", "a//b", "a/./b", "../x", "a\\b", ""] {
            assert!(!is_normalized_key(bad), "{bad}");
        }
        assert!(is_normalized_key("root/000000"));
    }
}
