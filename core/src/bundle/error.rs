//! `BundleError`: every problem a bundle has, in natural order (`tasks/t2.json` before
//! `tasks/t10.json`, as the tasks run), reported together.

use std::sync::Arc;

use super::model::Bundle;
use super::natural_order::sort_naturally;

/// A bundle that can't be parsed, planned or preflighted.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", problems.join("\n"))]
pub struct BundleError {
    /// In natural order ([`sort_naturally`]), without repeats.
    pub problems: Vec<String>,
    /// When a parse found problems: what of the bundle did parse (the files without problems, and
    /// the entries read from those with some), so planning it finds the problems those files have
    /// too and all are said in one pass.
    partly_parsed: Option<Arc<Bundle>>,
}

impl PartialEq for BundleError {
    fn eq(&self, other: &Self) -> bool {
        self.problems == other.problems
    }
}

impl Eq for BundleError {}

impl BundleError {
    pub fn new(mut problems: Vec<String>) -> Self {
        sort_naturally(&mut problems);
        BundleError {
            problems,
            partly_parsed: None,
        }
    }

    /// One problem.
    pub fn one(problem: impl Into<String>) -> Self {
        BundleError::new(vec![problem.into()])
    }

    /// The parse's `problems`, with what of the bundle parsed in spite of them.
    pub fn of_parse(problems: Vec<String>, partly_parsed: Bundle) -> Self {
        BundleError {
            partly_parsed: Some(Arc::new(partly_parsed)),
            ..BundleError::new(problems)
        }
    }

    /// What of the bundle parsed, when this is a parse's error.
    pub fn partly_parsed(&self) -> Option<&Bundle> {
        self.partly_parsed.as_deref()
    }

    /// These problems and `more`, in natural order, without repeats.
    pub fn with(mut self, more: Vec<String>) -> Self {
        self.problems.extend(more);
        sort_naturally(&mut self.problems);
        self
    }

    /// The first problem, with how many more there are.
    pub fn summary(&self) -> String {
        match self.problems.split_first() {
            None => String::new(),
            Some((first, [])) => first.clone(),
            Some((first, rest)) => format!("{first} (and {} more)", rest.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_are_sorted_and_summarised() {
        let e = BundleError::new(vec!["b".into(), "a".into(), "b".into()]);
        assert_eq!(e.to_string(), "a\nb");
        assert_eq!(e.summary(), "a (and 1 more)");
        assert_eq!(
            e.with(vec!["c".into(), "a".into()]).problems,
            ["a", "b", "c"]
        );
        // Numbers in them by their value, as the tasks run: t2 before t10.
        let e = BundleError::new(vec![
            "b/tasks/t10.json: x".into(),
            "b/tasks/t2.json: x".into(),
            "b/tasks/t1.json: x".into(),
        ]);
        assert_eq!(
            e.with(vec!["b/tasks/t3.json: x".into()]).problems,
            [
                "b/tasks/t1.json: x",
                "b/tasks/t2.json: x",
                "b/tasks/t3.json: x",
                "b/tasks/t10.json: x"
            ]
        );
    }
}
