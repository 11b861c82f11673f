//! The regular expressions of `probe_file_contains` criteria, compiled once per process.
//!
//! A bundle of many tasks usually repeats the same few patterns, and each is checked when the run is
//! planned and again when its criterion runs; compiling one costs far more than searching a small
//! file with it. The cache is bounded, so a long-lived process (the explorer) that sees endless new
//! patterns does not grow without end.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

use regex::Regex;

/// Above this many patterns the process's cache starts again empty.
const MOST_PATTERNS: usize = 256;

/// `pattern` compiled, from the process's cache when it was compiled before.
pub fn compiled(pattern: &str) -> Result<Regex, regex::Error> {
    static PROCESS: OnceLock<Patterns> = OnceLock::new();
    PROCESS
        .get_or_init(|| Patterns::new(MOST_PATTERNS))
        .compiled(pattern)
}

/// Compiled patterns by their text, at most `most` of them.
struct Patterns {
    by_text: Mutex<HashMap<String, Regex>>,
    most: usize,
}

impl Patterns {
    fn new(most: usize) -> Patterns {
        Patterns {
            by_text: Mutex::default(),
            most,
        }
    }

    fn compiled(&self, pattern: &str) -> Result<Regex, regex::Error> {
        if let Some(found) = self.lock().get(pattern) {
            return Ok(found.clone());
        }
        let made = Regex::new(pattern)?;
        let mut patterns = self.lock();
        if patterns.len() >= self.most {
            patterns.clear();
        }
        patterns.insert(pattern.to_string(), made.clone());
        Ok(made)
    }

    /// The map, locked; a panic elsewhere while it was held leaves whole entries.
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Regex>> {
        self.by_text
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_compiles_once_and_a_bad_one_says_why() {
        let patterns = Patterns::new(8);
        assert!(patterns.compiled("hel+o").unwrap().is_match("hello"));
        assert!(patterns.compiled("hel+o").unwrap().is_match("helllo"));
        assert_eq!(
            patterns.lock().len(),
            1,
            "kept once, read back the second time"
        );
        let bad = patterns.compiled("(unclosed").unwrap_err();
        assert!(bad.to_string().contains("unclosed"), "{bad}");
        assert_eq!(patterns.lock().len(), 1, "a bad pattern is not kept");
        assert!(
            compiled("hel+o").unwrap().is_match("hello"),
            "the process's own"
        );
    }

    #[test]
    fn the_cache_stays_bounded() {
        let patterns = Patterns::new(4);
        for i in 0..10 {
            patterns.compiled(&format!("pattern-{i}")).unwrap();
            assert!(patterns.lock().len() <= 4, "{}", patterns.lock().len());
        }
        // A pattern dropped when the cache started again compiles again.
        assert!(patterns
            .compiled("pattern-3")
            .unwrap()
            .is_match("pattern-3"));
    }
}
