//! What to do when an installer fails, from what it said: pip, Go and cargo name the cause ("No
//! matching distribution", "missing go.sum entry", "no matching package named", a connection refused)
//! but not what to do about it here. The SDKs are published to the registries a team runs, not to
//! PyPI, the Go module proxy or crates.io, so a project made by `agent-env plugin new` without
//! `--sdk` installs only where its SDK can be found.
//!
//! A cause that explains the others is looked for first: an index, proxy or registry not reached, or
//! one that refused the credentials (or wanted some). pip ends both with the words it uses for a
//! project an index lacks ("Could not find a version that satisfies the requirement"), and says
//! nothing at all of a refusal, a server error or a URL that is no index when it may not prompt
//! (`--no-input`), so for an index that offered no version at all the index is asked itself (see
//! `index_probe`). pip told to use no index (`PIP_NO_INDEX`, an offline CI job's switch) is advised
//! what works offline: a wheel, or a folder of them.

use std::path::Path;

use super::source::{Installer, Spec};

/// The Python SDK's distribution name.
const PYTHON_SDK: &str = "agent-env-plugin-sdk";
/// The Go SDK's module path.
const GO_SDK: &str = "github.com/agent-env/agent-env/plugin-sdk-go";
/// The module paths of the Go SDK, as GONOSUMDB and GOPRIVATE take them.
const GO_SDK_PATTERN: &str = "github.com/agent-env/*";
/// What keeps Go from checking the SDK against the public checksum database, which does not know it.
const GO_NOSUMDB: &str = "GONOSUMDB=github.com/agent-env/*";
/// What the advice calls the index of a pip told to use none.
const NO_INDEX: &str = "no index (PIP_NO_INDEX is set)";
/// The Rust SDK's crate name.
const RUST_SDK: &str = "agent-env-plugin-sdk";
/// The public Go module proxy, Go's default.
const GO_PUBLIC_PROXY: &str = "proxy.golang.org";

/// How to give an index, proxy or registry its credentials.
const CREDENTIALS_IN_URL: &str =
    "put them in the URL (https://USER:TOKEN@host/...), they are masked";

/// What kept a package index from answering a request for a project's page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexTrouble {
    /// Not reached: why (`connection refused`, …). pip says so only while it retries.
    Unreached {
        /// The index's URL, its credentials masked.
        index: String,
        why: &'static str,
    },
    /// Refused: 401, or else 403.
    Refused {
        /// The index's URL, its credentials masked.
        index: String,
        status: u16,
        /// Whether the URL carried credentials (so they were refused, rather than missing).
        with_credentials: bool,
    },
    /// Answered with a server error (5xx): down, or failing.
    ServerError {
        /// The index's URL, its credentials masked.
        index: String,
        status: u16,
    },
    /// Not there: 404 for the project's page and for the index's own address.
    NotAnIndex {
        /// The index's URL, its credentials masked.
        index: String,
        /// Whether its path does not end in `/simple` (where most indexes serve their pages).
        lacks_simple: bool,
    },
}

/// Advice for the specs an installer failed on, from the end of what it said (`said`): at most one
/// sentence per installer, each for a cause it named. `pip_no_index`: pip ran told to use no index
/// (`PIP_NO_INDEX`). `ask_index` asks each of pip's indexes for a project's page when pip found no
/// version of it (or could not reach one of several), for a trouble pip does not mention: the
/// trouble of each index that has one, in pip's order. `go_nosumdb`: the GONOSUMDB Go ran with,
/// whose entries the advice keeps.
pub fn after_failed_install(
    specs: &[Spec],
    said: &str,
    pip_no_index: bool,
    ask_index: &dyn Fn(&str) -> Vec<IndexTrouble>,
    go_nosumdb: Option<&str>,
) -> Vec<String> {
    let mut advice = Vec::new();
    if specs.iter().any(|s| s.installer == Installer::Pip) {
        advice.extend(match pip_no_index {
            true => pip_advice_without_index(specs, said),
            false => pip_advice(specs, said, ask_index),
        });
    }
    if let Some(go) = specs.iter().find(|s| s.installer == Installer::Go) {
        advice.extend(go_advice(go, said, go_nosumdb));
    }
    if let Some(rust) = specs
        .iter()
        .find(|s| s.installer == Installer::Cargo && s.path.is_some())
    {
        advice.extend(cargo_advice(rust, said));
    }
    advice
}

/// What pip's failure says to do: reach the index, give it credentials, find the SDK (not on the
/// index, or of another version there), or serve the build tools a project folder needs.
fn pip_advice(
    specs: &[Spec],
    said: &str,
    ask_index: &dyn Fn(&str) -> Vec<IndexTrouble>,
) -> Option<String> {
    // pip masks the password of the indexes it names (and a token alone) as `****`.
    let named = said
        .lines()
        .find_map(|l| l.trim().strip_prefix("Looking in indexes: "))
        .map(|indexes| indexes.trim().replace("****@", "***@"));
    let index = named.as_deref().unwrap_or("PyPI");
    let nothing_found = said
        .lines()
        .filter(|line| from_versions(line) == Some("none"))
        .find_map(|line| requirement(line).map(requirement_name));
    if let Some(why) = pip_unreachable(said) {
        // pip's retries name the page, not the index: of several, those not reached are asked.
        let several = named.as_deref().is_some_and(|n| n.contains(", "));
        let project = nothing_found.clone().or_else(|| retried_project(said));
        let unreached: Vec<(String, &str)> = match (several, project) {
            (true, Some(project)) => ask_index(&project)
                .into_iter()
                .filter_map(|trouble| match trouble {
                    IndexTrouble::Unreached { index, why } => Some((index, why)),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        return Some(match unreached.first() {
            Some((_, why)) => {
                let indexes: Vec<&str> = unreached.iter().map(|(i, _)| i.as_str()).collect();
                unreachable(&indexes.join(", "), why)
            }
            None => unreachable(index, why),
        });
    }
    if said.contains("401 Error, Credentials not correct") {
        return Some(refused_credentials(index));
    }
    if said.contains("User for ") && said.contains("EOFError") {
        return Some(needs_credentials(index));
    }
    let trouble = nothing_found.and_then(|project| ask_index(&project).into_iter().next());
    if let Some(trouble) = trouble {
        return Some(match trouble {
            IndexTrouble::Unreached { index, why } => unreachable(&index, why),
            IndexTrouble::ServerError { index, status } => format!(
                "{index} answered with an error (HTTP {status}): it may be down; try again or check the server"
            ),
            IndexTrouble::NotAnIndex {
                index,
                lacks_simple: true,
            } => format!(
                "{index} is not a package index (it answers 404 Not Found at its own address): the URL may lack its /simple path (such as https://host/simple/); check it"
            ),
            IndexTrouble::NotAnIndex { index, .. } => format!(
                "{index} is not a package index (it answers 404 Not Found at its own address): check its address"
            ),
            IndexTrouble::Refused {
                index,
                status: 401,
                with_credentials,
            } if with_credentials => refused_credentials(&index),
            IndexTrouble::Refused { index, status: 401, .. } => needs_credentials(&index),
            IndexTrouble::Refused {
                index,
                with_credentials: true,
                ..
            } => format!(
                "{index} refused access with the credentials in its URL (403 Forbidden): use credentials that may read it; {CREDENTIALS_IN_URL}"
            ),
            IndexTrouble::Refused { index, .. } => format!(
                "{index} refused access (403 Forbidden): it may need credentials: {CREDENTIALS_IN_URL}"
            ),
        });
    }
    if let Some(line) = unsatisfied(said, PYTHON_SDK) {
        let project = specs
            .iter()
            .find(|s| s.path.as_deref().is_some_and(python_sdk_by_name));
        // A project folder that points at the SDK (or does not need it) has pip's words alone.
        let no_folder = !specs
            .iter()
            .any(|s| s.path.as_deref().is_some_and(Path::is_dir));
        match (from_versions(line).unwrap_or("none"), project) {
            ("none", Some(project)) => {
                return Some(python_sdk_missing(&project.text, named.as_deref()))
            }
            ("none", None) if no_folder => {
                return Some(python_sdk_needed(line, specs, named.as_deref()))
            }
            (versions, Some(project)) => {
                return Some(format!(
                    "{index} holds {PYTHON_SDK} {versions}, and {} asks for {}: publish that version to the index, or change the requirement in its pyproject.toml",
                    project.text,
                    requirement(line).unwrap_or(PYTHON_SDK)
                ))
            }
            // A wheel or a published package asking for another version: pip's words say it.
            (_, None) => {}
        }
    }
    if unsatisfied(said, "setuptools").is_some() {
        return Some(format!(
            "{index} serves no setuptools, which pip needs to build a project folder: check its address (a wrong one serves nothing), or serve setuptools there too"
        ));
    }
    None
}

/// What pip told to use no index (`PIP_NO_INDEX`) failing to find a project says to do: give it a
/// wheel (or a folder of them), which works offline, or let it use an index. A project folder's
/// build needs setuptools from an index, so the SDK's checkout is not advised here.
fn pip_advice_without_index(specs: &[Spec], said: &str) -> Option<String> {
    const OR_UNSET: &str = "or unset PIP_NO_INDEX (and pass --index-url)";
    const FOLDER_OF_WHEELS: &str =
        "or give pip a folder of wheels that holds it (PIP_FIND_LINKS=FOLDER)";
    const SDK_WHEEL: &str = "python3 -m pip wheel --no-deps CHECKOUT/plugin-sdk-py";
    if let Some(line) = unsatisfied(said, PYTHON_SDK) {
        let given = given_specs(specs);
        let needing = specs
            .iter()
            .find(|s| s.path.as_deref().is_some_and(python_sdk_by_name))
            .map(|project| project.text.clone())
            .or_else(|| needing_package(line).map(str::to_string))
            .unwrap_or_else(|| "the package".to_string());
        return Some(format!(
            "{needing} needs the Python SDK ({PYTHON_SDK}), and pip looked in {NO_INDEX}: install the SDK's wheel with it, `agent-env plugin add PATH/TO/agent_env_plugin_sdk-VERSION-py3-none-any.whl {given}` (built where an index is reachable, with `{SDK_WHEEL}`), {FOLDER_OF_WHEELS}, {OR_UNSET}"
        ));
    }
    if unsatisfied(said, "setuptools").is_some() {
        return Some(format!(
            "pip needs setuptools to build a project folder, and looked in {NO_INDEX}: add a wheel of the project instead (built where an index is reachable, with `python3 -m pip wheel --no-deps FOLDER`), or give pip a folder of wheels that holds setuptools (PIP_FIND_LINKS=FOLDER), {OR_UNSET}"
        ));
    }
    let project = said
        .lines()
        .filter(|line| from_versions(line) == Some("none"))
        .find_map(requirement)?;
    Some(format!(
        "pip found no {project}: it looked in {NO_INDEX}, so it installs only the wheels and folders given: add the wheel of {} too, {FOLDER_OF_WHEELS}, {OR_UNSET}",
        requirement_name(project)
    ))
}

/// The project whose page pip's retries fetched (`…': /simple/agent-env-plugin-sdk/`).
fn retried_project(said: &str) -> Option<String> {
    said.lines()
        .filter(|line| line.contains("Retrying (Retry("))
        .find_map(|line| {
            let page = line.rsplit("': ").next()?;
            page.trim()
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .filter(|p| !p.is_empty())
                .map(requirement_name)
        })
}

/// Why pip could not reach an index, when its output says it could not.
fn pip_unreachable(said: &str) -> Option<&'static str> {
    [
        ("Connection refused", "connection refused"),
        ("Name or service not known", "its host name is not known"),
        (
            "Temporary failure in name resolution",
            "its host name could not be looked up",
        ),
        ("No route to host", "no route to host"),
        ("Network is unreachable", "network unreachable"),
        ("ConnectTimeoutError", "it did not answer in time"),
    ]
    .into_iter()
    .find_map(|(mark, why)| said.contains(mark).then_some(why))
}

fn unreachable(index: &str, why: &str) -> String {
    format!("pip could not reach {index} ({why}): check the address, or that it is up")
}

fn refused_credentials(index: &str) -> String {
    format!(
        "{index} refused the credentials in its URL (401 Unauthorized): check the user name and token; {CREDENTIALS_IN_URL}"
    )
}

fn needs_credentials(index: &str) -> String {
    format!("{index} needs credentials (401 Unauthorized): {CREDENTIALS_IN_URL}")
}

/// The line in which pip says no version of `name` satisfies a requirement.
fn unsatisfied<'a>(said: &'a str, name: &str) -> Option<&'a str> {
    said.lines().find(|line| {
        let lower = line.to_ascii_lowercase().replace('_', "-");
        lower.contains("could not find a version that satisfies the requirement")
            && requirement(&lower).is_some_and(|r| requirement_name(r) == name)
    })
}

/// The requirement pip's "satisfies the requirement X (from …)" line names.
fn requirement(line: &str) -> Option<&str> {
    let rest = line.split_once("the requirement ")?.1;
    rest.split_whitespace().next()
}

/// The project a requirement names (`agent-env-plugin-sdk>=0.1.0` names `agent-env-plugin-sdk`).
fn requirement_name(requirement: &str) -> String {
    let end = requirement
        .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
        .unwrap_or(requirement.len());
    requirement[..end].to_ascii_lowercase().replace('_', "-")
}

/// What pip's "(from versions: …)" lists: `none`, or the versions the index holds; `None` on a
/// line that lists none.
fn from_versions(line: &str) -> Option<&str> {
    line.split_once("(from versions: ")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(versions, _)| versions.trim())
}

/// What Go's failure says to do: tidy a go.sum, leave the checksum database out, reach the proxy,
/// give it credentials, or find the SDK.
fn go_advice(spec: &Spec, said: &str, nosumdb: Option<&str>) -> Option<String> {
    if said.contains("missing go.sum entry") {
        let folder = spec.path.as_deref()?;
        return Some(format!(
            "{}'s go.sum lacks entries for what it requires: run `go mod tidy` in that folder, then add it again",
            folder.display()
        ));
    }
    if let Some((module, database, why)) = checksum_database_unreached(said) {
        return Some(format!(
            "Go could not reach the checksum database {database} to verify {module} ({why}): check the network, or the proxy Go goes through (HTTPS_PROXY), or set GOSUMDB to your company's checksum database mirror; then add it again"
        ));
    }
    if let Some(module) = unverified_module(said).filter(|_| checksum_database_lacks(said)) {
        let pattern = match module.strip_prefix("github.com/agent-env/") {
            Some(_) => GO_SDK_PATTERN.to_string(),
            None => module.to_string(),
        };
        // The GONOSUMDB Go ran with (the SDK's pattern when none was set), keeping its entries.
        let current: Vec<&str> = nosumdb
            .map(|value| {
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|e| !e.is_empty())
                    .collect()
            })
            .filter(|entries: &Vec<&str>| !entries.is_empty())
            .unwrap_or_else(|| vec![GO_SDK_PATTERN]);
        let mut entries = current.clone();
        if !current.contains(&pattern.as_str()) {
            entries.push(&pattern);
        }
        let example = format!("GONOSUMDB={}", entries.join(","));
        return Some(format!(
            "Go could not verify {module} against the checksum database (sum.golang.org unless GOSUMDB names another), which knows nothing of a module only your proxy serves: add its path pattern to GONOSUMDB, a comma-separated list ({example}; GOPRIVATE would skip your proxy too), then add it again"
        ));
    }
    if said.contains("sum.golang.org") {
        return Some(format!(
            "Go checks every module against the public checksum database (sum.golang.org), which knows nothing of the SDK your proxy serves: set {GO_NOSUMDB} (GOPRIVATE would skip your proxy too), then add it again"
        ));
    }
    let proxy = go_proxy(said);
    let shown = proxy.as_deref().unwrap_or("the module proxy");
    let lower = said.to_ascii_lowercase();
    let unreachable = [
        ("connection refused", "connection refused"),
        ("no such host", "its host name is not known"),
        ("no route to host", "no route to host"),
        ("network is unreachable", "network unreachable"),
        ("i/o timeout", "it did not answer in time"),
    ]
    .into_iter()
    .find_map(|(mark, why)| lower.contains(mark).then_some(why));
    if let Some(why) = unreachable {
        return Some(format!(
            "Go could not reach the module proxy {shown} ({why}): check GOPROXY's address, or that it is up"
        ));
    }
    for words in ["401 Unauthorized", "403 Forbidden"] {
        if said.contains(&format!(": {words}")) {
            return Some(format!(
                "the module proxy {shown} refused Go ({words}): give Go credentials for it (a machine entry in ~/.netrc, or GOAUTH), then add it again"
            ));
        }
    }
    let folder = spec.path.as_deref()?;
    let fetch_failed = ["404", "410", "not found", "no such file or directory"]
        .iter()
        .any(|m| lower.contains(m));
    (said.contains(GO_SDK) && fetch_failed && go_sdk_by_name(folder))
        .then(|| go_sdk_missing(folder, proxy.as_deref()))
}

/// The module Go could not verify because it did not reach the checksum database, that database's
/// host (as the failure names it) and why: `verifying module: example.com/x@v1.0.0: Get
/// "https://sum.golang.org/lookup/…": dial tcp: lookup sum.golang.org: no such host`.
fn checksum_database_unreached(said: &str) -> Option<(&str, &str, &'static str)> {
    let module = unverified_module(said)?;
    let line = said.lines().find(|line| line.contains("verifying "))?;
    let lower = line.to_ascii_lowercase();
    let why = [
        ("connection refused", "connection refused"),
        ("no such host", "its host name is not known"),
        ("no route to host", "no route to host"),
        ("network is unreachable", "network unreachable"),
        ("i/o timeout", "it did not answer in time"),
        ("tls:", "the TLS connection failed"),
        ("x509:", "its certificate was not trusted"),
    ]
    .into_iter()
    .find_map(|(mark, why)| lower.contains(mark).then_some(why))?;
    let url_start = line
        .find("Get \"")
        .map(|i| i + 5)
        .or_else(|| line.find("reading ").map(|i| i + 8));
    let database = url_start
        .and_then(|start| line[start..].split_once("://"))
        .and_then(|(_, rest)| rest.split(['/', '"', ' ']).next())
        .filter(|host| !host.is_empty())
        .unwrap_or("sum.golang.org");
    Some((module, database, why))
}

/// Whether the checksum database answered that it does not know the module (404, 410, not found):
/// what it says of a module only a team's proxy serves.
fn checksum_database_lacks(said: &str) -> bool {
    said.lines()
        .filter(|line| line.contains("verifying "))
        .any(|line| {
            let lower = line.to_ascii_lowercase();
            ["404", "410", "not found", "gone"]
                .iter()
                .any(|mark| lower.contains(mark))
        })
}

/// The module Go failed to verify against the checksum database (`verifying module:
/// example.com/team-plugin@v0.1.0: …`, `verifying example.com/x@v1.0.0/go.mod: …`), when that is
/// what failed; a checksum that does not match (`checksum mismatch`) is another failure.
fn unverified_module(said: &str) -> Option<&str> {
    if said.contains("checksum mismatch") {
        return None;
    }
    said.lines().find_map(|line| {
        let (_, rest) = line.split_once("verifying ")?;
        let rest = rest
            .strip_prefix("module: ")
            .or_else(|| rest.strip_prefix("go.mod: "))
            .unwrap_or(rest);
        let (module, _) = rest.split_once('@')?;
        let plausible = module.contains('/') && !module.contains(char::is_whitespace);
        plausible.then_some(module)
    })
}

/// The module proxy Go's failure names (the URL it fetched, up to the module path, its credentials
/// masked); `None` for the public proxy, Go's default, or when none is named.
fn go_proxy(said: &str) -> Option<String> {
    let url = said.lines().find_map(|line| {
        let start = line
            .find("Get \"")
            .map(|i| i + 5)
            .or_else(|| line.find("reading ").map(|i| i + 8))?;
        let rest = &line[start..];
        let end = rest.find(['"', ' ']).unwrap_or(rest.len());
        let url = rest[..end].trim_end_matches(':');
        url.contains("://").then_some(url)
    })?;
    let base = url
        .find(&format!("/{GO_SDK}"))
        .or_else(|| url.find("/@v/"))
        .map_or(url, |cut| &url[..cut]);
    (!base.contains(GO_PUBLIC_PROXY))
        .then(|| crate::redaction::mask_url_credentials(base).into_owned())
}

/// What cargo's failure says to do: find the Rust SDK, or reach the registry.
fn cargo_advice(spec: &Spec, said: &str) -> Option<String> {
    let folder = spec.path.as_deref()?;
    if said.contains(&format!("no matching package named `{RUST_SDK}` found")) {
        let searched = said
            .lines()
            .find_map(|l| l.trim().strip_prefix("location searched: "))
            .unwrap_or("crates.io index");
        let checkout = format!(
            "build it against a checkout of agent-env: `{RUST_SDK} = {{ path = \"CHECKOUT/plugin-sdk-rs\" }}` in its Cargo.toml (a path dependency, what `agent-env plugin new ... --sdk CHECKOUT` writes)"
        );
        return Some(if searched == "crates.io index" {
            format!(
                "{} depends on the Rust SDK by name ({RUST_SDK}), which is not on crates.io: {checkout}; or serve the SDK from your own Cargo registry, named by a `[registries.NAME]` entry in .cargo/config.toml and `registry = \"NAME\"` on the dependency, or standing in for crates.io (`[source.crates-io] replace-with = \"NAME\"`); then add it again",
                folder.display()
            )
        } else {
            format!(
                "{} depends on the Rust SDK ({RUST_SDK}), which cargo did not find in {searched}: publish it there (after agent-env-protocol and agent-env-store, which it depends on), or {checkout}; then add it again",
                folder.display()
            )
        });
    }
    let registry = said.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("failed to download from `")?;
        rest.split_once('`').map(|(url, _)| url)
    })?;
    let why = [
        ("Could not connect", "connection refused"),
        ("Couldn't resolve host", "its host name is not known"),
        ("timed out", "it did not answer in time"),
    ]
    .into_iter()
    .find_map(|(mark, why)| said.contains(mark).then_some(why))?;
    let registry = registry.strip_suffix("config.json").unwrap_or(registry);
    Some(format!(
        "cargo could not reach the registry at {} ({why}): check its address in .cargo/config.toml, or that it is up",
        crate::redaction::mask_url_credentials(registry)
    ))
}

/// Whether the project's `pyproject.toml` requires the Python SDK without a direct reference.
fn python_sdk_by_name(folder: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(folder.join("pyproject.toml")) else {
        return false;
    };
    let Ok(doc) = text.parse::<toml::Table>() else {
        return false;
    };
    let dependencies = doc
        .get("project")
        .and_then(|p| p.get("dependencies"))
        .and_then(toml::Value::as_array);
    dependencies.into_iter().flatten().any(|dependency| {
        dependency.as_str().is_some_and(|requirement| {
            let name_end = requirement
                .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
                .unwrap_or(requirement.len());
            let name = requirement[..name_end]
                .replace('_', "-")
                .to_ascii_lowercase();
            name == PYTHON_SDK && !requirement.contains('@')
        })
    })
}

/// Whether the module's `go.mod` requires the Go SDK with no `replace` pointing elsewhere (a
/// `replace` line, or one in a `replace ( … )` block).
fn go_sdk_by_name(folder: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(folder.join("go.mod")) else {
        return false;
    };
    let mut block: Option<&str> = None;
    let (mut required, mut replaced) = (false, false);
    for line in text.lines().map(str::trim) {
        let directive = match block {
            Some(_) if line.starts_with(')') => {
                block = None;
                continue;
            }
            Some(open) => open,
            None => match line.split_once('(') {
                Some((word, rest)) if rest.trim().is_empty() => {
                    block = Some(word.trim());
                    continue;
                }
                _ => line.split_whitespace().next().unwrap_or(""),
            },
        };
        if line.contains(GO_SDK) {
            match directive {
                "require" => required = true,
                "replace" => replaced = true,
                _ => {}
            }
        }
    }
    required && !replaced
}

/// The advice for a project that needs the Python SDK by name, where pip found none: on `index`
/// when it named one (`--index-url`), else on PyPI.
fn python_sdk_missing(spec: &str, index: Option<&str>) -> String {
    let where_not = match index {
        Some(index) => format!("; {index} does not hold it"),
        None => String::new(),
    };
    format!(
        "{spec} depends on the Python SDK by name ({PYTHON_SDK}), which pip finds only on an index that \
         holds it (it is not on PyPI){where_not}: install the SDK with it from a checkout of agent-env, \
         `agent-env plugin add CHECKOUT/plugin-sdk-py {spec}`; or publish the SDK to your index and \
         pass --index-url; or point the dependency at a checkout in pyproject.toml \
         (\"{PYTHON_SDK} @ file:///PATH/TO/CHECKOUT/plugin-sdk-py\")"
    )
}

/// The advice for a package that is not a project folder (a wheel, a package from the index) which
/// needs the Python SDK, where pip found none: `line` is pip's, naming the package (`(from NAME)`).
fn python_sdk_needed(line: &str, specs: &[Spec], index: Option<&str>) -> String {
    let needing = needing_package(line).unwrap_or("the package");
    let given = given_specs(specs);
    let where_not = match index {
        Some(index) => format!("{index} does not hold it"),
        None => "pip looked only on PyPI".to_string(),
    };
    format!(
        "{needing} needs the Python SDK ({PYTHON_SDK}), which is not on PyPI and {where_not}: install \
         the SDK with it from a checkout of agent-env, `agent-env plugin add CHECKOUT/plugin-sdk-py {}`; \
         or publish the SDK to your index and pass --index-url",
        given
    )
}

/// The package pip's "satisfies the requirement X (from NAME)" line says needs X.
fn needing_package(line: &str) -> Option<&str> {
    line.split_once("(from ")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(name, _)| name.trim())
}

/// The Python specs as given, the credentials of a URL in them masked, separated by spaces.
fn given_specs(specs: &[Spec]) -> String {
    let given: Vec<std::borrow::Cow<'_, str>> = specs
        .iter()
        .filter(|s| s.installer == Installer::Pip)
        .map(|s| crate::redaction::mask_url_credentials(&s.text))
        .collect();
    given.join(" ")
}

/// The advice for a module that needs the Go SDK by path, where Go did not find it: on `proxy`
/// when it was not the public one.
fn go_sdk_missing(folder: &Path, proxy: Option<&str>) -> String {
    let fetch = match proxy {
        Some(proxy) => format!(
            "publish it to {proxy}, which does not hold it (\"From your own module proxy\" in plugin-sdk-go/README.md of agent-env says how), with {GO_NOSUMDB}"
        ),
        None => format!("set GOPROXY to a proxy that holds it (with {GO_NOSUMDB})"),
    };
    format!(
        "{} depends on the Go SDK by module path ({GO_SDK}), which Go fetches only from a proxy that \
         holds it (it is not published): point it at a checkout of agent-env with `go mod edit \
         -replace {GO_SDK}=CHECKOUT/plugin-sdk-go` and `go mod tidy` in that folder, or {fetch}; \
         then add it again",
        folder.display()
    )
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    /// What pip, Go and cargo really printed (captured from runs against a loopback index, a proxy
    /// or registry that is down, and one that answers 401 or 403).
    macro_rules! said {
        ($file:literal) => {
            include_str!(concat!(
                "../../tests/fixtures/install/installer-output/",
                $file
            ))
        };
    }

    fn spec(installer: Installer, folder: &Path) -> Spec {
        Spec {
            text: "./proj".into(),
            installer,
            path: Some(folder.to_path_buf()),
            name: None,
        }
    }

    fn wheel() -> Spec {
        Spec {
            text: "dist/mystep-0.1.0-py3-none-any.whl".into(),
            installer: Installer::Pip,
            path: Some("dist/mystep-0.1.0-py3-none-any.whl".into()),
            name: None,
        }
    }

    fn project(file: &str, text: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(file), text).unwrap();
        dir
    }

    /// The scaffold's Python project: it needs the SDK by name.
    fn python_project() -> tempfile::TempDir {
        project(
            "pyproject.toml",
            "[project]\nname = \"mystep\"\ndependencies = [\"agent-env-plugin-sdk>=0.1.0\"]\n",
        )
    }

    /// No index refuses anything.
    fn no_refusal(_: &str) -> Vec<IndexTrouble> {
        Vec::new()
    }

    /// Advice for `said`, with indexes that answer `answer`; and the projects they were asked for.
    fn advice_asking(
        specs: &[Spec],
        said: &str,
        answer: Option<IndexTrouble>,
    ) -> (Vec<String>, Vec<String>) {
        let asked = RefCell::new(Vec::new());
        let ask = |project: &str| {
            asked.borrow_mut().push(project.to_string());
            answer.clone().into_iter().collect()
        };
        let advice = after_failed_install(specs, said, false, &ask, None);
        (advice, asked.into_inner())
    }

    #[test]
    fn an_index_that_is_down_is_said_to_be_unreachable_for_a_folder_and_a_wheel() {
        let dir = python_project();
        for (specs, said) in [
            (
                vec![spec(Installer::Pip, dir.path())],
                said!("pip-down-folder.txt"),
            ),
            (vec![wheel()], said!("pip-down-wheel.txt")),
        ] {
            let (advice, asked) = advice_asking(&specs, said, None);
            assert_eq!(
                advice,
                ["pip could not reach http://127.0.0.1:18699/simple/ (connection refused): check the address, or that it is up"]
            );
            assert!(asked.is_empty(), "{asked:?}");
        }
        let unknown = after_failed_install(
            &[wheel()],
            said!("pip-no-host-wheel.txt"),
            false,
            &no_refusal,
            None,
        );
        assert_eq!(
            unknown,
            ["pip could not reach https://no-such-index.invalid/simple/ (its host name is not known): check the address, or that it is up"]
        );
    }

    #[test]
    fn credentials_pip_says_were_refused_or_wanted_are_advised() {
        let dir = python_project();
        let specs = [spec(Installer::Pip, dir.path())];
        let (wrong, asked) =
            advice_asking(&specs, said!("pip-401-wrong-folder-prompting.txt"), None);
        assert_eq!(
            wrong,
            ["http://alice:***@127.0.0.1:18701/simple/ refused the credentials in its URL (401 Unauthorized): check the user name and token; put them in the URL (https://USER:TOKEN@host/...), they are masked"]
        );
        assert!(asked.is_empty());
        let (none, _) = advice_asking(&specs, said!("pip-401-none-prompting.txt"), None);
        assert_eq!(
            none,
            ["http://127.0.0.1:18701/simple/ needs credentials (401 Unauthorized): put them in the URL (https://USER:TOKEN@host/...), they are masked"]
        );
    }

    #[test]
    fn a_refusal_pip_keeps_quiet_about_is_found_by_asking_the_index() {
        let dir = python_project();
        let folder = [spec(Installer::Pip, dir.path())];
        let refusal = |status, with_credentials| IndexTrouble::Refused {
            index: "http://alice:***@127.0.0.1:18701/simple/".into(),
            status,
            with_credentials,
        };
        // Without a prompt, pip says only that the index offered no setuptools.
        let (wrong, asked) = advice_asking(
            &folder,
            said!("pip-401-wrong-folder.txt"),
            Some(refusal(401, true)),
        );
        assert_eq!(asked, ["setuptools"]);
        assert!(
            wrong[0].starts_with("http://alice:***@127.0.0.1:18701/simple/ refused the credentials in its URL (401 Unauthorized)"),
            "{wrong:?}"
        );
        let (none, _) = advice_asking(
            &folder,
            said!("pip-401-none-folder.txt"),
            Some(refusal(401, false)),
        );
        assert!(
            none[0].contains(" needs credentials (401 Unauthorized): put them in the URL"),
            "{none:?}"
        );
        let (forbidden, asked) = advice_asking(
            &[wheel()],
            said!("pip-403-wheel.txt"),
            Some(refusal(403, false)),
        );
        assert_eq!(asked, ["agent-env-plugin-sdk"]);
        assert!(
            forbidden[0].contains(" refused access (403 Forbidden): it may need credentials"),
            "{forbidden:?}"
        );
        // An index that does not refuse: the setuptools advice stands.
        let (lacking, _) = advice_asking(&folder, said!("pip-401-none-folder.txt"), None);
        assert!(
            lacking[0].starts_with("http://127.0.0.1:18701/simple/ serves no setuptools"),
            "{lacking:?}"
        );
    }

    #[test]
    fn an_index_pip_gave_up_on_without_saying_why_is_named_by_asking_it() {
        // pip that does not retry says only that it found no version.
        let (advice, asked) = advice_asking(
            &[wheel()],
            said!("pip-no-sdk-wheel.txt"),
            Some(IndexTrouble::Unreached {
                index: "http://127.0.0.1:18704/simple/".into(),
                why: "connection refused",
            }),
        );
        assert_eq!(asked, ["agent-env-plugin-sdk"]);
        assert_eq!(
            advice,
            ["pip could not reach http://127.0.0.1:18704/simple/ (connection refused): check the address, or that it is up"]
        );
    }

    #[test]
    fn the_sdk_missing_from_the_index_given_is_said_with_the_index() {
        let dir = python_project();
        let advice = after_failed_install(
            &[spec(Installer::Pip, dir.path())],
            said!("pip-no-sdk-folder.txt"),
            false,
            &no_refusal,
            None,
        );
        assert_eq!(advice.len(), 1, "{advice:?}");
        assert!(
            advice[0].contains(
                "(it is not on PyPI); http://127.0.0.1:18701/simple/ does not hold it"
                    .replace("18701", "18704")
                    .as_str()
            ) && advice[0].contains("`agent-env plugin add CHECKOUT/plugin-sdk-py ./proj`"),
            "{advice:?}"
        );
        // A wheel that needs it: the advice names the wheel, and falls through no `?`.
        let advice = after_failed_install(
            &[wheel()],
            said!("pip-no-sdk-wheel.txt"),
            false,
            &no_refusal,
            None,
        );
        assert_eq!(
            advice,
            ["mystep needs the Python SDK (agent-env-plugin-sdk), which is not on PyPI and http://127.0.0.1:18704/simple/ does not hold it: install the SDK with it from a checkout of agent-env, `agent-env plugin add CHECKOUT/plugin-sdk-py dist/mystep-0.1.0-py3-none-any.whl`; or publish the SDK to your index and pass --index-url"]
        );
    }

    const PIP_NO_SDK: &str = "ERROR: Could not find a version that satisfies the requirement agent-env-plugin-sdk>=0.1.0 (from p) (from versions: none)\nERROR: No matching distribution found for agent-env-plugin-sdk>=0.1.0\n";

    #[test]
    fn a_python_project_needing_the_sdk_by_name_is_told_where_to_get_it() {
        let dir = project(
            "pyproject.toml",
            "[project]\nname = \"p\"\ndependencies = [\"Agent_Env-Plugin-SDK>=0.1.0\"]\n",
        );
        let advice = after_failed_install(
            &[spec(Installer::Pip, dir.path())],
            PIP_NO_SDK,
            false,
            &no_refusal,
            None,
        );
        assert_eq!(advice.len(), 1, "{advice:?}");
        assert!(
            advice[0].contains("(it is not on PyPI): install the SDK with it")
                && advice[0].contains("agent-env plugin add CHECKOUT/plugin-sdk-py ./proj"),
            "{}",
            advice[0]
        );
        // The index holds the SDK, of another version than asked for.
        let other_version = format!("Looking in indexes: http://127.0.0.1:9/simple\n{PIP_NO_SDK}")
            .replace(
                ">=0.1.0 (from p) (from versions: none)",
                ">=0.2.0 (from p) (from versions: 0.1.0)",
            );
        assert_eq!(
            after_failed_install(&[spec(Installer::Pip, dir.path())], &other_version, false, &no_refusal, None),
            ["http://127.0.0.1:9/simple holds agent-env-plugin-sdk 0.1.0, and ./proj asks for agent-env-plugin-sdk>=0.2.0: publish that version to the index, or change the requirement in its pyproject.toml"]
        );
    }

    #[test]
    fn a_python_project_pointing_at_the_sdk_or_not_needing_it_gets_no_advice() {
        let at_checkout = project(
            "pyproject.toml",
            "[project]\ndependencies = [\"agent-env-plugin-sdk @ file:///src/plugin-sdk-py\"]\n",
        );
        let other = project(
            "pyproject.toml",
            "[project]\ndependencies = [\"agent-env-plugin-sdk-extras\"]\n",
        );
        let specs = [
            spec(Installer::Pip, at_checkout.path()),
            spec(Installer::Pip, other.path()),
        ];
        assert!(after_failed_install(&specs, PIP_NO_SDK, false, &no_refusal, None).is_empty());
        assert!(after_failed_install(
            &specs,
            "ERROR: some other failure\n",
            false,
            &no_refusal,
            None
        )
        .is_empty());
    }

    #[test]
    fn a_go_module_needing_the_sdk_without_a_replace_is_told_how_to_point_it() {
        let not_found = "go: github.com/agent-env/agent-env/plugin-sdk-go@v0.1.0: reading https://proxy.golang.org/github.com/agent-env/agent-env/plugin-sdk-go/@v/v0.1.0.mod: 404 Not Found\n";
        let by_name = project(
            "go.mod",
            "module example.com/p\n\ngo 1.22\n\nrequire github.com/agent-env/agent-env/plugin-sdk-go v0.1.0\n",
        );
        let advice = after_failed_install(
            &[spec(Installer::Go, by_name.path())],
            not_found,
            false,
            &no_refusal,
            None,
        );
        assert_eq!(advice.len(), 1, "{advice:?}");
        assert!(
            advice[0].contains("go mod edit -replace")
                && advice[0].contains("or set GOPROXY to a proxy that holds it"),
            "{}",
            advice[0]
        );
        for replaced in [
            "module example.com/p\n\nrequire (\n\tgithub.com/agent-env/agent-env/plugin-sdk-go v0.1.0\n)\n\nreplace github.com/agent-env/agent-env/plugin-sdk-go => /src/plugin-sdk-go\n",
            "module example.com/p\n\nrequire github.com/agent-env/agent-env/plugin-sdk-go v0.1.0\n\nreplace (\n\tgithub.com/agent-env/agent-env/plugin-sdk-go => /src/plugin-sdk-go\n)\n",
        ] {
            let replaced = project("go.mod", replaced);
            assert!(after_failed_install(&[spec(Installer::Go, replaced.path())], not_found, false, &no_refusal, None).is_empty());
        }
        // Go's other causes, whatever the go.mod.
        let tidy = after_failed_install(
            &[spec(Installer::Go, by_name.path())],
            "main.go:3:8: missing go.sum entry for module providing package github.com/agent-env/agent-env/plugin-sdk-go/agentenv\n",
            false,
            &no_refusal,
            None,
        );
        assert!(
            tidy[0].contains("run `go mod tidy` in that folder"),
            "{tidy:?}"
        );
        let sumdb = after_failed_install(
            &[spec(Installer::Go, by_name.path())],
            "verifying module: github.com/agent-env/agent-env/plugin-sdk-go@v0.1.0: Get \"https://sum.golang.org/lookup/…\": dial tcp: lookup sum.golang.org: no such host\n",
            false,
            &no_refusal,
            None,
        );
        assert!(
            sumdb[0].starts_with("Go could not reach the checksum database sum.golang.org to verify github.com/agent-env/agent-env/plugin-sdk-go (its host name is not known)")
                && !sumdb[0].contains("GONOSUMDB"),
            "{sumdb:?}"
        );
    }

    #[test]
    fn the_module_go_could_not_verify_is_the_one_named() {
        let specs = [spec(Installer::Go, Path::new("/nowhere"))];
        let said = "main.go:3:8: example.com/team-lib@v0.1.0: verifying module: example.com/team-lib@v0.1.0: Get \"https://sum.golang.org/lookup/example.com/team-lib@v0.1.0\": 404 Not Found\n";
        let advice = after_failed_install(&specs, said, false, &no_refusal, None);
        assert!(
            advice[0].starts_with(
                "Go could not verify example.com/team-lib against the checksum database"
            ) && advice[0].contains("(GONOSUMDB=github.com/agent-env/*,example.com/team-lib; "),
            "{advice:?}"
        );
        assert_eq!(
            unverified_module("verifying example.com/x@v1.0.0/go.mod: checksum mismatch"),
            None
        );
        assert_eq!(
            unverified_module("go: verifying example.com/x@v1.0.0/go.mod: reading …"),
            Some("example.com/x")
        );
    }

    #[test]
    fn of_several_indexes_those_not_reached_are_named() {
        let said = "Looking in indexes: http://127.0.0.1:1/simple/, http://****@127.0.0.1:2/simple/\nWARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<…>: Failed to establish a new connection: [Errno 111] Connection refused')': /simple/agent-env-plugin-sdk/\n";
        let (advice, asked) = advice_asking(
            &[wheel()],
            said,
            Some(IndexTrouble::Unreached {
                index: "http://***@127.0.0.1:2/simple/".into(),
                why: "connection refused",
            }),
        );
        assert_eq!(asked, ["agent-env-plugin-sdk"]);
        assert_eq!(
            advice,
            ["pip could not reach http://***@127.0.0.1:2/simple/ (connection refused): check the address, or that it is up"]
        );
    }

    #[test]
    fn a_go_proxy_down_refusing_or_lacking_the_sdk_is_named() {
        let by_name = project(
            "go.mod",
            "module example.com/mygo\n\ngo 1.22\n\nrequire github.com/agent-env/agent-env/plugin-sdk-go v0.1.0\n",
        );
        let specs = [spec(Installer::Go, by_name.path())];
        assert_eq!(
            after_failed_install(&specs, said!("go-down.txt"), false, &no_refusal, None),
            ["Go could not reach the module proxy http://127.0.0.1:18699 (connection refused): check GOPROXY's address, or that it is up"]
        );
        let file = after_failed_install(&specs, said!("go-file.txt"), false, &no_refusal, None);
        assert!(
            file[0].contains(
                "or publish it to file:///home/me/work/emptyproxy, which does not hold it"
            ),
            "{file:?}"
        );
        for (output, port, words) in [
            (said!("go-401.txt"), "18701", "401 Unauthorized"),
            (said!("go-403.txt"), "18702", "403 Forbidden"),
        ] {
            let advice = after_failed_install(&specs, output, false, &no_refusal, None);
            assert_eq!(
                advice,
                [format!("the module proxy http://127.0.0.1:{port} refused Go ({words}): give Go credentials for it (a machine entry in ~/.netrc, or GOAUTH), then add it again")],
                "{advice:?}"
            );
        }
    }

    #[test]
    fn a_rust_crate_whose_sdk_cargo_cannot_find_is_told_where_to_get_it() {
        let folder = Path::new("/home/me/work/myrs");
        let specs = [spec(Installer::Cargo, folder)];
        let advice =
            after_failed_install(&specs, said!("cargo-offline.txt"), false, &no_refusal, None);
        assert_eq!(advice.len(), 1, "{advice:?}");
        assert!(
            advice[0].starts_with("/home/me/work/myrs depends on the Rust SDK by name (agent-env-plugin-sdk), which is not on crates.io: build it against a checkout of agent-env: `agent-env-plugin-sdk = { path = \"CHECKOUT/plugin-sdk-rs\" }`")
                && advice[0].contains("[registries.NAME]")
                && advice[0].contains("[source.crates-io] replace-with = \"NAME\""),
            "{advice:?}"
        );
        for (output, searched) in [
            (said!("cargo-sparse-replaced.txt"), "did not find in `mine` index (which is replacing registry `crates-io`): publish it there"),
            (said!("cargo-registry-offline.txt"), "did not find in `mine` index: publish it there"),
            (said!("cargo-vendored.txt"), "did not find in directory source `/home/me/work/ch2/vendor` (which is replacing registry `crates-io`): publish"),
        ] {
            let advice = after_failed_install(&specs, output, false, &no_refusal, None);
            assert!(advice[0].contains(searched), "{advice:?}");
        }
        assert_eq!(
            after_failed_install(&specs, said!("cargo-down.txt"), false, &no_refusal, None),
            ["cargo could not reach the registry at http://127.0.0.1:18699/index/ (connection refused): check its address in .cargo/config.toml, or that it is up"]
        );
        // A crate by name (no folder) gets none.
        let by_name = Spec {
            path: None,
            ..spec(Installer::Cargo, folder)
        };
        assert!(after_failed_install(
            &[by_name],
            said!("cargo-offline.txt"),
            false,
            &no_refusal,
            None
        )
        .is_empty());
    }
}
