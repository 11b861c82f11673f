//! The secret values this process holds, and the masking of them in text agent-env did not write.
//!
//! `config show` masks a secret by where it sits (its key, its reference, its place in a URI). Text
//! that comes from elsewhere (a plugin's stderr and log lines, an error a plugin or a store raised, a
//! criterion's output) carries no such marks, so it is masked by value instead: every value this
//! process resolved that the config masking would hide is remembered here, and [`redact`] replaces each
//! occurrence of one with `***`. The places where text leaves the process (the terminal, the run log,
//! a stored task instance, the explorer's answers) pass it through [`redact`].
//!
//! What is remembered:
//! - the value of every `secret:` reference, and every value the secret store hands out;
//! - every value under a secret-like key (`api_token`, `password`, …, as the config masking names them),
//!   resolved or literal, when it is at least [`MIN_NAMED_CHARS`] long (shorter ones are settings such as
//!   `auth = "none"`, which would mask ordinary words);
//! - the password of every `scheme://user:password@host` URI in a setting, as written and
//!   percent-decoded (`p%40ss` is also remembered as `p@ss`);
//! - whatever the config masking hides inside any other setting, just that part (a token by its
//!   shape, the value of `password=…` or `?api_key=…`, `--token=…` or the word after `--password` in a
//!   list of words), which the config layer finds and hands to [`remember`] as it resolves the setting.
//!
//! Values shorter than [`MIN_SECRET_CHARS`] are not remembered: masking every `1` or `on` in a log would
//! hide more than it protects. The set only grows: a value once known stays masked for the rest of the
//! process.
//!
//! A URL agent-env shows from what it was given (`plugin add`'s plan: a package index, a `GOPROXY`) is
//! masked by place instead, [`mask_url_credentials`]: its credentials, however short.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;

/// What a masked value prints as.
pub const MASK: &str = "***";

/// A secret shorter than this is not masked in free text.
pub const MIN_SECRET_CHARS: usize = 6;

/// A value under a secret-like key shorter than this is not masked in free text.
pub const MIN_NAMED_CHARS: usize = 8;

/// Every remembered form, longest first (so a secret holding another is masked whole).
static KNOWN: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Whether anything was remembered: most invocations hold no secret, and [`redact`] then costs one
/// load.
static ANY: AtomicBool = AtomicBool::new(false);

/// Remembers `value` as a secret: it is masked wherever [`redact`] runs from now on. Its JSON-escaped
/// form is remembered too, so it is masked inside a JSON document as well.
pub fn remember(value: &str) {
    if value.chars().count() < MIN_SECRET_CHARS {
        return;
    }
    let escaped = serde_json::to_string(value).unwrap_or_default();
    let escaped = escaped
        .strip_prefix('"')
        .and_then(|e| e.strip_suffix('"'))
        .unwrap_or(value);
    let Ok(mut known) = KNOWN.write() else {
        return;
    };
    for form in [value, escaped] {
        if !known.iter().any(|k| k == form) {
            let at = known.partition_point(|k| k.len() >= form.len());
            known.insert(at, form.to_string());
        }
    }
    ANY.store(true, Ordering::Release);
    // A plugin's stderr line is cut short where the host keeps it: masked first, so a secret cut in
    // two is not left half shown.
    agent_env_host::mask_lines_with(|line| redact(line).into_owned());
}

/// Remembers what of a setting's string is secret: all of it when it came from a `secret:` reference
/// or sits under a secret-like key (`under_secret_key`), and the password of a URI in it, as written
/// and percent-decoded (what the server is sent, and what a program given the URI may print).
pub fn remember_setting(value: &str, from_secret_reference: bool, under_secret_key: bool) {
    let named = under_secret_key && value.chars().count() >= MIN_NAMED_CHARS;
    if from_secret_reference || named {
        remember(value);
    }
    if let Some(password) = uri_password(value) {
        remember(password);
        if let Some(decoded) = percent_decoded(password) {
            remember(&decoded);
        }
    }
}

/// `text` with each `%XX` escape replaced by its byte, when it holds one and the result is UTF-8 text
/// (a `%` not followed by two hex digits stays as it is, as URI parsers leave it).
pub fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut escaped = false;
    let mut i = 0;
    while i < bytes.len() {
        let pair = bytes.get(i + 1..i + 3).and_then(hex_byte);
        match (bytes[i], pair) {
            (b'%', Some(byte)) => {
                out.push(byte);
                escaped = true;
                i += 3;
            }
            (other, _) => {
                out.push(other);
                i += 1;
            }
        }
    }
    if !escaped {
        return None;
    }
    String::from_utf8(out).ok()
}

/// The byte two hex digits spell.
fn hex_byte(pair: &[u8]) -> Option<u8> {
    let digits = std::str::from_utf8(pair).ok()?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(digits, 16).ok()
}

/// The password of a `scheme://user:password@host/…` URI at the start of `text`, when it has one.
pub fn uri_password(text: &str) -> Option<&str> {
    let (start, end) = userinfo_range(text)?;
    let (_, password) = text[start..end].split_once(':')?;
    (!password.is_empty()).then_some(password)
}

/// The byte range of the userinfo (`user:pass`) of a URI at the start of `text`. A password that holds
/// a `/`, `?` or `#` written as it is (a URL must encode them) still ends at the last `@` before any
/// space, so what shows it masks it; `host:8443/…@…` is a port and a path, not a password.
pub fn userinfo_range(text: &str) -> Option<(usize, usize)> {
    let scheme_end = text.find("://")?;
    let scheme = &text[..scheme_end];
    let scheme_ok = !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return None;
    }
    let authority_start = scheme_end + 3;
    let rest = &text[authority_start..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if let Some(at) = rest[..authority_len].rfind('@') {
        return Some((authority_start, authority_start + at));
    }
    let token = &rest[..rest.find(char::is_whitespace).unwrap_or(rest.len())];
    let at = token.rfind('@')?;
    let (user, password) = token[..at].split_once(':')?;
    let before_cut = password.split(['/', '?', '#']).next().unwrap_or("");
    let a_port = !before_cut.is_empty() && before_cut.bytes().all(|b| b.is_ascii_digit());
    (!user.contains(['/', '?', '#']) && !a_port).then_some((authority_start, authority_start + at))
}

/// `text` with the credentials of every URL in it replaced by `***` by where they sit, whatever their
/// length (value masking, [`redact`], skips a short one): the password of `user:password@`, or the whole
/// of a userinfo without one (a token as the user name, as package indexes and module proxies take it).
/// A URL is a `scheme://` word, also after `NAME=` or `--flag=`; a list of them (`a,b|c`, as `GOPROXY`
/// takes) is masked URL by URL.
pub fn mask_url_credentials(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, ',' | '|'))
            .unwrap_or(rest.len());
        out.push_str(&mask_one_url(&rest[..end]));
        let separator = rest[end..].chars().next().map_or(0, char::len_utf8);
        out.push_str(&rest[end..end + separator]);
        rest = &rest[end + separator..];
    }
    Cow::Owned(out)
}

/// One word with the credentials of the URL in it masked (see [`mask_url_credentials`]).
fn mask_one_url(word: &str) -> String {
    let Some(sep) = word.find("://") else {
        return word.to_string();
    };
    let start = word[..sep]
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        .last()
        .map_or(sep, |(i, _)| i);
    let Some((from, to)) = userinfo_range(&word[start..]) else {
        return word.to_string();
    };
    let (from, to) = (start + from, start + to);
    let secret_from = word[from..to]
        .find(':')
        .map_or(from, |colon| from + colon + 1);
    format!("{}{MASK}{}", &word[..secret_from], &word[to..])
}

/// Whether any secret was remembered (when none was, [`redact`] changes nothing).
pub fn holds_any() -> bool {
    ANY.load(Ordering::Acquire)
}

/// `text` with every remembered secret replaced by `***`.
pub fn redact(text: &str) -> Cow<'_, str> {
    if !ANY.load(Ordering::Acquire) {
        return Cow::Borrowed(text);
    }
    let Ok(known) = KNOWN.read() else {
        return Cow::Borrowed(text);
    };
    let mut out = Cow::Borrowed(text);
    for secret in known.iter() {
        if out.contains(secret.as_str()) {
            out = Cow::Owned(out.replace(secret.as_str(), MASK));
        }
    }
    out
}

/// Redacts every string (and object key) of a JSON value in place.
pub fn redact_json(value: &mut serde_json::Value) {
    if !ANY.load(Ordering::Acquire) {
        return;
    }
    match value {
        serde_json::Value::String(s) => {
            if let Cow::Owned(masked) = redact(s) {
                *s = masked;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact_json),
        serde_json::Value::Object(map) => {
            let renamed: Vec<(String, String)> = map
                .keys()
                .filter_map(|k| match redact(k) {
                    Cow::Owned(masked) => Some((k.clone(), masked)),
                    Cow::Borrowed(_) => None,
                })
                .collect();
            for (old, new) in renamed {
                if let Some(v) = map.remove(&old) {
                    map.insert(new, v);
                }
            }
            map.values_mut().for_each(redact_json);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // The set is the process's: each test uses values no other test holds.

    #[test]
    fn a_remembered_secret_is_masked_wherever_it_appears() {
        remember("rd-test-alpha-0001");
        assert_eq!(
            redact("token rd-test-alpha-0001 and again rd-test-alpha-0001."),
            "token *** and again ***."
        );
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn the_longer_of_two_overlapping_secrets_is_masked_whole() {
        remember("rd-beta");
        remember("rd-beta-and-more");
        assert_eq!(redact("x rd-beta-and-more y rd-beta"), "x *** y ***");
    }

    #[test]
    fn short_values_and_short_named_values_are_not_remembered() {
        remember("rd12");
        assert_eq!(redact("rd12"), "rd12");
        remember_setting("rdnone", false, true);
        assert_eq!(redact("auth rdnone"), "auth rdnone");
        remember_setting("rd-gamma-named-9", false, true);
        assert_eq!(redact("rd-gamma-named-9"), "***");
        remember_setting("rd-sec", true, false);
        assert_eq!(redact("got rd-sec"), "got ***");
    }

    #[test]
    fn a_uri_password_is_remembered_but_not_the_rest_of_the_uri() {
        remember_setting("postgres://me:rd-pw-delta@db.example:5432/x", false, false);
        assert_eq!(
            redact("could not reach postgres://me:rd-pw-delta@db.example:5432/x"),
            "could not reach postgres://me:***@db.example:5432/x"
        );
        remember_setting("http://localhost:9222", false, false);
        assert_eq!(redact("http://localhost:9222"), "http://localhost:9222");
    }

    #[test]
    fn a_urls_credentials_are_masked_by_their_place_whatever_their_length() {
        assert_eq!(
            mask_url_credentials(
                "pip install --index-url http://alice:abc12@127.0.0.1:1/simple/ x"
            ),
            "pip install --index-url http://alice:***@127.0.0.1:1/simple/ x"
        );
        // A token as the user name, a URL after NAME=, a list of them.
        assert_eq!(
            mask_url_credentials("GOPROXY=https://tok@p.example,https://u:pw@q.example/go|direct"),
            "GOPROXY=https://***@p.example,https://u:***@q.example/go|direct"
        );
        assert_eq!(
            mask_url_credentials("--index-url=https://u:p@h/simple"),
            "--index-url=https://u:***@h/simple"
        );
        // No credentials, a port, an @ in the path: nothing to mask.
        for plain in [
            "http://127.0.0.1:9/simple",
            "https://host:8443/users/@alice",
            "./mystep",
            "GONOSUMDB=github.com/agent-env/*",
        ] {
            assert_eq!(mask_url_credentials(plain), plain);
        }
    }

    #[test]
    fn a_password_with_an_unencoded_slash_is_still_found() {
        assert_eq!(
            uri_password("postgres://qa:Sup3r/SecretPw@127.0.0.1:1/db"),
            Some("Sup3r/SecretPw")
        );
        assert_eq!(uri_password("postgres://qa:a?b#c@h/db"), Some("a?b#c"));
        // A port, a path with an @, a URL without credentials: no password.
        assert_eq!(uri_password("https://host:8443/users/@alice"), None);
        assert_eq!(uri_password("https://example.com/path@foo"), None);
        assert_eq!(
            uri_password("postgres://u:pw@h/db?application_name=me@x"),
            Some("pw")
        );
    }

    #[test]
    fn a_percent_encoded_uri_password_is_masked_as_written_and_decoded() {
        remember_setting(
            "postgres://special:rd%40ss%3Aw%2Frd%2541%23%C3%A9%21x@127.0.0.1:5432/db",
            false,
            false,
        );
        assert_eq!(
            redact("printed rd@ss:w/rd%41#é!x and rd%40ss%3Aw%2Frd%2541%23%C3%A9%21x"),
            "printed *** and ***"
        );
        // Under a secret-like key or from a `secret:` reference, the URI's decoded password is masked too.
        remember_setting("postgres://u:rd%20zeta%20pw@h/db", true, false);
        assert_eq!(redact("pw: rd zeta pw"), "pw: ***");
    }

    #[test]
    fn percent_decoding_keeps_what_is_not_an_escape() {
        assert_eq!(percent_decoded("a%41b").as_deref(), Some("aAb"));
        assert_eq!(percent_decoded("100%25").as_deref(), Some("100%"));
        assert_eq!(percent_decoded("50%zz%4").as_deref(), None);
        assert_eq!(percent_decoded("x%4g%41").as_deref(), Some("x%4gA"));
        assert_eq!(percent_decoded("%C3%A9").as_deref(), Some("é"));
        // Not UTF-8 once decoded: no text form to mask.
        assert_eq!(percent_decoded("%FF"), None);
        assert_eq!(percent_decoded("é%21").as_deref(), Some("é!"));
    }

    #[test]
    fn a_json_document_is_masked_in_its_strings_and_in_its_escaped_text() {
        remember("rd\"quoted\\epsilon");
        let mut doc = json!({"error": "bad rd\"quoted\\epsilon", "n": [1, "rd\"quoted\\epsilon"]});
        redact_json(&mut doc);
        assert_eq!(doc, json!({"error": "bad ***", "n": [1, "***"]}));
        let text = serde_json::to_string(&json!({"e": "rd\"quoted\\epsilon"})).unwrap();
        assert_eq!(redact(&text), r#"{"e":"***"}"#);
    }
}
