//! One command's manual page in roff: clap_mangen's sections, with a synopsis and an after-help of
//! our own. clap_mangen's synopsis leaves out what an option takes (`[--task]` where `--help` says
//! `--task <NAME>`) and that an argument repeats, and it joins the after-help's lines into one
//! paragraph, so an example per line ran together. Its list of subcommands named each by a page
//! (`agent-env-plugin-add(1)`) that `man` cannot find, since agent-env installs none: ours names each
//! as typed, and how to print its page (`agent-env man plugin add`).

use clap::{Arg, ArgAction, Command};
use clap_mangen::Man;
use roff::{bold, italic, roman, Inline, Roff};

/// The page of `cmd`, which is built (each command holding the global options it accepts); `typed`
/// is the command as a user types it (`agent-env plugin`), which its subcommands are named after.
pub fn render(cmd: Command, typed: &str) -> Result<Vec<u8>, std::io::Error> {
    let man = Man::new(cmd.clone());
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    synopsis(&cmd).to_writer(&mut page)?;
    man.render_description_section(&mut page)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut page)?;
    }
    if let Some(section) = subcommands(&cmd, typed) {
        section.to_writer(&mut page)?;
    }
    if let Some(extra) = after_help(&cmd) {
        extra.to_writer(&mut page)?;
    }
    if cmd.get_version().is_some() || cmd.get_long_version().is_some() {
        man.render_version_section(&mut page)?;
    }
    if cmd.get_author().is_some() {
        man.render_authors_section(&mut page)?;
    }
    Ok(page)
}

/// `SYNOPSIS`, as the help's usage would read with every option spelled out: its options in the
/// help's order, each with the value it takes and `...` when it repeats, then the arguments and
/// the subcommand.
fn synopsis(cmd: &Command) -> Roff {
    let name = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name());
    let mut line = vec![bold(name)];
    let mut options: Vec<&Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
        .collect();
    options.sort_by_key(|a| a.get_display_order());
    for option in options {
        line.push(roman(" "));
        line.extend(option_usage(option));
    }
    for argument in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        line.push(roman(" "));
        line.extend(bracketed(
            argument.is_required_set(),
            vec![italic(value_names(argument).join(" "))],
            repeats(argument),
        ));
    }
    if cmd.get_subcommands().any(|c| !c.is_hide_set()) {
        let value = cmd.get_subcommand_value_name().unwrap_or("COMMAND");
        line.push(roman(" "));
        line.extend(bracketed(
            cmd.is_subcommand_required_set(),
            vec![italic(value)],
            false,
        ));
    }
    let mut roff = Roff::new();
    roff.control("SH", ["SYNOPSIS"]);
    roff.text(line);
    roff
}

/// `[-t|--task NAME]...`: the option's spellings, the values it takes, whether it repeats.
fn option_usage(option: &Arg) -> Vec<Inline> {
    let mut inner = match (option.get_short(), option.get_long()) {
        (Some(short), Some(long)) => vec![
            bold(format!("-{short}")),
            roman("|"),
            bold(format!("--{long}")),
        ],
        (Some(short), None) => vec![bold(format!("-{short}"))],
        (None, Some(long)) => vec![bold(format!("--{long}"))],
        (None, None) => vec![bold(option.get_id().to_string())],
    };
    if option.get_action().takes_values() {
        let values = italic(value_names(option).join(" "));
        match option.get_num_args().is_some_and(|n| n.min_values() == 0) {
            true => inner.extend([roman(" ["), values, roman("]")]),
            false => inner.extend([roman(" "), values]),
        }
    }
    bracketed(option.is_required_set(), inner, repeats(option))
}

/// What the help calls an argument's values: its value names, else its id in capitals.
fn value_names(arg: &Arg) -> Vec<String> {
    match arg.get_value_names() {
        Some(names) if !names.is_empty() => names.iter().map(|n| n.to_string()).collect(),
        _ => vec![arg.get_id().as_str().to_uppercase()],
    }
}

/// Whether an argument is given more than once, or takes more than one value, as `...` says.
fn repeats(arg: &Arg) -> bool {
    let many_values = arg
        .get_num_args()
        .is_some_and(|n| n.max_values() > 1 && n.max_values() > value_names(arg).len());
    matches!(arg.get_action(), ArgAction::Append | ArgAction::Count) || many_values
}

/// `inner` as a required part (`inner`) or an optional one (`[inner]`), then `...` if it repeats.
fn bracketed(required: bool, inner: Vec<Inline>, repeats: bool) -> Vec<Inline> {
    let mut line = Vec::new();
    if !required {
        line.push(roman("["));
    }
    line.extend(inner);
    if !required {
        line.push(roman("]"));
    }
    if repeats {
        line.push(roman("..."));
    }
    line
}

/// `SUBCOMMANDS`: each subcommand as typed (`agent-env plugin add`) with what it does, and how to
/// print its page; `help` is left out (it is `--help`). `None` for a command without subcommands.
fn subcommands(cmd: &Command, typed: &str) -> Option<Roff> {
    let listed: Vec<&Command> = cmd
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .collect();
    if listed.is_empty() {
        return None;
    }
    let mut roff = Roff::new();
    roff.control("SH", ["SUBCOMMANDS"]);
    roff.text([
        roman("Each has a page of its own: "),
        bold(format!("agent-env man {}", typed_after_program(typed))),
        italic("COMMAND"),
        roman("."),
    ]);
    for sub in listed {
        roff.control("TP", []);
        roff.text([bold(format!("{typed} {}", sub.get_name()))]);
        if let Some(about) = sub.get_long_about().or_else(|| sub.get_about()) {
            roff.text([roman(about.to_string())]);
        }
    }
    Some(roff)
}

/// `plugin ` of `agent-env plugin`: the words after the program's name, each followed by a space.
fn typed_after_program(typed: &str) -> String {
    typed
        .split_whitespace()
        .skip(1)
        .map(|word| format!("{word} "))
        .collect()
}

/// `EXTRA`: the after-help, each of its lines on a line of its own, indented as written (an
/// example per line), where clap_mangen filled them into one paragraph.
fn after_help(cmd: &Command) -> Option<Roff> {
    let text = cmd
        .get_after_long_help()
        .or_else(|| cmd.get_after_help())?
        .to_string();
    let mut roff = Roff::new();
    roff.control("SH", ["EXTRA"]);
    roff.control("nf", []);
    for line in text.lines() {
        roff.text([roman(line)]);
    }
    roff.control("fi", []);
    Some(roff)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synopsis_of(cmd: Command) -> String {
        let mut cmd = cmd.bin_name("prog");
        cmd.build();
        synopsis(&cmd).to_roff()
    }

    #[test]
    fn options_show_their_values_and_repeats() {
        let text = synopsis_of(
            Command::new("prog")
                .arg(
                    Arg::new("task")
                        .long("task")
                        .value_name("NAME")
                        .action(ArgAction::Append),
                )
                .arg(
                    Arg::new("quiet")
                        .short('q')
                        .long("quiet")
                        .action(ArgAction::SetTrue),
                )
                .arg(Arg::new("files").num_args(1..).required(true)),
        );
        assert!(
            text.contains("[\\fB\\-\\-task\\fR \\fINAME\\fR]..."),
            "{text}"
        );
        assert!(
            text.contains("[\\fB\\-q\\fR|\\fB\\-\\-quiet\\fR]"),
            "{text}"
        );
        assert!(text.contains("\\fIFILES\\fR..."), "{text}");
    }
}
