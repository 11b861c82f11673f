//! The order a bundle's tasks and evals are read, planned and listed in: their names compared as a
//! person reads them, a run of digits by the number it writes (`task2` before `task10`), the rest
//! character by character. Two names that only differ in how a number is written (`task01`,
//! `task1`) keep the order of their bytes, so no two names compare equal.

use std::cmp::Ordering;

/// `a` against `b`, numbers in them compared by their value.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut left, mut right) = (a, b);
    loop {
        let (Some(l), Some(r)) = (left.chars().next(), right.chars().next()) else {
            return match (left.is_empty(), right.is_empty()) {
                (true, true) => a.cmp(b),
                (true, false) => Ordering::Less,
                _ => Ordering::Greater,
            };
        };
        if l.is_ascii_digit() && r.is_ascii_digit() {
            let (number_left, rest_left) = leading_digits(left);
            let (number_right, rest_right) = leading_digits(right);
            let order = compare_numbers(number_left, number_right);
            if order != Ordering::Equal {
                return order;
            }
            (left, right) = (rest_left, rest_right);
            continue;
        }
        if l != r {
            return l.cmp(&r);
        }
        (left, right) = (&left[l.len_utf8()..], &right[r.len_utf8()..]);
    }
}

/// A bundle's problems, each once, in the natural order ([`natural_cmp`]) of the file each names
/// (the text before its first `": "`), so those of `tasks/t2.json` come before those of
/// `tasks/t10.json`, as the tasks run; one file's keep the order they were found in, which is the
/// order of its steps and keys.
pub fn sort_naturally(items: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    items.retain(|item| seen.insert(item.clone()));
    items.sort_by(|a, b| natural_cmp(file_named(a), file_named(b)));
}

/// The file a problem names: its text before the first `": "` (the whole text when it has none).
fn file_named(problem: &str) -> &str {
    problem.split_once(": ").map_or(problem, |(file, _)| file)
}

/// The run of ASCII digits `text` starts with, and what follows it.
fn leading_digits(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(end)
}

/// Two runs of digits by the numbers they write, however long (leading zeros aside).
fn compare_numbers(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(names: &[&str]) -> Vec<String> {
        let mut names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        names.sort_by(|a, b| natural_cmp(a, b));
        names
    }

    #[test]
    fn numbers_in_names_sort_by_their_value() {
        assert_eq!(
            sorted(&["task10", "task2", "task1", "task12", "task11", "task3"]),
            ["task1", "task2", "task3", "task10", "task11", "task12"]
        );
        assert_eq!(
            sorted(&["b", "a10b", "a2b", "a2a", "a", "a02"]),
            ["a", "a02", "a2a", "a2b", "a10b", "b"]
        );
        // A number longer than any integer type still compares by its value.
        assert_eq!(
            sorted(&["n100000000000000000000001", "n99999999999999999999999"]),
            ["n99999999999999999999999", "n100000000000000000000001"]
        );
    }

    #[test]
    fn names_that_write_one_number_differently_keep_their_byte_order() {
        assert_eq!(
            sorted(&["task1", "task01", "task001"]),
            ["task001", "task01", "task1"]
        );
        assert_eq!(natural_cmp("x", "x"), Ordering::Equal);
        assert_eq!(natural_cmp("Task2", "task1"), Ordering::Less);
    }
}
