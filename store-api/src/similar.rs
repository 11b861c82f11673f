//! A similarity ratio in the manner of Python's `difflib.SequenceMatcher.ratio` (2·M/T over recursively found
//! longest common blocks), and `close_matches` like `difflib.get_close_matches`, for "Did you mean" hints.

/// `2 * matched / (len(a) + len(b))`; 1.0 for two empty strings.
pub fn ratio(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let total = a.len() + b.len();
    if total == 0 {
        return 1.0;
    }
    2.0 * matched(&a, &b) as f64 / total as f64
}

/// Characters in the matching blocks: the longest common block, then recursively the parts left and right
/// of it.
fn matched(a: &[char], b: &[char]) -> usize {
    let (i, j, k) = longest_match(a, b);
    if k == 0 {
        return 0;
    }
    k + matched(&a[..i], &b[..j]) + matched(&a[i + k..], &b[j + k..])
}

/// The longest common block `(i, j, k)`, the earliest in `a` and then in `b` among the longest, as difflib
/// picks it.
fn longest_match(a: &[char], b: &[char]) -> (usize, usize, usize) {
    let mut best = (0, 0, 0);
    // lengths[j + 1] = length of the common block ending at a[i], b[j].
    let mut previous = vec![0usize; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![0usize; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            if ca == cb {
                let k = previous[j] + 1;
                current[j + 1] = k;
                if k > best.2 {
                    best = (i + 1 - k, j + 1 - k, k);
                }
            }
        }
        previous = current;
    }
    best
}

/// Up to `n` possibilities whose ratio to `word` is at least `cutoff`, best first (ties keep input order).
pub fn close_matches<'a>(
    word: &str,
    possibilities: impl IntoIterator<Item = &'a str>,
    n: usize,
    cutoff: f64,
) -> Vec<&'a str> {
    let mut scored: Vec<(f64, &'a str)> = possibilities
        .into_iter()
        .map(|p| (ratio(p, word), p))
        .filter(|(score, _)| *score >= cutoff)
        .collect();
    scored.sort_by(|x, y| y.0.partial_cmp(&x.0).unwrap_or(std::cmp::Ordering::Equal));
    scored.into_iter().take(n).map(|(_, p)| p).collect()
}

/// The best match at `cutoff`, if any.
pub fn best_match<'a>(
    word: &str,
    possibilities: impl IntoIterator<Item = &'a str>,
    cutoff: f64,
) -> Option<&'a str> {
    close_matches(word, possibilities, 1, cutoff)
        .into_iter()
        .next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_match_difflib() {
        // difflib.SequenceMatcher(None, a, b).ratio() for these pairs.
        assert!((ratio("plugins", "plugin") - 12.0 / 13.0).abs() < 1e-9);
        assert!((ratio("impls", "implz") - 0.8).abs() < 1e-9);
        assert!((ratio("abcd", "bcda") - 0.75).abs() < 1e-9);
        assert_eq!(ratio("", ""), 1.0);
        assert_eq!(ratio("abc", "xyz"), 0.0);
    }

    #[test]
    fn close_matches_respect_the_cutoff() {
        let keys = ["impls", "type_aliases"];
        assert_eq!(best_match("implz", keys, 0.75), Some("impls"));
        assert_eq!(best_match("zzz", keys, 0.75), None);
        assert_eq!(best_match("plugin", ["plugins"], 0.85), Some("plugins"));
        assert_eq!(best_match("plug", ["plugins"], 0.85), None);
    }
}
