//! What a manifest's text says when a plugin wrote something to stdout before its SDK took stdout
//! over: the manifest a built plugin printed for `--agent-env-manifest`, or one a user wrote by
//! redirecting that output to a file, then starts with that stray line.

/// A hint when `text`, a manifest a plugin printed, starts with a line no manifest starts with: output
/// the plugin wrote before its SDK's serve took stdout over (a print at import, in an `init` function).
/// Empty when the first line could be a manifest's (a table, a comment, a `key = value`).
pub fn stray_first_line(text: &str) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if could_be_toml(first) {
        return String::new();
    }
    format!(
        "; its first line, '{first}', is no manifest line: something in the plugin writes to stdout before serve is called (a print at import or in an init function); write it to stderr instead"
    )
}

/// Whether `line` reads as a line of TOML: a table header, a comment or a `key = value`.
fn could_be_toml(line: &str) -> bool {
    let line = line.trim_start();
    let bare_key = |key: &str| {
        let key = key.trim();
        !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.\"' ".contains(c))
    };
    line.starts_with('[')
        || line.starts_with('#')
        || line.split_once('=').is_some_and(|(key, _)| bare_key(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stray_first_line_is_pointed_out() {
        assert_eq!(stray_first_line("[plugin]\nname = 'x'\n"), "");
        assert_eq!(stray_first_line("# made by the SDK\n[plugin]\n"), "");
        assert_eq!(stray_first_line("name = 'x'\n"), "");
        assert_eq!(stray_first_line("\n  [plugin]\n"), "");
        let hint = stray_first_line("init: loading config\n[plugin]\n");
        assert!(
            hint.contains("its first line, 'init: loading config', is no manifest line"),
            "{hint}"
        );
    }
}
