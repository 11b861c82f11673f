//! Counts said in words: `1 line`, `2 lines`. A leaf the kit's wording modules share.

/// `s` unless `n` is 1.
pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `1 line`, `2 lines`: `n` and `noun`, agreeing.
pub(super) fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", plural(n))
}
