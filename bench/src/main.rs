//! `cargo run --release -p agent-env-bench [-- SECTION]`: prints the figures of each section.
//!
//! To add an area: write `src/<area>.rs` with `pub fn run() -> Result<(), String>` that prints its
//! figures, add `mod <area>;` below and one line to `SECTIONS`.

mod cli;
mod config;
mod explorer;
mod host;
mod hosted;
mod openciv3;
mod plugin_stores;
mod proc;
mod python;
mod report;
mod run;
mod runtimes;
mod scale;
mod stats;
mod stores;
mod throughput;

/// A bench section: its name (the CLI argument), what it measures, and the function that prints it.
struct Section {
    name: &'static str,
    about: &'static str,
    run: fn() -> Result<(), String>,
}

const SECTIONS: &[Section] = &[
    Section {
        name: "host",
        about: "plugin spawn + handshake, warm call round trip, 16 MiB payloads",
        run: host::run,
    },
    Section { name: "stores", about: "built-in object store: 134 MB put_file/download_to_file, 10,000 small puts; SQLite inserts", run: stores::run },
    Section {
        name: "report",
        about: "agent-env --version, plugin list --no-load (200 manifests), plugin list --json (20 plugins)",
        run: report::run,
    },
    Section { name: "config", about: "config load + parse, plugin settings, store selection; config show/check as processes", run: config::run },
    Section {
        name: "run",
        about: "agent-env run hello: clean state, unchanged reruns, dry run, peak memory",
        run: run::run,
    },
    Section {
        name: "openciv3",
        about: "the OpenCiv3 plugin's CAS store: 134 MB put_file, small puts/reads, gc, put_file through the pipe",
        run: openciv3::run,
    },
    Section { name: "cli", about: "a plugin command against its executable run directly; agent-env --version and --help", run: cli::run },
    Section { name: "python", about: "Python SDK plugin: spawn to initialize answered, against the bare interpreter and the plugin new template", run: python::run },
    Section { name: "plugin_stores", about: "the built-in object store vs the same store in a plugin: 134 MB put_file/download_to_file, peak memory, 10,000 small puts", run: plugin_stores::run },
    Section { name: "throughput", about: "bundles of 100 and 1,000 tasks (built-in, Rust and Python plugin steps), clean and rerun; plugin list --json with 20 Python plugins", run: throughput::run },
    Section { name: "runtimes", about: "the stdio peer against a tokio line loop and jsonrpsee over a child's pipes, 64 B and 64 KiB echo calls", run: runtimes::run },
    Section { name: "scale", about: "cost at three sizes: manifests on PATH, plugins started, task instances in the store, object size", run: scale::run },
    Section { name: "explorer", about: "agent-env up: start to first answer, idle memory, the instance list with 1,000 instances, 200 concurrent clients for 10 s", run: explorer::run },
    Section { name: "hosted", about: "S3ObjectStore on SeaweedFS: 134 MB put_file/download_to_file, peak memory, 1,000 small puts; the document workload on PostgreSQL and SQLite", run: hosted::run },
    // Other areas: one entry each.
];

fn main() {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    if wanted.first().map(String::as_str) == Some(run::PEAK_RSS_PROBE) {
        std::process::exit(run::peak_rss_probe(&wanted[1..]));
    }
    if wanted.iter().any(|a| a == "-h" || a == "--help") {
        print_sections();
        return;
    }
    let unknown: Vec<&String> = wanted
        .iter()
        .filter(|w| !SECTIONS.iter().any(|s| s.name == w.as_str()))
        .collect();
    if !unknown.is_empty() {
        eprintln!("agent-env-bench: no section named {unknown:?}");
        print_sections();
        std::process::exit(2);
    }
    if cfg!(debug_assertions) {
        eprintln!("agent-env-bench: this is a debug build; run with --release for real figures");
    }
    let mut failed = false;
    for section in SECTIONS {
        if !wanted.is_empty() && !wanted.iter().any(|w| w == section.name) {
            continue;
        }
        println!("== {} ({})", section.name, section.about);
        if let Err(e) = (section.run)() {
            eprintln!("agent-env-bench: section {} failed: {e}", section.name);
            failed = true;
        }
        println!();
    }
    if failed {
        std::process::exit(1);
    }
}

fn print_sections() {
    eprintln!("usage: agent-env-bench [SECTION...]; sections:");
    for s in SECTIONS {
        eprintln!("  {:<10} {}", s.name, s.about);
    }
}
