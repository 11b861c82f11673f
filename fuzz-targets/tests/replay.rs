//! The fuzz targets on stable Rust: every corpus file, then mutations of them (bytes flipped, inserted,
//! deleted, spliced from another file, escape sequences and odd values put in), for a bounded number of
//! inputs per target: `AGENT_ENV_FUZZ_ITERATIONS` (default 3,000), reproducible from
//! `AGENT_ENV_FUZZ_SEED`. A failing input is written to `target/fuzz-failures/` and named in the panic.

use std::path::{Path, PathBuf};

use agent_env_fuzz_targets::TARGETS;

/// A small deterministic generator (xorshift), so a failure replays from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Fragments that reach the corners of TOML and JSON parsers and of agent-env's own readers.
const FRAGMENTS: [&str; 16] = [
    "\\u006b",
    "\"",
    "=",
    "[",
    "]]",
    "{",
    "}",
    ",",
    "\n",
    "5",
    "true",
    "\"env:X\"",
    "\"secret:y\"",
    "\"../../x\"",
    "1e999",
    "null",
];

fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(5) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 => out.insert(at, rng.next() as u8),
            2 if !out.is_empty() => {
                let end = (at + rng.below(8)).min(out.len());
                out.drain(at.min(end)..end);
            }
            3 if !other.is_empty() => {
                let start = rng.below(other.len());
                let end = (start + rng.below(32)).min(other.len());
                out.splice(at..at, other[start..end].iter().copied());
            }
            _ => {
                let fragment = FRAGMENTS[rng.below(FRAGMENTS.len())].as_bytes();
                out.splice(at..at, fragment.iter().copied());
            }
        }
    }
    out
}

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the corpus {} cannot be read: {e}", dir.display()))
        .map(|e| e.expect("a corpus entry").path())
        .map(|p| {
            let data = std::fs::read(&p).expect("a corpus file");
            (p, data)
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus {} is empty", dir.display());
    files
}

fn run_one(target: &str, run: fn(&[u8]), input: &[u8], label: &str) {
    let outcome = std::panic::catch_unwind(|| run(input));
    if let Err(panic) = outcome {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fuzz-failures");
        let _ = std::fs::create_dir_all(&dir);
        let file = dir.join(format!("{target}-{label}"));
        let _ = std::fs::write(&file, input);
        let why = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        panic!(
            "the {target} target failed on {} ({label}): {why}",
            file.display()
        );
    }
}

#[test]
fn every_target_survives_its_corpus_and_its_mutations() {
    let iterations: usize = std::env::var("AGENT_ENV_FUZZ_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3_000);
    let seed: u64 = std::env::var("AGENT_ENV_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_a6e7_0000_0001);
    for (target, run) in TARGETS {
        let files = corpus(target);
        for (path, data) in &files {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            run_one(target, run, data, &format!("corpus-{name}"));
        }
        let mut rng = Rng(seed ^ target.len() as u64);
        for i in 0..iterations {
            let base = &files[rng.below(files.len())].1;
            let other = &files[rng.below(files.len())].1;
            let input = mutate(&mut rng, base, other);
            run_one(target, run, &input, &format!("seed-{seed}-input-{i}"));
        }
    }
}
