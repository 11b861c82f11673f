//! The hint for a `bash_cmd_succeeds` command that could not start a script it names because the
//! script is not executable (exit 126, `./check.sh: Permission denied`): an artifact's files arrive
//! in a sandbox with their contents, not their modes, so a script it holds is not executable there.

/// The status bash exits with when it found a program but could not execute it.
const CANNOT_EXECUTE: i32 = 126;

/// For a command that exited `code` with `stderr`: a hint naming the script bash could not execute
/// and how to run it, when it is one the command names by a path (`./check.sh`).
pub fn hint(command: &str, code: i32, stderr: &str) -> Option<String> {
    if code != CANNOT_EXECUTE {
        return None;
    }
    let script = denied_script(command, stderr)?;
    let quoted = crate::quote::word(script);
    Some(format!(
        "({script} is not executable: an artifact's files arrive with their contents, not their modes; run it as bash {quoted}, or make it executable first: chmod +x {quoted} && {quoted})"
    ))
}

/// The path bash said `Permission denied` for (`bash: line 1: ./check.sh: Permission denied`),
/// when the command names it and it is a path, not a bare name.
fn denied_script<'s>(command: &str, stderr: &'s str) -> Option<&'s str> {
    stderr.lines().find_map(|line| {
        let before = line.trim_end().strip_suffix(": Permission denied")?;
        let script = before.rsplit_once(": ").map_or(before, |(_, s)| s);
        (script.contains('/') && command.contains(script)).then_some(script)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_bash_could_not_execute_gets_the_ways_to_run_it() {
        assert_eq!(
            hint("./check.sh --all", 126, "bash: line 1: ./check.sh: Permission denied\n").unwrap(),
            "(./check.sh is not executable: an artifact's files arrive with their contents, not their modes; run it as bash ./check.sh, or make it executable first: chmod +x ./check.sh && ./check.sh)"
        );
        assert!(hint(
            "'./my check.sh'",
            126,
            "bash: line 1: ./my check.sh: Permission denied"
        )
        .unwrap()
        .contains("run it as bash './my check.sh'"));
    }

    #[test]
    fn other_failures_get_no_hint() {
        // Another exit status, a path the command does not name, a bare name.
        assert_eq!(
            hint(
                "./check.sh",
                1,
                "bash: line 1: ./check.sh: Permission denied"
            ),
            None
        );
        assert_eq!(hint("./run.sh", 126, "./check.sh: Permission denied"), None);
        assert_eq!(
            hint("check", 126, "bash: line 1: check: Permission denied"),
            None
        );
        assert_eq!(
            hint(
                "./check.sh",
                126,
                "bash: line 1: ./check.sh: Is a directory"
            ),
            None
        );
    }
}
