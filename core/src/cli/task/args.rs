//! The command line of `agent-env task`: its subcommands and their arguments.

use clap::{Args, Subcommand};

#[derive(Args)]
pub struct TaskArgs {
    #[command(subcommand)]
    pub command: TaskCommand,
}

#[derive(Subcommand)]
pub enum TaskCommand {
    /// Store task files (JSON arrays of steps) in the configured document store, each as a new version.
    Put(PutArgs),
    /// Run a stored task against the configured stores; its instances and objects go there.
    Run(RunTaskArgs),
    /// Show a stored task: its latest version (or the one asked for) and its steps.
    Get(GetTaskArgs),
    /// List the instances of one task (a stored task's id, or a bundle task's name or id), newest first.
    Instances(InstancesArgs),
    /// List the task instances past runs recorded, newest first.
    List(ListArgs),
    /// Show one task instance: status, scores, steps with their timings, the error.
    GetInstance(GetArgs),
    /// Delete the task instances past runs recorded that are older than an age or beyond the newest N
    /// of their task (running ones are kept).
    Prune(PruneArgs),
}

#[derive(Args)]
pub struct PutArgs {
    /// Task files: a JSON array of steps, or an object with a `steps` array; `-` reads one from stdin
    /// (give it an id with --id, unless it names one).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<std::path::PathBuf>,
    /// The task's id (a bare id, such as team/hello); with one file only. Default: the `id` of a
    /// file in object form (as `task get ID --json` prints one), else the file's name without `.json`.
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// Print JSON for a script: each task's id and the version it was stored as.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct RunTaskArgs {
    /// The stored task's id, as `task put` printed it.
    #[arg(value_parser = task_id)]
    pub id: String,
    /// Run it this many times (at most 10000), in one run group (at most four at once).
    #[arg(
        long,
        default_value_t = 1,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = run_count
    )]
    pub runs: usize,
    /// The sandbox provider (a comma-separated fallback chain); default: the config's `[sandbox] default`, else the built-in `local`.
    #[arg(long, value_name = "PROVIDER")]
    pub sandbox: Option<String>,
    /// Keep the sandboxes up after the run, until Ctrl-C.
    #[arg(long)]
    pub keep: bool,
    /// Print the run as one JSON document on stdout (progress still goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// Exit 3 when a run scores below this (a run with no score counts as below); from 0 to 1.
    #[arg(
        long,
        value_name = "SCORE",
        allow_negative_numbers = true,
        value_parser = crate::cli::run::fail_under_score
    )]
    pub fail_under: Option<f64>,
    /// Leave out the line per step: print how each run ended (and why below 1) and the summary.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Args)]
pub struct GetTaskArgs {
    /// The stored task's id, or the @local id of a task a bundle run recorded (as `task list` prints it).
    pub id: String,
    /// This version instead of the latest.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = version_number)]
    pub version: Option<i64>,
    /// Print the task document as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct InstancesArgs {
    /// The task: a stored task's id, or a bundle task's name or id.
    pub id: String,
    /// At most this many (0: all).
    #[arg(
        long,
        default_value_t = 20,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = count
    )]
    pub limit: usize,
    /// Print JSON for a script instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct ListArgs {
    /// Only instances of this bundle: its name (`hello`), the end of its folder path, or the folder as
    /// `run` was given it (`./my-bundle`, `~/bundles/b`).
    #[arg(long, value_name = "BUNDLE")]
    pub bundle: Option<String>,
    /// Only instances of this task (its name, e.g. `hello`, or its full id).
    #[arg(long, value_name = "TASK")]
    pub task: Option<String>,
    /// At most this many (0: all).
    #[arg(
        long,
        default_value_t = 20,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = count
    )]
    pub limit: usize,
    /// Print JSON for a script instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct PruneArgs {
    /// Delete instances that started longer ago than this: a whole number and a unit, such as 30d,
    /// 12h, 90m or 2w.
    #[arg(
        long,
        value_name = "AGE",
        allow_hyphen_values = true,
        value_parser = super::age::parse_age
    )]
    pub older_than: Option<std::time::Duration>,
    /// Keep the newest N instances of each task and delete the others (with --older-than, only those
    /// of the others that are also older).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = count)]
    pub keep_last: Option<usize>,
    /// Only instances of this bundle: its name, the end of its folder path, or the folder.
    #[arg(long, value_name = "BUNDLE")]
    pub bundle: Option<String>,
    /// Only instances of this task (its name, e.g. `hello`, or its full id).
    #[arg(long, value_name = "TASK")]
    pub task: Option<String>,
    /// List what would be deleted, and delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print JSON for a script instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct GetArgs {
    /// The instance id as `run` and `task list` print it (the part after the last `/` is enough when
    /// it is unique).
    pub instance: String,
    /// Print the whole instance document as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A count an option takes (`--limit`, `--keep-last`): a whole number, 0 or more.
fn count(text: &str) -> Result<usize, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("a whole number, 0 or more, is wanted, not '{text}'"))
}

/// The id `task run` is given: not empty, so the answer can name the task.
fn task_id(text: &str) -> Result<String, String> {
    match text.trim().is_empty() {
        true => Err(
            "the task id is empty; give the id of a stored task, as agent-env task put printed it (such as team/hello)"
                .to_string(),
        ),
        false => Ok(text.to_string()),
    }
}

/// A version `--version` asks for (`task get`, `artifact get`): a whole number, 1 or more, as
/// versions are counted from 1.
pub(crate) fn version_number(text: &str) -> Result<i64, String> {
    text.trim()
        .parse()
        .ok()
        .filter(|v: &i64| *v >= 1)
        .ok_or_else(|| format!("a version is a whole number, 1 or more, not '{text}'"))
}

/// How many runs `--runs` asks for: a whole number; how many it may be is said by the run, which
/// refuses 0 and more than its bound with their own reasons.
fn run_count(text: &str) -> Result<usize, String> {
    text.trim().parse().map_err(|_| {
        format!(
            "a whole number from 1 to {} is wanted, not '{text}'",
            crate::run::stored_task::MAX_RUNS
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_says_what_it_wants() {
        assert_eq!(count("20"), Ok(20));
        assert_eq!(
            count("-1"),
            Err("a whole number, 0 or more, is wanted, not '-1'".to_string())
        );
        assert_eq!(version_number("2"), Ok(2));
        assert_eq!(
            version_number("-1"),
            Err("a version is a whole number, 1 or more, not '-1'".to_string())
        );
        assert_eq!(run_count("3"), Ok(3));
        assert_eq!(
            run_count("99999999999999999999"),
            Err("a whole number from 1 to 10000 is wanted, not '99999999999999999999'".to_string())
        );
    }
}
