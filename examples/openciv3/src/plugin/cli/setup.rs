//! `agent-env openciv3 setup`: build the env image (docker buildx), save it as a tarball, and store the
//! tarball through the host's configured object store with `put_file` (by path, never in memory).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use agent_env_plugin_sdk::{HostHandle, ObjectStore};
use clap::Args;

use super::progress::Progress;
use crate::gc_command::human_bytes;

/// Build and store the OpenCiv3 env image.
#[derive(Debug, Args)]
pub struct SetupArgs {
    /// The env's id; the image is `mcp-server-<id>`.
    #[arg(long, default_value = "openciv3")]
    pub id: String,
    /// The OpenCiv3 env checkout (default: the current directory).
    #[arg(long)]
    pub source: Option<PathBuf>,
    /// The platform to build for (default: this machine's).
    #[arg(long)]
    pub platform: Option<String>,
    /// Use this existing image instead of building one.
    #[arg(long)]
    pub image: Option<String>,
    /// Build the client target.
    #[arg(long)]
    pub client: bool,
    /// Also build the A2A players (needs the checkout's agents).
    #[arg(long)]
    pub agent: bool,
    /// Store this existing image tarball (docker save output) instead of building and saving one.
    #[arg(long, value_name = "FILE")]
    pub tarball: Option<PathBuf>,
}

/// The object key of the tarball: `artifacts/docker_image/mcp-server-<id>/<n>/mcp-server-<id>-v<n>.<ext>`.
pub fn tarball_key(id: &str, version: u64, gzipped: bool) -> String {
    let ext = if gzipped { "tar.gz" } else { "tar" };
    format!("artifacts/docker_image/mcp-server-{id}/{version}/mcp-server-{id}-v{version}.{ext}")
}

/// The next version: one more than the highest stored under the image's prefix.
pub fn next_version(keys: &[String], id: &str) -> u64 {
    let prefix = format!("artifacts/docker_image/mcp-server-{id}/");
    keys.iter()
        .filter_map(|k| {
            k.strip_prefix(&prefix)?
                .split('/')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .max()
        .unwrap_or(0)
        + 1
}

/// Runs setup; messages go to the terminal, the return value is the exit status.
pub fn run(args: &SetupArgs, host: &HostHandle) -> i32 {
    match setup(args, host) {
        Ok(url) => {
            println!("{url}");
            for line in next_steps(&url) {
                println!("{line}");
            }
            0
        }
        Err(message) => {
            eprintln!("Error: {message}");
            1
        }
    }
}

/// What to do after storing the image at `url`: read it back from the store, which works now; the
/// bundle's tasks do not run yet, and `agent-env run openciv3` says so before any step.
pub fn next_steps(url: &str) -> [String; 2] {
    let file = url.rsplit('/').next().unwrap_or(url);
    [
        format!("Next: agent-env store get {url} -o {file}"),
        "(The openciv3 bundle's tasks do not run yet: agent-env run openciv3 is refused until agent-env has their deploy_env, apply_server_config and env_outcome_verifier step types.)".to_string(),
    ]
}

fn setup(args: &SetupArgs, host: &HostHandle) -> Result<String, String> {
    if args.agent {
        return Err("--agent builds the A2A players from the env checkout's agents, which this build of agentenv-openciv3 does not do yet; run setup without --agent".into());
    }
    let scratch;
    let tarball = match &args.tarball {
        Some(path) => {
            if !path.is_file() {
                return Err(format!("--tarball {}: no such file", path.display()));
            }
            path.clone()
        }
        None => {
            require_buildx()?;
            let image = match &args.image {
                Some(image) => image.clone(),
                None => build_image(args)?,
            };
            scratch = tempfile::tempdir()
                .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
            let path = scratch
                .path()
                .join(format!("mcp-server-{}.tar.gz", args.id));
            println!("Storing the image (docker save, can take a minute)");
            save_image(&image, &path)?;
            path
        }
    };
    let size = std::fs::metadata(&tarball)
        .map(|m| m.len())
        .map_err(|e| format!("{}: {e}", tarball.display()))?;
    let keys = list_keys(
        host,
        &format!("artifacts/docker_image/mcp-server-{}/", args.id),
    )?;
    let version = next_version(&keys, &args.id);
    let key = tarball_key(&args.id, version, is_gzip(&tarball));
    let label = format!("Storing {}", key.rsplit('/').next().unwrap_or(&key));
    let progress = Progress::start(&tarball, size, &label);
    let absolute = std::fs::canonicalize(&tarball).unwrap_or(tarball.clone());
    let stored = host
        .objects()
        .put_file(&key, &absolute, "application/x-tar");
    drop(progress);
    let url = stored.map_err(|e| format!("the object store refused the image tarball: {e}"))?;
    eprintln!(
        "Stored {} ({}) as version {version}",
        tarball.display(),
        human_bytes(size)
    );
    Ok(url)
}

fn list_keys(host: &HostHandle, prefix: &str) -> Result<Vec<String>, String> {
    host.objects()
        .list(prefix)
        .map_err(|e| format!("cannot list {prefix} in the object store: {e}"))
}

fn is_gzip(path: &Path) -> bool {
    let mut magic = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .map(|_| magic == [0x1f, 0x8b])
        .unwrap_or(false)
}

const BUILDX_MISSING: &str = "agent-env openciv3 setup builds the env image with docker buildx, which is not installed here. Install it (Debian/Ubuntu: sudo apt-get install docker-buildx; elsewhere see https://docs.docker.com/go/buildx/), or store an image tarball you already have with --tarball FILE";

fn require_buildx() -> Result<(), String> {
    let works = Command::new("docker")
        .args(["buildx", "version"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if works {
        Ok(())
    } else {
        Err(BUILDX_MISSING.to_string())
    }
}

fn build_image(args: &SetupArgs) -> Result<String, String> {
    let root = match &args.source {
        Some(source) => source.clone(),
        None => std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    for needed in ["Dockerfile", "bridge", "vendor/OpenCiv3/C7Engine"] {
        if !root.join(needed).exists() {
            return Err(format!(
                "{} is not an OpenCiv3 env checkout: it has no {needed} (clone it with --recurse-submodules, or point --source at one)",
                root.display()
            ));
        }
    }
    let image = format!("mcp-server-{}", args.id);
    let platform = args.platform.clone().unwrap_or_else(host_platform);
    let mut build = Command::new("docker");
    build.args(["build", "--platform", &platform]);
    if args.client {
        build.args(["--target", "client"]);
    }
    build.args(["-t", &image]).arg(&root);
    let status = build
        .status()
        .map_err(|e| format!("cannot run docker build: {e}"))?;
    if !status.success() {
        return Err(format!(
            "docker build of {image} failed ({status}); see its output above"
        ));
    }
    Ok(image)
}

fn host_platform() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("linux/{arch}")
}

fn save_image(image: &str, dest: &Path) -> Result<(), String> {
    let mut save = Command::new("docker")
        .args(["save", image])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run docker save: {e}"))?;
    let mut gzip = Command::new("gzip")
        .arg("-1")
        .stdin(
            save.stdout
                .take()
                .ok_or("docker save gave no output stream")?,
        )
        .stdout(std::fs::File::create(dest).map_err(|e| format!("{}: {e}", dest.display()))?)
        .spawn()
        .map_err(|e| format!("cannot run gzip: {e}"))?;
    let saved = save.wait().map_err(|e| format!("docker save: {e}"))?;
    let zipped = gzip.wait().map_err(|e| format!("gzip: {e}"))?;
    if !saved.success() || !zipped.success() {
        return Err(format!(
            "saving {image} failed (docker save: {saved}, gzip: {zipped})"
        ));
    }
    std::io::stdout().flush().ok();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_versions_follow_the_artifact_layout() {
        assert_eq!(
            tarball_key("openciv3", 1, true),
            "artifacts/docker_image/mcp-server-openciv3/1/mcp-server-openciv3-v1.tar.gz"
        );
        let keys = vec![
            tarball_key("openciv3", 1, true),
            tarball_key("openciv3", 3, false),
            "artifacts/docker_image/mcp-server-openciv3-other/9/x".to_string(),
        ];
        assert_eq!(next_version(&keys, "openciv3"), 4);
        assert_eq!(next_version(&[], "openciv3"), 1);
    }
}
