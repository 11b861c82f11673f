//! Small pieces of English that messages share.

/// The word with its indefinite article: `an object`, `a document`, `an integer`.
pub fn with_article(word: &str) -> String {
    let article = if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {word}")
}

/// `one` for a count of one, else `many`: `1 sandbox`, `2 sandboxes`.
pub fn plural<'s>(n: usize, one: &'s str, many: &'s str) -> &'s str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// A size for a person: `512 B`, `3.0 KiB`, `1.4 GiB`, in the largest unit it is at least one of
/// once rounded to a tenth (1048575 bytes is `1.0 MiB`, not `1024.0 KiB`).
pub fn byte_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    // As shown: to a tenth.
    let shown = |v: f64| (v * 10.0).round() / 10.0;
    while shown(value) >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::{byte_size, plural, with_article};

    #[test]
    fn sizes_are_said_in_the_largest_unit_below_them_to_a_tenth() {
        assert_eq!(byte_size(0), "0 B");
        assert_eq!(byte_size(1023), "1023 B");
        assert_eq!(byte_size(1024), "1.0 KiB");
        assert_eq!(byte_size(134_217_728), "128.0 MiB");
        assert_eq!(byte_size(1_503_238_554), "1.4 GiB");
        assert_eq!(byte_size(u64::MAX), "16384.0 PiB");
    }

    #[test]
    fn a_size_that_rounds_up_to_the_next_unit_is_said_in_it() {
        assert_eq!(byte_size(1_048_575), "1.0 MiB");
        assert_eq!(byte_size(1_048_524), "1023.9 KiB");
        assert_eq!(byte_size(1_048_525), "1.0 MiB");
        assert_eq!(byte_size((1 << 30) - 1), "1.0 GiB");
        assert_eq!(byte_size(1_073_689_395), "1023.9 MiB");
    }

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(plural(1, "file", "files"), "file");
        assert_eq!(plural(0, "file", "files"), "files");
        assert_eq!(plural(2, "sandbox", "sandboxes"), "sandboxes");
    }

    #[test]
    fn articles_follow_the_first_letter() {
        assert_eq!(with_article("object"), "an object");
        assert_eq!(with_article("document"), "a document");
    }
}
