//! What a manifest's text says when a plugin wrote something to stdout before its SDK took stdout
//! over: the manifest a built plugin printed for `--agent-env-manifest`, or one a user wrote by
//! redirecting that output to a file, then starts with that stray line.

/// A hint when `text`, a manifest a plugin printed, starts with a line no manifest starts with: output
/// the plugin wrote before its SDK's serve took stdout over (a print at import, in an `init` function).
/// Empty when the first line is a manifest's.
pub fn stray_first_line(text: &str) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let trimmed = first.trim_start();
    if trimmed.starts_with('[') || trimmed.starts_with('#') {
        return String::new();
    }
    format!(
        "; its first line, '{first}', is no manifest line: something in the plugin writes to stdout before serve is called (a print at import or in an init function); write it to stderr instead"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stray_first_line_is_pointed_out() {
        assert_eq!(stray_first_line("[plugin]\nname = 'x'\n"), "");
        assert_eq!(stray_first_line("# made by the SDK\n[plugin]\n"), "");
        let hint = stray_first_line("init: loading config\n[plugin]\n");
        assert!(
            hint.contains("its first line, 'init: loading config', is no manifest line"),
            "{hint}"
        );
    }
}
