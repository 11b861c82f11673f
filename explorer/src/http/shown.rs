//! An id or path as an answer echoes it: whole up to [`MAX_SHOWN_CHARS`] characters, else its start,
//! an ellipsis and its length, so that an id of 60,000 characters does not make a 60 kB answer.

use std::borrow::Cow;

/// The most characters of an id an answer repeats.
pub const MAX_SHOWN_CHARS: usize = 200;

/// `text` as an answer shows it: `abc…… (60000 characters)` past [`MAX_SHOWN_CHARS`].
pub fn shown(text: &str) -> Cow<'_, str> {
    let count = text.chars().count();
    if count <= MAX_SHOWN_CHARS {
        return Cow::Borrowed(text);
    }
    let start: String = text.chars().take(MAX_SHOWN_CHARS).collect();
    Cow::Owned(format!("{start}… ({count} characters)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_id_is_cut_with_its_length() {
        assert_eq!(shown("abc"), "abc");
        let long = "é".repeat(60_000);
        let s = shown(&long);
        assert!(s.ends_with("… (60000 characters)"), "{s}");
        assert_eq!(
            s.chars().count(),
            MAX_SHOWN_CHARS + "… (60000 characters)".chars().count()
        );
    }
}
