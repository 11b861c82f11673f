//! Records the commit the binary is built from, for `agent-env --version`: `AGENT_ENV_BUILD_COMMIT`
//! when the packager sets it, else what git says about the checkout, else nothing. Also has cargo
//! rebuild the executables when `AGENT_ENV_BUILD_DYNAMIC` changes (see scripts/rustc-static-exe).

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-env-changed=AGENT_ENV_BUILD_COMMIT");
    // Read by scripts/rustc-static-exe, which cargo does not watch: a change relinks the executables.
    println!("cargo:rerun-if-env-changed=AGENT_ENV_BUILD_DYNAMIC");
    let commit = std::env::var("AGENT_ENV_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| {
            let hash = git(&["rev-parse", "--short=12", "HEAD"])?;
            let date = git(&["log", "-1", "--format=%cs", "HEAD"]).unwrap_or_default();
            Some(format!("{hash} {date}").trim().to_string())
        });
    // Rebuild when HEAD moves: HEAD itself, the ref it points at, the packed refs. Only files that
    // exist are named (cargo reruns the script on every build for a missing one).
    let mut watched = vec![git(&["rev-parse", "--git-path", "HEAD"])];
    watched.push(git(&["rev-parse", "--git-path", "packed-refs"]));
    if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(git(&["rev-parse", "--git-path", &reference]));
    }
    for path in watched.into_iter().flatten().map(PathBuf::from) {
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let build = match &commit {
        Some(commit) => format!("{version} ({commit})"),
        None => version,
    };
    println!("cargo:rustc-env=AGENT_ENV_BUILD={build}");
    println!(
        "cargo:rustc-env=AGENT_ENV_COMMIT={}",
        commit.unwrap_or_default()
    );
}
