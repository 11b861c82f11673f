//! `agentenv-openciv3 gc --root R` (and `agent-env openciv3 gc`): run the store's garbage collection and
//! say what it removed.

use std::io::Write;
use std::time::Duration;

use clap::Parser;

use crate::cas::{CasConfig, ContentAddressedObjectStore, GcOptions, GcReport, DEFAULT_BUCKET};

/// Remove blobs no key references and staged files abandoned by writers that died.
#[derive(Debug, Parser)]
#[command(
    name = "gc",
    about = "Remove unreferenced blobs and abandoned staged files from a content-addressed store"
)]
pub struct GcArgs {
    /// The store root (the `root` of its config table; `~` is expanded).
    #[arg(long)]
    pub root: String,
    /// Staged files younger than this many seconds are kept even when no writer holds them.
    #[arg(long, default_value_t = 3600)]
    pub staged_grace_seconds: u64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs gc with `args`, writing the report to `out` and errors to `err`; returns the exit status.
pub fn run_gc(args: &GcArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let store = match CasConfig::new(&args.root, DEFAULT_BUCKET) {
        Ok(config) => ContentAddressedObjectStore::new(config),
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            return 1;
        }
    };
    let options = GcOptions {
        staged_grace: Duration::from_secs(args.staged_grace_seconds),
    };
    match store.gc(&options) {
        Ok(report) => {
            let written = if args.json {
                serde_json::to_string(&report)
                    .map_err(std::io::Error::other)
                    .and_then(|json| writeln!(out, "{json}"))
            } else {
                writeln!(out, "{}", summary(&store, &report, options.staged_grace))
            };
            i32::from(written.is_err())
        }
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            1
        }
    }
}

fn summary(store: &ContentAddressedObjectStore, report: &GcReport, grace: Duration) -> String {
    let mut text = format!(
        "Removed {} unreferenced {} ({}) and {} abandoned staged {} from {}; {} {} on disk.",
        report.blobs_removed,
        plural(report.blobs_removed, "blob", "blobs"),
        human_bytes(report.bytes_removed),
        report.staged_removed,
        plural(report.staged_removed, "file", "files"),
        store.root().display(),
        report.blobs_seen - report.blobs_removed,
        plural(
            report.blobs_seen - report.blobs_removed,
            "blob stays",
            "blobs stay"
        ),
    );
    if report.blobs_kept_young > 0 {
        text.push_str(&format!(
            "\nKept {} unreferenced {} written while gc ran; the next gc removes them.",
            report.blobs_kept_young,
            plural(report.blobs_kept_young, "blob", "blobs")
        ));
    }
    if report.staged_kept > 0 {
        let young = report.staged_kept - report.staged_kept_in_use;
        text.push_str(&format!(
            "\nKept {} staged {} ({}): {} younger than the grace period ({} s), {} still being written. \
             A writer killed mid-put leaves one; once no writer runs, `gc --staged-grace-seconds 0` removes them.",
            report.staged_kept,
            plural(report.staged_kept, "file", "files"),
            human_bytes(report.staged_kept_bytes),
            young,
            grace.as_secs(),
            report.staged_kept_in_use,
        ));
    }
    if !report.dangling_digests.is_empty() {
        text.push_str(&format!(
            "\nwarning: {} indexed {} missing (removed outside the store): {}",
            report.dangling_digests.len(),
            plural(report.dangling_digests.len(), "blob is", "blobs are"),
            report.dangling_digests.join(", ")
        ));
    }
    text
}

fn plural<'a>(count: usize, one: &'a str, many: &'a str) -> &'a str {
    if count == 1 {
        one
    } else {
        many
    }
}

/// `1.2 MB`-style sizes (decimal units).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
