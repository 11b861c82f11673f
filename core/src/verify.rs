//! `agent-env plugin verify`: finds the plugin to verify (an installed package, or a manifest or
//! the folder holding one), hands it to the protocol kit of the host
//! ([`agent_env_host::verify`]) and holds its `initialize` answer against its manifest with the
//! registry's own rules. A package with CLI commands is also started in command mode, as running one
//! starts it. A step run with `--step` reaches fresh built-in object, document and secret stores in a
//! scratch folder that is removed afterwards, never the user's configured stores. A plugin whose
//! `exec` names a file beside its manifest by a relative argument is not started at all: the file
//! that ran would be the one of that name in the folder agent-env runs in.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_env_host::verify::{self, Check, Finding, Verification, VerifyOptions};
use agent_env_host::SpawnSpec;
use agent_env_protocol::manifest::{Manifest, MANIFEST_FILE};
use agent_env_protocol::methods::InitializeResult;
use agent_env_protocol::names::canonical_name;
use serde_json::{Map, Value};

use crate::config::configured_store::configured_secrets;
use crate::config::references::SecretLookup;
use crate::environment::Environment;
use crate::registry::validate;
use crate::session::Session;
use crate::stores::error::StoreError;
use crate::stores::{build_store, HostStoreDispatcher, StoreKind, StoreSet, StoreSpec};

/// Why a plugin could not be verified.
#[derive(Debug, thiserror::Error)]
pub enum VerifyCommandError {
    /// Neither an installed package nor a manifest.
    #[error("{0}; nor is there a manifest at that path: give a package name, a folder holding {MANIFEST_FILE}, or a manifest file")]
    NotFound(crate::discovery::not_installed::NotInstalled),
    /// agent-env's own package, whose built-ins run in this process.
    #[error("{target} is agent-env itself: its built-in steps and stores run inside agent-env, not as a plugin's process, so there is nothing to verify; give an installed plugin's package name (agent-env plugin list shows them)")]
    Core {
        /// What was asked for.
        target: String,
    },
    /// A project folder: a plugin built from it is verified once installed.
    #[error("{target} is a {language} project, not an installed plugin or a folder holding {MANIFEST_FILE}: install it with `agent-env plugin add {target}`, then verify it by its package name (`agent-env plugin verify NAME`)")]
    Project {
        /// What was asked for.
        target: String,
        /// The project's language, by the file that marks it.
        language: &'static str,
    },
    /// The manifest at the path given does not parse.
    #[error("{0}")]
    Manifest(String),
    /// `--step` is not a JSON object with a string `type`.
    #[error("--step must be a JSON object with a string \"type\" naming a task step, e.g. '{{\"type\": \"grade_essay\", \"id\": \"s1\"}}': {0}")]
    Step(String),
    /// The plugin's `[plugins.<package>]` settings could not be read.
    #[error("cannot read the settings for {package}: {reason}")]
    Settings {
        /// The package.
        package: String,
        /// Why.
        reason: String,
    },
    /// The scratch folder for the step's stores could not be made in the temporary folder.
    #[error("cannot make a scratch folder for the step's stores under {dir} ({chosen_by}): {reason}; set TMPDIR to a folder you can write")]
    Scratch {
        /// The temporary folder.
        dir: String,
        /// What chose it: TMPDIR, or the default when TMPDIR is not set.
        chosen_by: &'static str,
        /// Why.
        reason: String,
    },
    /// The kit could not run the plugin at all.
    #[error(transparent)]
    Kit(#[from] verify::VerifyError),
}

/// What was verified, and what the kit found.
#[derive(Debug)]
pub struct VerifyOutcome {
    /// The package's name, as its manifest writes it.
    pub package: String,
    /// Its version, from the manifest.
    pub version: String,
    /// The manifest.
    pub manifest: PathBuf,
    /// The findings.
    pub verification: Verification,
    /// What the kit does not hold against the plugin but a user should know (a contribution the
    /// plugin answers that its manifest does not declare).
    pub warnings: Vec<String>,
}

/// Verifies `target` (a package name or a manifest path); `step` is the `--step` JSON text.
pub fn verify_plugin(
    session: &Session,
    target: &str,
    step: Option<&str>,
) -> Result<VerifyOutcome, VerifyCommandError> {
    let step = step.map(parse_step).transpose()?;
    let manifest = find_manifest(session, target)?;
    // Started from here, the plugin would run a file of that name in the folder agent-env runs in.
    let relative = relative_argument_reasons(&manifest);
    if !relative.is_empty() {
        return Ok(VerifyOutcome {
            package: manifest.name.clone(),
            version: manifest.version.clone(),
            manifest: manifest.path.clone(),
            verification: not_started(&relative),
            warnings: Vec::new(),
        });
    }
    let options = VerifyOptions {
        step,
        cli_commands: cli_commands(&manifest),
    };
    let doc = session.config();
    let secrets = configured_secrets(doc, None).ok();
    let settings = crate::config::plugins::plugin_settings(
        doc,
        &manifest.name,
        secrets.as_ref().map(|s| s as &dyn SecretLookup),
    )
    .map_err(|e| VerifyCommandError::Settings {
        package: manifest.name.clone(),
        reason: e.to_string(),
    })?;
    let config = session.host_config();
    let spec = SpawnSpec::from_manifest(&manifest, settings);
    let problems = |answer: &InitializeResult| manifest_problems(&manifest, answer);
    let scratch = ScratchStores::new(session)?;
    let services = Arc::new(HostStoreDispatcher::new(scratch.stores.clone()));
    let verification = verify::verify(&spec, &config, services, &options, &problems);
    drop(scratch);
    let verification = verification?;
    let warnings = verification
        .handshake
        .as_ref()
        .map(|answer| undeclared_warnings(&manifest, answer))
        .unwrap_or_default();
    Ok(VerifyOutcome {
        package: manifest.name.clone(),
        version: manifest.version.clone(),
        manifest: manifest.path.clone(),
        verification,
        warnings,
    })
}

/// The commands of the manifest's `[provides.cli_plugins]`: running any of them starts the plugin in
/// command mode, which the kit then checks too.
fn cli_commands(manifest: &Manifest) -> Vec<String> {
    manifest
        .contributions()
        .filter(|(group, _, _)| *group == "cli_plugins")
        .map(|(_, name, _)| name.to_string())
        .collect()
}

/// A warning for each contribution the plugin answers that its manifest does not declare: agent-env
/// finds contributions in manifests, so it never uses one (the protocol allows the answer to hold more).
fn undeclared_warnings(manifest: &Manifest, answer: &InitializeResult) -> Vec<String> {
    let declared: Vec<(&str, &str)> = manifest
        .contributions()
        .map(|(group, name, _)| (group, name))
        .collect();
    answer
        .contributions
        .iter()
        .filter(|c| !declared.contains(&(c.group.as_str(), c.name.as_str())))
        .map(|c| {
            format!(
                "the plugin answers [{group}] {name} ({class}), which its manifest does not declare, so agent-env never uses it; to use it, add {name} = \"{class}\" under [provides.{group}] in {}",
                manifest.path.display(),
                group = c.group,
                name = c.name,
                class = c.class,
            )
        })
        .collect()
}

/// Why each argument that names a file beside the manifest by a relative path is a fault.
fn relative_argument_reasons(manifest: &Manifest) -> Vec<String> {
    manifest
        .relative_file_args()
        .into_iter()
        .map(|arg| agent_env_host::exec_arguments::relative_argument_reason(&manifest.path, arg))
        .collect()
}

/// The findings for a plugin not started because its `exec` names a file beside its manifest by a
/// relative argument (`reasons`): passed as written, the argument names whatever file of that name
/// the folder agent-env runs in holds, so starting it could run that file instead. The `manifest`
/// check fails, saying why; every other check is skipped.
fn not_started(reasons: &[String]) -> Verification {
    let findings = Check::ALL
        .iter()
        .map(|&check| match check {
            Check::Manifest => Finding::failed(
                check,
                format!(
                    "not started: whatever file of that name the folder agent-env runs in holds would run in its place; {}",
                    reasons.join("; ")
                ),
            ),
            _ => Finding::skipped(
                check,
                "not started: its exec names a file beside the manifest by a relative argument (the manifest check says why)",
            ),
        })
        .collect();
    Verification {
        findings,
        handshake: None,
        stderr_tail: Vec::new(),
        stderr_check: None,
    }
}

fn parse_step(text: &str) -> Result<Map<String, Value>, VerifyCommandError> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| VerifyCommandError::Step(e.to_string()))?;
    let Value::Object(step) = value else {
        return Err(VerifyCommandError::Step("it is not an object".into()));
    };
    if !step.get("type").is_some_and(Value::is_string) {
        return Err(VerifyCommandError::Step("it has no string \"type\"".into()));
    }
    Ok(step)
}

/// An installed package by any spelling of its name, else a manifest file or a folder holding one.
fn find_manifest(session: &Session, target: &str) -> Result<Manifest, VerifyCommandError> {
    let discovery = session.discovery();
    if let Some(found) = discovery.find(&canonical_name(target)) {
        return Ok(found.manifest.clone());
    }
    let path = Path::new(target);
    if crate::install::is_core(target) && !path.exists() {
        return Err(VerifyCommandError::Core {
            target: target.to_string(),
        });
    }
    let file = if path.is_dir() {
        path.join(MANIFEST_FILE)
    } else {
        path.to_path_buf()
    };
    if file.is_file() {
        let absolute = std::path::absolute(&file).unwrap_or(file);
        return Manifest::load(&absolute).map_err(|e| VerifyCommandError::Manifest(e.to_string()));
    }
    // A project `plugin add` would build, recognised as `plugin add` recognises it.
    if let Some(language) = crate::install::source::installer_of(path).and_then(|i| i.language()) {
        return Err(VerifyCommandError::Project {
            target: target.to_string(),
            language,
        });
    }
    let names: Vec<&str> = discovery
        .plugins
        .iter()
        .map(|p| p.manifest.name.as_str())
        .collect();
    Err(VerifyCommandError::NotFound(
        crate::discovery::not_installed::NotInstalled::new(target, names),
    ))
}

/// Where the `initialize` answer departs from the manifest, by the rules the registry applies when
/// it loads the plugin, plus what the registry lets pass but is still wrong: a protocol range
/// `plugin add` refuses or the plugin does not keep to, a class label the answer does not give,
/// the store classes of `[provides.stores]`.
pub fn manifest_problems(manifest: &Manifest, answer: &InitializeResult) -> Vec<String> {
    let mut problems = protocol_problems(manifest, answer);
    if let Err(problem) = validate::check_package(&manifest.name, answer) {
        problems.push(problem);
    }
    if answer.plugin.version != manifest.version {
        problems.push(format!(
            "the plugin answered initialize as version {}, but its manifest says version {}; keep the version in the code, the manifest and the package metadata the same",
            answer.plugin.version, manifest.version
        ));
    }
    for (group, name, entry) in manifest.contributions() {
        if group == "bundles" {
            continue;
        }
        match validate::check_contribution(group, name, &entry.class, answer) {
            Err(problem) => problems.push(format!("[provides.{group}] {name}: {problem}")),
            // The registry finds a contribution by its name alone, so a wrong label loads, and
            // then names the class wrongly wherever agent-env shows it.
            Ok(info) if info.class != entry.class => problems.push(format!(
                "[provides.{group}] {name}: the manifest declares the class {}, but the initialize answer \
                 gives {name} as {}; make the two the same",
                entry.class, info.class
            )),
            Ok(_) => {}
        }
    }
    for (class, kind) in &manifest.stores {
        match answer.stores.iter().find(|s| &s.class == class) {
            None => problems.push(format!(
                "[provides.stores] {class}: the manifest declares this {kind} store class, but the initialize \
                 answer's stores do not list it"
            )),
            Some(info) if &info.kind != kind => problems.push(format!(
                "[provides.stores] {class}: the manifest declares a {kind} store, the initialize answer a {} store",
                info.kind
            )),
            Some(_) => {}
        }
    }
    problems
}

/// The manifest's `protocol` range against the host's (which `plugin add` holds it to) and against
/// the version the plugin answered with.
fn protocol_problems(manifest: &Manifest, answer: &InitializeResult) -> Vec<String> {
    if let Some(unmet) = crate::compat::unmet_protocol(manifest) {
        return vec![format!(
            "[plugin] protocol: needs {unmet}, so plugin add refuses it; declare a range that \
             includes protocol {}, which the plugin speaks",
            answer.protocol
        )];
    }
    if !manifest.protocol.contains(answer.protocol) {
        return vec![format!(
            "[plugin] protocol: the plugin answered initialize with protocol {}, which is outside its \
             manifest's range ({}); make the manifest's protocol range include it",
            answer.protocol, manifest.protocol
        )];
    }
    Vec::new()
}

/// Fresh built-in object, document and secret stores in a folder of their own (no image store: a
/// step that asks for one gets `not-supported`), removed when dropped.
struct ScratchStores {
    dir: PathBuf,
    stores: Arc<StoreSet>,
}

impl ScratchStores {
    fn new(session: &Session) -> Result<ScratchStores, VerifyCommandError> {
        let (tmp, chosen_by) = match session.env().var_os("TMPDIR") {
            Some(tmp) => (PathBuf::from(tmp), "TMPDIR"),
            None => (PathBuf::from("/tmp"), "the default, TMPDIR being unset"),
        };
        let mut bytes = [0u8; 8];
        let _ = getrandom::getrandom(&mut bytes);
        let dir = tmp.join(format!("agent-env-verify-{}", hex::encode(bytes)));
        std::fs::create_dir_all(&dir).map_err(|e| VerifyCommandError::Scratch {
            dir: tmp.display().to_string(),
            chosen_by,
            reason: e.to_string(),
        })?;
        let env = Arc::new(Environment::from_vars(
            [
                ("HOME", dir.as_os_str()),
                ("XDG_STATE_HOME", dir.join("state").as_os_str()),
            ],
            &dir,
        ));
        let stores = Arc::new(StoreSet::new(move |kind| match kind {
            StoreKind::Image => Err(StoreError::NotSupported(
                "plugin verify gives a step no image store".into(),
            )),
            other => build_store(&StoreSpec::local(other, env.clone()), None),
        }));
        Ok(ScratchStores { dir, stores })
    }
}

impl Drop for ScratchStores {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_env_protocol::methods::PluginInfo;

    fn manifest(protocol: &str) -> Manifest {
        let text = format!(
            "[plugin]\nname = \"p\"\nversion = \"1\"\nexec = [\"x\"]\nprotocol = {protocol}\n"
        );
        Manifest::parse(Path::new("m.toml"), &text).unwrap()
    }

    fn answered(protocol: u32) -> InitializeResult {
        InitializeResult {
            protocol,
            plugin: PluginInfo {
                name: "p".into(),
                version: "1".into(),
            },
            contributions: vec![],
            stores: vec![],
        }
    }

    #[test]
    fn an_answer_outside_the_manifests_protocol_range_is_a_problem() {
        assert!(manifest_problems(&manifest("[1, 1]"), &answered(1)).is_empty());
        assert_eq!(
            manifest_problems(&manifest("[1, 2]"), &answered(3)),
            ["[plugin] protocol: the plugin answered initialize with protocol 3, which is outside its manifest's range (1-2); make the manifest's protocol range include it"]
        );
    }
}
