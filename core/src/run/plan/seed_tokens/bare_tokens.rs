//! The `<key>` tokens of a command that bash would read as redirections: a token standing where
//! bash reads `<` as one, outside quotes (`'…'`, `"…"`, `$'…'`), not escaped by `\`, not in a `#`
//! comment nor in a here-document's lines. A token anywhere else is passed to its program as written
//! and does no harm; one standing bare is most likely a seed token the run left unfilled
//! (`echo <who> > who.txt`, which bash refuses).
//!
//! Only a name that looks like a seed's key counts: a letter or `_`, then letters, digits, `_` or
//! `-` (`<who>`, `<file_name>`), so a path (`sort <in.txt>out.txt`) is a shell's own `<`.

use std::collections::BTreeSet;

/// The characters that end a word in bash (its metacharacters), beside white space.
const WORD_ENDS: &[char] = &['|', '&', ';', '(', ')', '<', '>'];

/// A here-document whose lines start at the next line of the command.
struct HereDocument {
    delimiter: String,
    /// `<<-`: the delimiter line may start with tabs.
    strips_tabs: bool,
}

/// The names of the `<name>` tokens in `command` that bash would read as redirections.
pub fn bare_tokens(command: &str) -> BTreeSet<String> {
    let text: Vec<char> = command.chars().collect();
    let at = |i: usize| text.get(i).copied();
    let mut found = BTreeSet::new();
    let mut pending: Vec<HereDocument> = Vec::new();
    let mut i = 0;
    while let Some(c) = at(i) {
        i = match c {
            '\\' => i + 2,
            '\'' => after_closing(&text, i + 1, '\'', false),
            '"' => after_closing(&text, i + 1, '"', true),
            '$' if at(i + 1) == Some('\'') => after_closing(&text, i + 2, '\'', true),
            '#' if i == 0 || ends_word(text[i - 1]) => line_end(&text, i),
            '\n' => pending
                .drain(..)
                .fold(i + 1, |start, doc| after_here_document(&text, start, &doc)),
            '<' if at(i + 1) == Some('<') && at(i + 2) == Some('<') => i + 3,
            '<' if at(i + 1) == Some('<') => {
                let (doc, next) = here_document(&text, i + 2);
                pending.extend(doc);
                next
            }
            '<' => {
                if let Some(name) = token_at(&text, i) {
                    found.insert(name);
                }
                i + 1
            }
            _ => i + 1,
        };
    }
    found
}

/// The name of the token whose `<` is at `start`, if a seed key's name and a `>` follow it.
fn token_at(text: &[char], start: usize) -> Option<String> {
    let rest = text.get(start + 1..)?;
    let end = rest.iter().position(|c| *c == '>')?;
    let name: String = rest[..end].iter().collect();
    looks_like_a_key(&name).then_some(name)
}

/// A letter or `_`, then letters, digits, `_` or `-`.
fn looks_like_a_key(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn ends_word(c: char) -> bool {
    c.is_whitespace() || WORD_ENDS.contains(&c)
}

/// Just past the `quote` that closes the quote opened before `start`, or the end of the text when
/// none does. With `escapes` (`"…"`, `$'…'`) a `\` takes the character after it as text; without
/// (`'…'`) it is text itself.
fn after_closing(text: &[char], start: usize, quote: char, escapes: bool) -> usize {
    let mut i = start;
    while let Some(&c) = text.get(i) {
        if c == quote {
            return i + 1;
        }
        i += if c == '\\' && escapes { 2 } else { 1 };
    }
    text.len()
}

/// The index of the newline that ends the line `start` is on, or the end of the text.
fn line_end(text: &[char], start: usize) -> usize {
    text[start..]
        .iter()
        .position(|c| *c == '\n')
        .map_or(text.len(), |n| start + n)
}

/// The here-document opened by the `<<` just before `start`: its delimiter word, with its quotes
/// taken out as bash takes them, and where the command goes on after it. None when no word follows.
fn here_document(text: &[char], start: usize) -> (Option<HereDocument>, usize) {
    let strips_tabs = text.get(start) == Some(&'-');
    let mut i = start + usize::from(strips_tabs);
    while text.get(i).is_some_and(|c| *c == ' ' || *c == '\t') {
        i += 1;
    }
    let mut delimiter = String::new();
    while let Some(&c) = text.get(i) {
        if ends_word(c) {
            break;
        }
        match c {
            '\'' | '"' => {
                let escapes = c == '"';
                let end = after_closing(text, i + 1, c, escapes);
                let closed = text.get(end.wrapping_sub(1)) == Some(&c) && end > i + 1;
                let inner = &text[i + 1..if closed { end - 1 } else { end }];
                delimiter.extend(inner.iter().filter(|q| !escapes || **q != '\\'));
                i = end;
            }
            '\\' => {
                delimiter.extend(text.get(i + 1));
                i += 2;
            }
            _ => {
                delimiter.push(c);
                i += 1;
            }
        }
    }
    let doc = (!delimiter.is_empty()).then_some(HereDocument {
        delimiter,
        strips_tabs,
    });
    (doc, i)
}

/// Just past the line that ends `doc`'s lines, which start at `start`, or the end of the text.
fn after_here_document(text: &[char], start: usize, doc: &HereDocument) -> usize {
    let mut i = start;
    while i < text.len() {
        let end = line_end(text, i);
        let line: String = text[i..end].iter().collect();
        let line = match doc.strips_tabs {
            true => line.trim_start_matches('\t'),
            false => line.as_str(),
        };
        i = end + 1;
        if line == doc.delimiter {
            return i;
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(command: &str) -> Vec<String> {
        bare_tokens(command).into_iter().collect()
    }

    #[test]
    fn a_bare_token_is_one_bash_reads_as_a_redirection() {
        assert_eq!(names("echo <who> > who.txt"), ["who"]);
        assert_eq!(names("cp <from>/x <to_dir>"), ["from", "to_dir"]);
        assert_eq!(names("echo <a-b> <_c> <1x>"), ["_c", "a-b"]);
        // A word's `#` is no comment: `a#<who>` is a word, then a redirection.
        assert_eq!(names("echo a#<who>"), ["who"]);
    }

    #[test]
    fn a_shells_own_less_than_is_no_token() {
        for command in [
            "sort <hello.txt>out.txt",
            "sort <in.txt > out",
            "a < b > c",
            "grep -c '<title>' hello.txt || true",
            "cat <<EOF>out\nx\nEOF",
            "cat <<< word",
            "diff <(ls) <(ls -a)",
            "echo </b>",
        ] {
            assert_eq!(names(command), Vec::<String>::new(), "{command:?}");
        }
    }

    #[test]
    fn a_quoted_or_escaped_token_is_passed_as_written() {
        assert_eq!(
            names(r#"echo '<a>' "<b>" \<c> $'<d>' $"<e>""#),
            Vec::<String>::new()
        );
        // A `'` inside "…" opens nothing, nor a `"` inside '…'.
        assert_eq!(names(r#"echo "it's <a>" <b>"#), ["b"]);
        assert_eq!(names(r#"echo 'say "<a>' <b>"#), ["b"]);
        // An escaped quote inside "…" does not close it; an escaped one outside opens nothing.
        assert_eq!(names(r#"echo "a \"<a>\" b" <b>"#), ["b"]);
        assert_eq!(names(r#"echo \' <a> \" <b>"#), ["a", "b"]);
        // '…' has no escapes: its `\` is plain and its next `'` closes it.
        assert_eq!(names(r"echo 'a\' <a>"), ["a"]);
        // $'…' does: `\'` there leaves it open.
        assert_eq!(names(r"echo $'it\'s <a>' <b>"), ["b"]);
        // A quote never closed runs to the end of the command.
        assert_eq!(names("echo '<a> <b>"), Vec::<String>::new());
    }

    #[test]
    fn comments_and_here_documents_hold_no_redirections() {
        assert_eq!(names("echo hi # <a>\necho <b>"), ["b"]);
        assert_eq!(names("cat <<EOF > f\n<a>\nEOF\necho <b>"), ["b"]);
        assert_eq!(names("cat <<'END' <c>\n<a>\nEND\n<b>"), ["b", "c"]);
        assert_eq!(names("cat <<-\"E\"\n\t<a>\n\tE\n<b>"), ["b"]);
        assert_eq!(names("cat <<A; cat <<B\n<a>\nA\n<b>\nB\n<c>"), ["c"]);
        // A here-document never ended runs to the end of the command.
        assert_eq!(names("cat <<EOF\n<a>"), Vec::<String>::new());
    }
}
