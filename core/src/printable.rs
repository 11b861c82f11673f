//! Text from outside agent-env (a plugin's stderr, a task command's output, a step's error) made safe
//! for a terminal: a control character in it could move the cursor, erase a line and print a fake
//! `passed` over it, retitle the window or, on some terminals, write the clipboard. Each one is
//! shown as an escape (`\x1b`, `\r`) instead; new lines and tabs stay. Where colour is on, so do the
//! colour sequences agent-env's own styling writes ([`OWN_COLOURS`]), and a colour still in effect
//! where a line ends is reset there, so a command's `\x1b[31m` without its reset cannot paint the
//! lines after it; any other sequence (conceal, black on black) is shown as an escape, since it could
//! hide what follows. Where colour is off ([`for_terminal`]), no escape byte gets through at all: a CI
//! log or a file holds only text.
//!
//! Characters that draw nothing are shown as escapes too ([`is_invisible`]): the bidi controls, which
//! reorder what follows them so that the screen shows other text than the bytes hold ("trojan
//! source"), and the zero-width and other invisible format characters, which hide a difference
//! between two texts that look the same. They are written `\u202e`, as JSON and JavaScript write a
//! character (one beyond U+FFFF as its two UTF-16 halves, `\udb40\udc41`), so a JSON document
//! printed through these functions still parses, to the same text. A byte order mark (U+FEFF) at the
//! very start of a text is one, and stays.

use std::borrow::Cow;

/// The colour codes agent-env's styling paints with (`ESC [ <code> m`): reset, red, green, yellow,
/// bold red and dim. They only colour, and a reset ends each.
pub const OWN_COLOURS: [&str; 6] = ["0", "31", "32", "33", "1;31", "2"];

/// `text` with every control character but a new line, a tab and one of [`OWN_COLOURS`], and every
/// invisible character ([`is_invisible`]), shown as an escape; a colour left in effect at the end of
/// a line, or of the text, is reset there.
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped(text, true, Place::Start)
}

/// `text` as a stream of the terminal gets it: [`printable`] when the stream shows colour, [`plain`]
/// (not one escape byte) when it does not.
pub fn for_terminal(text: &str, colour: bool) -> Cow<'_, str> {
    match colour {
        true => printable(text),
        false => plain(text),
    }
}

/// `text` with every control character but a new line and a tab, colour included, and every invisible
/// character shown as an escape: for text that is shown inside agent-env's own (a plugin's description
/// in `--help`).
pub fn plain(text: &str) -> Cow<'_, str> {
    escaped(text, false, Place::Start)
}

/// [`plain`] for a piece of a longer text that does not start it (an object shown a piece at a time):
/// a byte order mark at the piece's start is inside the text, and shown as an escape.
pub fn plain_continued(text: &str) -> Cow<'_, str> {
    escaped(text, false, Place::Inside)
}

/// Whether `c` draws nothing and yet changes what a terminal shows or hides a difference: a bidi
/// control (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069), a zero-width or invisible
/// format character (U+200B, U+2060 to U+2064, U+FEFF, the soft hyphen, the tags of U+E0000 to
/// U+E007F), a line or paragraph separator, or a filler that looks like a space in a name (U+3164).
/// Variation selectors are not: they only pick how the character before them is drawn; nor are the
/// zero-width joiner and non-joiner (U+200D, U+200C), which Persian, the Indic scripts and emoji
/// sequences need to be written correctly.
pub fn is_invisible(c: char) -> bool {
    let code = u32::from(c);
    code >= INVISIBLE[0].0
        && INVISIBLE
            .iter()
            .any(|&(first, last)| (first..=last).contains(&code))
}

/// The ranges [`is_invisible`] holds, by code point: Unicode's default-ignorable characters but the
/// variation selectors and the two joiners, and the line and paragraph separators.
const INVISIBLE: [(u32, u32); 19] = [
    (0x00ad, 0x00ad),   // soft hyphen
    (0x034f, 0x034f),   // combining grapheme joiner
    (0x061c, 0x061c),   // Arabic letter mark
    (0x115f, 0x1160),   // Hangul choseong and jungseong fillers
    (0x17b4, 0x17b5),   // Khmer inherent vowels
    (0x180e, 0x180e),   // Mongolian vowel separator
    (0x200b, 0x200b),   // zero-width space
    (0x200e, 0x200f),   // left-to-right and right-to-left marks
    (0x2028, 0x202e),   // line and paragraph separators; bidi embeddings and overrides
    (0x2060, 0x206f), // word joiner, invisible operators, bidi isolates, deprecated format characters
    (0x3164, 0x3164), // Hangul filler
    (0xfeff, 0xfeff), // zero-width no-break space (a byte order mark)
    (0xffa0, 0xffa0), // halfwidth Hangul filler
    (0xfff0, 0xfffb), // unassigned specials, interlinear annotation
    (0x1bca0, 0x1bca3), // shorthand format controls
    (0x1d173, 0x1d17a), // musical symbol format characters
    (0xe0000, 0xe007f), // tags: invisible copies of ASCII
    (0xe0080, 0xe00ff), // unassigned, ignorable
    (0xe01f0, 0xe0fff), // unassigned, ignorable
];

/// Where a text stands in what is shown: at its start, where a byte order mark may stand, or inside.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Start,
    Inside,
}

/// Whether `c`, at byte `index` of a text at `place`, is shown as an escape.
fn needs_escape(c: char, index: usize, place: Place) -> bool {
    match c {
        '\n' | '\t' => false,
        '\u{feff}' if index == 0 && place == Place::Start => false,
        c => c.is_control() || is_invisible(c),
    }
}

fn escaped(text: &str, keep_own_colours: bool, place: Place) -> Cow<'_, str> {
    // Most lines are ASCII: their bytes are their characters, and only controls need an escape.
    let suspicious = if text.is_ascii() {
        text.bytes()
            .any(|b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f)
    } else {
        text.char_indices()
            .any(|(index, c)| needs_escape(c, index, place))
    };
    if !suspicious {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    // Whether a colour kept is still in effect (no reset has followed it).
    let mut coloured = false;
    while let Some(c) = rest.chars().next() {
        if c == '\u{1b}' && keep_own_colours {
            if let Some(len) = own_colour_len(rest) {
                coloured = &rest[..len] != RESET;
                out.push_str(&rest[..len]);
                rest = &rest[len..];
                continue;
            }
        }
        if c == '\n' && coloured {
            out.push_str(RESET);
            coloured = false;
        }
        let index = text.len() - rest.len();
        if needs_escape(c, index, place) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    if coloured {
        out.push_str(RESET);
    }
    Cow::Owned(out)
}

/// The sequence that ends every colour.
const RESET: &str = "\u{1b}[0m";

/// Appends the escape `c` is shown as: `\r`, `\x1b` for the other C0 controls and DEL, `\u{9b}` for
/// the C1 controls, and `\u202e` (UTF-16 halves beyond U+FFFF) for an invisible character.
fn push_escape(out: &mut String, c: char) {
    match c {
        '\r' => out.push_str("\\r"),
        c if u32::from(c) < 0x20 || c == '\u{7f}' => {
            out.push_str(&format!("\\x{:02x}", u32::from(c)))
        }
        c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        c => {
            for half in c.encode_utf16(&mut [0u16; 2]).iter() {
                out.push_str(&format!("\\u{half:04x}"));
            }
        }
    }
}

/// The length of the colour sequence of [`OWN_COLOURS`] that `text` starts with.
fn own_colour_len(text: &str) -> Option<usize> {
    let body = text.strip_prefix("\u{1b}[")?;
    let params = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    let code = &body[..params];
    (body.as_bytes().get(params) == Some(&b'm') && OWN_COLOURS.contains(&code))
        .then_some(2 + params + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_shown_and_colour_is_kept() {
        assert!(matches!(printable("plain\ttext\n"), Cow::Borrowed(_)));
        assert_eq!(
            printable("Value\u{1b}[32mError\u{1b}[0m: bad \u{1b}[2K\rpassed"),
            "Value\u{1b}[32mError\u{1b}[0m: bad \\x1b[2K\\rpassed"
        );
        assert_eq!(printable("\u{1b}]0;PWNED\u{7}"), "\\x1b]0;PWNED\\x07");
        assert_eq!(printable("a\u{9b}2Kb é"), "a\\u{9b}2Kb é");
        // Colour that could hide what follows is not agent-env's own.
        assert_eq!(
            printable("x\u{1b}[8m\u{1b}[30;40mhidden"),
            "x\\x1b[8m\\x1b[30;40mhidden"
        );
        assert_eq!(plain("\u{1b}[32mok\u{1b}[0m"), "\\x1b[32mok\\x1b[0m");
    }

    #[test]
    fn a_colour_left_on_is_reset_where_its_line_ends() {
        assert_eq!(
            printable("\u{1b}[31mRED\nnext"),
            "\u{1b}[31mRED\u{1b}[0m\nnext"
        );
        assert_eq!(printable("a \u{1b}[2mdim"), "a \u{1b}[2mdim\u{1b}[0m");
        // One ended by its own reset needs none, nor does a line after the reset.
        assert_eq!(
            printable("\u{1b}[32mok\u{1b}[0m\n\u{1b}[0m"),
            "\u{1b}[32mok\u{1b}[0m\n\u{1b}[0m"
        );
        assert_eq!(
            printable("\u{1b}[33mx\u{1b}[31my\n"),
            "\u{1b}[33mx\u{1b}[31my\u{1b}[0m\n"
        );
    }

    #[test]
    fn without_colour_no_escape_byte_gets_through() {
        let text = "A\u{1b}[2JB\u{1b}[0mF\u{1b}[31mRED\n";
        let off = for_terminal(text, false);
        assert!(!off.contains('\u{1b}'), "{off}");
        assert_eq!(off, "A\\x1b[2JB\\x1b[0mF\\x1b[31mRED\n");
        assert_eq!(
            for_terminal(text, true),
            "A\\x1b[2JB\u{1b}[0mF\u{1b}[31mRED\u{1b}[0m\n"
        );
    }

    #[test]
    fn bidi_controls_are_shown_as_escapes() {
        // The trojan-source line: on a terminal it reads as a comment after a check.
        assert_eq!(
            plain(
                "if access_level != \"user\u{202e} \u{2066}// Check if admin\u{2069} \u{2066}\" {"
            ),
            "if access_level != \"user\\u202e \\u2066// Check if admin\\u2069 \\u2066\" {"
        );
        for (c, shown) in [
            ('\u{202a}', "\\u202a"),
            ('\u{202b}', "\\u202b"),
            ('\u{202c}', "\\u202c"),
            ('\u{202d}', "\\u202d"),
            ('\u{2067}', "\\u2067"),
            ('\u{2068}', "\\u2068"),
            ('\u{200e}', "\\u200e"),
            ('\u{200f}', "\\u200f"),
            ('\u{061c}', "\\u061c"),
        ] {
            assert_eq!(printable(&format!("a{c}b")), format!("a{shown}b"), "{c:?}");
        }
    }

    #[test]
    fn invisible_characters_are_shown_as_escapes() {
        assert_eq!(plain("pass\u{200b}word"), "pass\\u200bword");
        // The joiners stay: words of several scripts and emoji sequences need them.
        assert_eq!(
            plain("\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}"),
            "\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}"
        );
        assert_eq!(
            plain("\u{1f469}\u{200d}\u{1f4bb}"),
            "\u{1f469}\u{200d}\u{1f4bb}"
        );
        assert_eq!(plain("word\u{2060}joiner"), "word\\u2060joiner");
        assert_eq!(plain("soft\u{ad}hyphen"), "soft\\u00adhyphen");
        assert_eq!(plain("line\u{2028}break"), "line\\u2028break");
        assert_eq!(plain("name\u{3164}"), "name\\u3164");
        // A tag beyond U+FFFF (an invisible 'A') as its two UTF-16 halves.
        assert_eq!(plain("x\u{e0041}"), "x\\udb40\\udc41");
        // With a control character in the same text, each shown its own way.
        assert_eq!(printable("\u{200b}\r\u{9b}"), "\\u200b\\r\\u{9b}");
    }

    #[test]
    fn a_byte_order_mark_is_kept_only_at_the_start_of_a_text() {
        assert!(matches!(plain("\u{feff}text"), Cow::Borrowed(_)));
        assert_eq!(plain("te\u{feff}xt"), "te\\ufeffxt");
        assert_eq!(plain("\u{feff}a\u{feff}"), "\u{feff}a\\ufeff");
        assert_eq!(plain_continued("\u{feff}more"), "\\ufeffmore");
        assert_eq!(plain_continued("more\x1b"), "more\\x1b");
    }

    #[test]
    fn visible_text_in_any_script_is_kept_as_it_is() {
        for text in [
            "é and ✓",
            "עברית ومعها عربية",
            "❤\u{fe0f} 👍🏽",
            "日本語\tテキスト\n",
        ] {
            assert!(matches!(printable(text), Cow::Borrowed(_)), "{text}");
            assert!(matches!(plain(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn a_json_document_stays_json_holding_the_same_text() {
        let text = "a\u{202e}b\u{200d}c\u{feff}d\u{e0041}";
        let document = serde_json::to_string(&serde_json::json!({ "text": text })).unwrap();
        let shown = printable(&document);
        assert!(!shown.contains('\u{202e}'), "{shown}");
        let parsed: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(parsed["text"], text);
    }
}
