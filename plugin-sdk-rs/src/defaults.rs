//! Whether a trait method the SDK provides a default for was left to that default. Rust cannot ask a
//! trait object which methods its type overrides, so each such default marks, on the calling thread,
//! that it ran; the SDK calls the method through [`reached_default`] and reads the mark. This is how
//! implementing [`crate::TaskStep::validate`] is enough for the host to call it, and how a
//! [`crate::CliCommand`] that implements neither of its two `run` methods is told apart.

use std::cell::Cell;

thread_local! {
    static REACHED: Cell<bool> = const { Cell::new(false) };
}

/// Called by a default method: it ran, so the author did not implement the method.
pub(crate) fn mark() {
    REACHED.with(|reached| reached.set(true));
}

/// Runs `f` and returns what it returned and whether a marking default ran on this thread meanwhile.
pub(crate) fn reached_default<T>(f: impl FnOnce() -> T) -> (T, bool) {
    let before = REACHED.with(|reached| reached.replace(false));
    let value = f();
    let reached = REACHED.with(|reached| reached.replace(before));
    (value, reached)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_marking_default_is_seen_and_an_outer_mark_survives_an_inner_check() {
        assert_eq!(reached_default(|| 1), (1, false));
        assert_eq!(reached_default(mark), ((), true));
        let ((_, inner), outer) = reached_default(|| {
            mark();
            reached_default(|| ())
        });
        assert!(!inner);
        assert!(outer);
    }
}
