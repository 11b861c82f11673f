//! The regular expressions of `probe_file_contains` criteria, compiled once per process.
//!
//! A bundle of many tasks usually repeats the same few patterns, and each is checked when the run is
//! planned and again when its criterion runs; compiling one costs far more than searching a small
//! file with it. The cache is bounded, so a long-lived process (the explorer) that sees endless new
//! patterns does not grow without end.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

use regex::Regex;

/// Above this many patterns the cache starts again empty.
const MOST_PATTERNS: usize = 256;

/// `pattern` compiled, from the cache when it was compiled before.
pub fn compiled(pattern: &str) -> Result<Regex, regex::Error> {
    if let Some(found) = lock().get(pattern) {
        return Ok(found.clone());
    }
    let made = Regex::new(pattern)?;
    let mut patterns = lock();
    if patterns.len() >= MOST_PATTERNS {
        patterns.clear();
    }
    patterns.insert(pattern.to_string(), made.clone());
    Ok(made)
}

/// The cache, locked; a panic elsewhere while it was held leaves a map of whole entries.
fn lock() -> MutexGuard<'static, HashMap<String, Regex>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Regex>>> = OnceLock::new();
    CACHE
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_compiles_once_and_a_bad_one_says_why() {
        let first = compiled("hel+o").unwrap();
        let again = compiled("hel+o").unwrap();
        assert!(again.is_match("hello"));
        assert_eq!(first.as_str(), again.as_str());
        let bad = compiled("(unclosed").unwrap_err();
        assert!(bad.to_string().contains("unclosed"), "{bad}");
    }

    #[test]
    fn the_cache_stays_bounded() {
        for i in 0..(MOST_PATTERNS * 2) {
            compiled(&format!("pattern-{i}")).unwrap();
        }
        assert!(lock().len() <= MOST_PATTERNS, "{}", lock().len());
        // A pattern dropped when the cache started again compiles again.
        assert!(compiled("pattern-3").unwrap().is_match("pattern-3"));
    }
}
