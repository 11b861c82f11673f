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
    // lengths[j + 1] = length of the common block ending at a[i], b[j]; two rows, reused.
    let mut previous = vec![0usize; b.len() + 1];
    let mut current = vec![0usize; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        for (j, cb) in b.iter().enumerate() {
            let k = if ca == cb { previous[j] + 1 } else { 0 };
            current[j + 1] = k;
            if k > best.2 {
                best = (i + 1 - k, j + 1 - k, k);
            }
        }
        std::mem::swap(&mut previous, &mut current);
    }
    best
}

/// An upper bound on [`ratio`] from the characters alone, whatever their order (difflib's
/// `quick_ratio`): a pair below the cutoff by it is below it by the ratio, which is not worked out.
fn quick_ratio(a: &str, b: &str) -> f64 {
    let mut a: Vec<char> = a.chars().collect();
    let mut b: Vec<char> = b.chars().collect();
    let total = a.len() + b.len();
    if total == 0 {
        return 1.0;
    }
    a.sort_unstable();
    b.sort_unstable();
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * common as f64 / total as f64
}

/// Up to `n` possibilities whose ratio to `word` is at least `cutoff`, best first (ties keep input order).
pub fn close_matches<'a>(
    word: &str,
    possibilities: impl IntoIterator<Item = &'a str>,
    n: usize,
    cutoff: f64,
) -> Vec<&'a str> {
    // As difflib does: the cheap bounds first (lengths, then characters), the ratio only for a pair
    // they leave in reach of the cutoff. The answer is the same; a step's every field is checked so.
    let words = word.chars().count();
    let mut scored: Vec<(f64, &'a str)> = possibilities
        .into_iter()
        .filter(|p| {
            let chars = p.chars().count();
            let total = chars + words;
            total == 0 || 2.0 * chars.min(words) as f64 / total as f64 >= cutoff
        })
        .filter(|p| quick_ratio(p, word) >= cutoff)
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
    fn the_quick_bound_is_never_below_the_ratio() {
        let words = [
            "plugins", "plugin", "impls", "implz", "abcd", "bcda", "", "aab", "aba",
        ];
        for a in words {
            for b in words {
                assert!(quick_ratio(a, b) + 1e-12 >= ratio(a, b), "{a} {b}");
            }
        }
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
