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

#[cfg(test)]
mod tests {
    use super::with_article;

    #[test]
    fn articles_follow_the_first_letter() {
        assert_eq!(with_article("object"), "an object");
        assert_eq!(with_article("document"), "a document");
    }
}
