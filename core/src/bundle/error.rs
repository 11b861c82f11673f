//! `BundleError`: every problem a bundle has, sorted, reported together.

/// A bundle that can't be parsed, planned or preflighted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", problems.join("\n"))]
pub struct BundleError {
    /// Sorted, without repeats.
    pub problems: Vec<String>,
}

impl BundleError {
    pub fn new(mut problems: Vec<String>) -> Self {
        problems.sort();
        problems.dedup();
        BundleError { problems }
    }

    /// One problem.
    pub fn one(problem: impl Into<String>) -> Self {
        BundleError {
            problems: vec![problem.into()],
        }
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
    }
}
