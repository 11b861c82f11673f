//! The image kit: the original's 3 cases that need no docker, 3 more for the rules they leave open (refs
//! apart per repository and tag, `owns` refusing a foreign ref, `auth` only for a ref the store owns), and
//! `push_pull_roundtrip`, which builds, pushes, removes and pulls a tiny image with the docker CLI. That
//! one runs only where docker is usable and the store's registry accepts pushes; otherwise it is listed
//! as skipped with the reason.

use std::path::Path;
use std::process::{Command, Stdio};

use super::support::{as_json, ensure, ensure_eq, Ctx, TempDir};
use super::{Case, Kit};
use crate::image::ImageStore;

type ImageCase = Case<dyn ImageStore>;

/// The foreign reference `auth` must not authorize.
pub const FOREIGN_REF: &str = "foreign-registry.example/library/alpine:latest";

/// The six cases that need no docker, then `push_pull_roundtrip` where docker is usable.
pub fn cases() -> Kit<dyn ImageStore> {
    let mut kit = Kit {
        name: "image",
        cases: vec![
            ImageCase {
                name: "image_ref_contains_repository_and_tag",
                run: image_ref_contains_repository_and_tag,
            },
            ImageCase {
                name: "ensure_repository_is_idempotent",
                run: ensure_repository_is_idempotent,
            },
            ImageCase {
                name: "auth_is_none_for_a_foreign_ref",
                run: auth_is_none_for_a_foreign_ref,
            },
            ImageCase {
                name: "image_refs_differ_by_repository_and_tag",
                run: image_refs_differ_by_repository_and_tag,
            },
            ImageCase {
                name: "owns_is_false_for_a_foreign_ref",
                run: owns_is_false_for_a_foreign_ref,
            },
            ImageCase {
                name: "auth_only_for_a_ref_it_owns",
                run: auth_only_for_a_ref_it_owns,
            },
        ],
        skipped: Vec::new(),
    };
    match docker_unusable_reason() {
        None => kit.cases.push(ImageCase {
            name: "push_pull_roundtrip",
            run: push_pull_roundtrip,
        }),
        Some(why) => kit.skipped.push(("push_pull_roundtrip", why)),
    }
    kit
}

/// Why docker cannot run the integration case here, or `None` when it can.
pub fn docker_unusable_reason() -> Option<String> {
    if which::which("docker").is_err() {
        return Some("docker is not on PATH (this case pushes a real image)".to_string());
    }
    let ok = Command::new("docker")
        .args(["info", "--format", "{{.ServerVersion}}"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    (!ok).then(|| "the docker daemon does not answer (docker info failed)".to_string())
}

fn image_ref_contains_repository_and_tag(store: &dyn ImageStore, repo: &str) -> Result<(), String> {
    let image_ref = store.image_ref(repo, "v1").ctx("image_ref")?;
    ensure(
        image_ref.ends_with(":v1") && image_ref.contains(repo),
        || {
            format!("image_ref({repo:?}, \"v1\") = {image_ref:?}: it should contain the repository and end with :v1")
        },
    )
}

fn ensure_repository_is_idempotent(store: &dyn ImageStore, repo: &str) -> Result<(), String> {
    store.ensure_repository(repo).ctx("ensure_repository")?;
    store
        .ensure_repository(repo)
        .ctx("ensure_repository (again)")
}

fn auth_is_none_for_a_foreign_ref(store: &dyn ImageStore, _repo: &str) -> Result<(), String> {
    ensure_eq(
        store.auth(FOREIGN_REF).ctx("auth")?,
        None,
        &format!("auth({FOREIGN_REF:?})"),
    )
}

fn image_refs_differ_by_repository_and_tag(
    store: &dyn ImageStore,
    repo: &str,
) -> Result<(), String> {
    let other_repo = format!("{repo}-other");
    let refs = [
        store.image_ref(repo, "v1").ctx("image_ref")?,
        store.image_ref(repo, "v2").ctx("image_ref")?,
        store.image_ref(&other_repo, "v1").ctx("image_ref")?,
    ];
    ensure(
        refs[0] != refs[1] && refs[0] != refs[2] && refs[1] != refs[2],
        || {
            format!(
                "image_ref of ({repo:?}, v1), ({repo:?}, v2) and ({other_repo:?}, v1) should be three refs, got {}",
                as_json(&refs)
            )
        },
    )
}

fn owns_is_false_for_a_foreign_ref(store: &dyn ImageStore, _repo: &str) -> Result<(), String> {
    ensure_eq(
        store.owns(FOREIGN_REF).ctx("owns")?,
        false,
        &format!("owns({FOREIGN_REF:?})"),
    )
}

fn auth_only_for_a_ref_it_owns(store: &dyn ImageStore, repo: &str) -> Result<(), String> {
    let own = store.image_ref(repo, "v1").ctx("image_ref")?;
    let auth = store.auth(&own).ctx("auth")?;
    let owns = store.owns(&own).ctx("owns")?;
    ensure(auth.is_none() || owns, || {
        format!("auth({own:?}) gives login material, but owns({own:?}) is false: a store authorizes only refs it owns")
    })
}

fn docker(args: &[&str], dir: &Path, stdin: Option<&str>) -> Result<(), String> {
    use std::io::Write;
    let mut child = Command::new("docker")
        .args(args)
        .current_dir(dir)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run docker {}: {e}", args.join(" ")))?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes())
            .map_err(|e| format!("cannot write to docker {}: {e}", args[0]))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("docker {} did not finish: {e}", args[0]))?;
    ensure(out.status.success(), || {
        format!(
            "docker {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })
}

fn push_pull_roundtrip(store: &dyn ImageStore, repo: &str) -> Result<(), String> {
    let tmp = TempDir::new()?;
    tmp.file("marker", repo.as_bytes())?;
    let dockerfile = format!("FROM scratch\nCOPY marker /marker\nLABEL agentenv.kit=\"{repo}\"\n");
    tmp.file("Dockerfile", dockerfile.as_bytes())?;
    store.ensure_repository(repo).ctx("ensure_repository")?;
    let image_ref = store.image_ref(repo, "roundtrip").ctx("image_ref")?;
    if let Some(auth) = store.auth(&image_ref).ctx("auth")? {
        docker(
            &[
                "login",
                &auth.registry,
                "--username",
                &auth.username,
                "--password-stdin",
            ],
            tmp.path(),
            Some(&auth.password),
        )?;
    }
    docker(&["build", "-q", "-t", &image_ref, "."], tmp.path(), None)?;
    docker(&["push", &image_ref], tmp.path(), None)?;
    docker(&["image", "rm", &image_ref], tmp.path(), None)?;
    docker(&["pull", &image_ref], tmp.path(), None)?;
    docker(&["image", "inspect", &image_ref], tmp.path(), None)?;
    let _ = docker(&["image", "rm", &image_ref], tmp.path(), None);
    Ok(())
}
