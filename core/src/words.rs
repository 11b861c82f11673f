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

#[cfg(test)]
mod tests {
    use super::{plural, with_article};

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
