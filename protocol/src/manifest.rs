//! The plugin manifest, `agent-env-plugin.toml`: what a plugin is, how to start it, what it provides.
//!
//! Parsing never runs plugin code. Every error names the file, the line and the key at fault.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::names::{canonical_name, CORE_PACKAGE, PROTOCOL_PACKAGE};
use crate::version::ProtocolRange;

/// The file name of a manifest in a plugin's folder.
pub const MANIFEST_FILE: &str = "agent-env-plugin.toml";

/// A parsed, checked manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// Where it was read from.
    pub path: PathBuf,
    /// The package name, trimmed, as written.
    pub name: String,
    /// The package version, as written.
    pub version: String,
    /// argv as written; see [`Manifest::resolved_exec`].
    pub exec: Vec<String>,
    /// The protocol versions the plugin speaks, `[min, max]`.
    pub protocol: ProtocolRange,
    /// Requirements on core packages, as written (package name as written → requirement text).
    pub requires: Vec<Requirement>,
    /// The plugin's one-line description, if it gives one.
    pub description: Option<String>,
    /// Environment variables the plugin needs beyond the default pass-through list: names, or
    /// prefixes ending in `*` (`AWS_*`). Anything else in agent-env's environment is withheld.
    pub env: Vec<String>,
    /// group → name → entry, for the ten contribution groups.
    pub provides: BTreeMap<String, BTreeMap<String, ProvidedEntry>>,
    /// class → store kind, from `[provides.stores]`.
    pub stores: BTreeMap<String, String>,
}

/// One `requires` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    /// The package as the manifest spells it.
    pub package: String,
    /// The requirement text as written, e.g. `>=0.1.0`.
    pub text: String,
    /// The parsed requirement.
    pub req: semver::VersionReq,
}

/// One `[provides.<group>]` entry: a class label, optionally with a description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvidedEntry {
    /// The class label.
    pub class: String,
    /// What `--help` says about it, if the manifest says.
    pub description: Option<String>,
    /// Root options only: the flag takes a value, shown under this name in `--help` (`NAME`); absent
    /// for a boolean flag.
    pub value: Option<String>,
    /// Root options only: call the plugin on every invocation, even when the flag is absent.
    pub always: bool,
    /// Task steps only: whether a failure of this step fails its task when the task document does not
    /// say (`None` means the usual default, true).
    pub fail_task_on_error: Option<bool>,
}

/// Why a manifest could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), location(*line, *column))]
pub struct ManifestError {
    /// The manifest file.
    pub path: PathBuf,
    /// 1-based; `None` when the error is about the whole file.
    pub line: Option<usize>,
    /// 1-based column of the fault, with `line`.
    pub column: Option<usize>,
    /// The dotted key at fault, when there is one.
    pub key: Option<String>,
    /// What is wrong, as a sentence.
    pub message: String,
}

fn location(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

/// The manifest's JSON Schema (a manifest read as JSON: TOML tables are objects), generated from the
/// types the manifest is read into. Rules beyond a schema (`min <= max`, a `requires` value that is a
/// version requirement) are the parser's alone.
#[cfg(feature = "schema")]
pub fn json_schema() -> serde_json::Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .root_schema_for::<RawManifest>()
        .to_value()
}

/// A plugin manifest, `agent-env-plugin.toml`.
#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
struct RawManifest {
    /// Who the plugin is and how to start it.
    plugin: RawPlugin,
    /// What it contributes, group by group.
    #[serde(default)]
    provides: Option<RawProvides>,
}

#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
// The reader's own type names are no one else's business.
#[cfg_attr(feature = "schema", schemars(rename = "Plugin"))]
#[serde(deny_unknown_fields)]
struct RawPlugin {
    /// The package name; compared in canonical form (lowercase, each run of -, _ and . one -).
    #[cfg_attr(feature = "schema", schemars(with = "String", regex(pattern = r"\S")))]
    name: toml::Spanned<String>,
    /// The package version.
    #[cfg_attr(feature = "schema", schemars(with = "String", regex(pattern = r"\S")))]
    version: toml::Spanned<String>,
    /// The argv that starts the plugin; a relative first element is relative to the manifest's
    /// folder, a bare name is looked up on PATH.
    #[cfg_attr(feature = "schema", schemars(with = "Vec<String>", length(min = 1)))]
    exec: toml::Spanned<Vec<String>>,
    /// `[min, max]`, min <= max: the protocol versions the plugin speaks.
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Vec<u32>", length(min = 2, max = 2))
    )]
    protocol: toml::Spanned<Vec<u32>>,
    /// Package -> version requirement, e.g. `{agentenv-framework = ">=0.1.0"}`.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, String>"))]
    requires: BTreeMap<String, toml::Spanned<String>>,
    /// A one-line description.
    #[serde(default)]
    description: Option<String>,
    /// Environment variables the plugin needs beyond the default pass-through list: names, or
    /// prefixes ending in `*` (`AWS_*`). Anything else in agent-env's environment is withheld.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Vec<EnvName>>"))]
    env: Option<toml::Spanned<Vec<String>>>,
}

/// A variable name, or a prefix ending in `*`.
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[schemars(transparent)]
#[allow(dead_code)]
struct EnvName(#[schemars(regex(pattern = r"^[A-Za-z0-9_]+\*?$"))] String);

/// The kind of store a class is.
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum StoreKindName {
    Object,
    Document,
    Image,
    Secret,
}

#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "Provides"))]
#[serde(deny_unknown_fields)]
struct RawProvides {
    #[serde(default)]
    envs: BTreeMap<String, RawEntry>,
    #[serde(default)]
    artifacts: BTreeMap<String, RawEntry>,
    #[serde(default)]
    task_steps: BTreeMap<String, RawEntry>,
    #[serde(default)]
    sandbox_providers: BTreeMap<String, RawEntry>,
    #[serde(default)]
    state_providers: BTreeMap<String, RawEntry>,
    #[serde(default)]
    env_providers: BTreeMap<String, RawEntry>,
    #[serde(default)]
    explorer_plugins: BTreeMap<String, RawEntry>,
    #[serde(default)]
    cli_plugins: BTreeMap<String, RawEntry>,
    #[serde(default)]
    cli_root_options: BTreeMap<String, RawEntry>,
    #[serde(default)]
    bundles: BTreeMap<String, RawEntry>,
    /// Store class -> the kind of store it is.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, StoreKindName>"))]
    stores: BTreeMap<String, toml::Spanned<String>>,
}

enum RawEntry {
    Class(String),
    Table {
        class: String,
        description: Option<String>,
        value: Option<String>,
        always: bool,
        fail_task_on_error: Option<bool>,
    },
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for RawEntry {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Entry".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A class label, or a table with it.",
            "anyOf": [
                {"type": "string"},
                {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["class"],
                    "properties": {
                        "class": {"type": "string"},
                        "description": {"type": "string"},
                        "value": {"type": "string", "description": "cli_root_options only: the flag takes a value, shown under this name."},
                        "always": {"type": "boolean", "description": "cli_root_options only: call the plugin on every invocation."},
                        "fail_task_on_error": {"type": "boolean", "description": "task_steps only: whether the step's failure fails its task when the task document does not say."}
                    }
                }
            ]
        })
    }
}

/// The keys an entry table takes.
const ENTRY_KEYS: &str = "class, description, value, always, fail_task_on_error";

/// What a TOML value is, for messages: `the integer 5`.
fn describe_toml(value: &toml::Value) -> String {
    let shown = value.to_string();
    let shown = if shown.len() > 40 {
        format!(
            "{}…",
            &shown[..shown.char_indices().nth(40).map_or(shown.len(), |(i, _)| i)]
        )
    } else {
        shown
    };
    format!("{} {shown}", value.type_str())
}

/// `requires` written as something other than a table (a list of specifiers, as Python packaging
/// writes them, or one string): what it must be instead.
fn requires_not_a_table(
    text: &str,
    span: Option<std::ops::Range<usize>>,
    message: &str,
) -> Option<String> {
    let start = span?.start;
    let line_start = text[..start.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line = text.get(line_start..)?.lines().next()?.trim_start();
    let on_requires = line
        .strip_prefix("requires")
        .is_some_and(|rest| rest.trim_start().starts_with('='));
    (on_requires && message.contains("expected a map")).then(|| {
        "plugin.requires is a table of package = version range, such as requires = { agentenv-framework = \">=0.1.0\" }, not a list or a string".to_string()
    })
}

/// The TOML reader's message, in the manifest's own terms where it would otherwise name serde's internals:
/// a table (often made by a dotted key such as `a.b = …`) where a plain value belongs is reported as
/// such, with how to write the value.
fn plain_toml_message(message: &str) -> String {
    let message = message.trim().replace('`', "'");
    if message.contains("expected a borrowed string") || message.contains("untagged enum") {
        return "a table stands here where a plain value belongs (a dotted key such as a.b = … makes one); \
                write the value itself, e.g. name = \"agentenv-x\", exec = [\"./bin/x\"] or Class = \"object\""
            .to_string();
    }
    message
}

impl<'de> Deserialize<'de> for RawEntry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = toml::Value::deserialize(d)?;
        let mut table = match value {
            toml::Value::String(class) => return Ok(RawEntry::Class(class)),
            toml::Value::Table(t) => t,
            other => {
                return Err(D::Error::custom(format!(
                    "an entry is \"ClassLabel\" or {{ class = \"ClassLabel\", description = \"…\" }}, not the {}",
                    describe_toml(&other)
                )))
            }
        };
        let text =
            |table: &mut toml::map::Map<String, toml::Value>, key: &str| match table.remove(key) {
                None => Ok(None),
                Some(toml::Value::String(s)) => Ok(Some(s)),
                Some(other) => Err(D::Error::custom(format!(
                    "an entry's {key} is a string, not the {}",
                    describe_toml(&other)
                ))),
            };
        let flag =
            |table: &mut toml::map::Map<String, toml::Value>, key: &str| match table.remove(key) {
                None => Ok(None),
                Some(toml::Value::Boolean(b)) => Ok(Some(b)),
                Some(other) => Err(D::Error::custom(format!(
                    "an entry's {key} is true or false, not the {}",
                    describe_toml(&other)
                ))),
            };
        let class = text(&mut table, "class")?.ok_or_else(|| {
            let others: Vec<&str> = table.keys().map(String::as_str).collect();
            D::Error::custom(if others.is_empty() {
                "an entry table needs class = \"ClassLabel\"".to_string()
            } else {
                format!(
                    "an entry table needs class = \"ClassLabel\" (it has {}; an entry takes {ENTRY_KEYS})",
                    others.join(", ")
                )
            })
        })?;
        let description = text(&mut table, "description")?;
        let value = text(&mut table, "value")?;
        let always = flag(&mut table, "always")?.unwrap_or(false);
        let fail_task_on_error = flag(&mut table, "fail_task_on_error")?;
        if let Some(unknown) = table.keys().next() {
            return Err(D::Error::custom(format!(
                "an entry has no key '{unknown}'; it takes {ENTRY_KEYS}"
            )));
        }
        Ok(RawEntry::Table {
            class,
            description,
            value,
            always,
            fail_task_on_error,
        })
    }
}

impl From<RawEntry> for ProvidedEntry {
    fn from(raw: RawEntry) -> Self {
        match raw {
            RawEntry::Class(class) => ProvidedEntry {
                class,
                description: None,
                value: None,
                always: false,
                fail_task_on_error: None,
            },
            RawEntry::Table {
                class,
                description,
                value,
                always,
                fail_task_on_error,
            } => ProvidedEntry {
                class,
                description,
                value,
                always,
                fail_task_on_error,
            },
        }
    }
}

struct LineIndex<'a>(&'a str);

impl LineIndex<'_> {
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let before = &self.0[..offset.min(self.0.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
        (line, col)
    }
}

impl Manifest {
    /// Reads and checks the manifest at `path`.
    pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|e| ManifestError {
            path: path.to_path_buf(),
            line: None,
            column: None,
            key: None,
            message: format!("cannot read the manifest: {e}"),
        })?;
        Manifest::parse(path, &text)
    }

    /// Parses manifest text; `path` is used for messages and to resolve `exec` and bundle folders.
    pub fn parse(path: &Path, text: &str) -> Result<Manifest, ManifestError> {
        let index = LineIndex(text);
        let err_at = |span: Option<std::ops::Range<usize>>, key: Option<&str>, message: String| {
            let (line, column) = match span {
                Some(s) => {
                    let (l, c) = index.line_col(s.start);
                    (Some(l), Some(c))
                }
                None => (None, None),
            };
            ManifestError {
                path: path.to_path_buf(),
                line,
                column,
                key: key.map(str::to_string),
                message,
            }
        };
        let raw: RawManifest = toml::from_str(text).map_err(|e| {
            // A manifest written with `plugin --agent-env-manifest > FILE` holds what the plugin
            // printed before its SDK took stdout over.
            let message = format!(
                "{}{}",
                plain_toml_message(e.message()),
                crate::stray_output::stray_first_line(text)
            );
            if let Some(message) = requires_not_a_table(text, e.span(), &message) {
                return err_at(e.span(), Some("plugin.requires"), message);
            }
            let key =
                guess_key(&message).or_else(|| e.span().and_then(|span| key_at(text, span.start)));
            err_at(e.span(), key.as_deref(), message)
        })?;
        let plugin = raw.plugin;
        let name = plugin.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(err_at(
                Some(plugin.name.span()),
                Some("plugin.name"),
                "plugin.name is empty; name the plugin package".into(),
            ));
        }
        if let Some(why) = crate::names::package_name_problem(&name) {
            return Err(err_at(
                Some(plugin.name.span()),
                Some("plugin.name"),
                format!(
                    "plugin.name {name:?} is not a package name: {why}; write letters, digits, '-', '_' and '.', starting and ending with a letter or digit (for example \"agentenv-my-plugin\")"
                ),
            ));
        }
        let version = plugin.version.get_ref().trim().to_string();
        if version.is_empty() {
            return Err(err_at(
                Some(plugin.version.span()),
                Some("plugin.version"),
                "plugin.version is empty".into(),
            ));
        }
        if plugin.exec.get_ref().is_empty() || plugin.exec.get_ref()[0].trim().is_empty() {
            return Err(err_at(
                Some(plugin.exec.span()),
                Some("plugin.exec"),
                "plugin.exec is empty; give the argv that starts the plugin, e.g. [\"./bin/my-plugin\"]"
                    .into(),
            ));
        }
        let protocol = match plugin.protocol.get_ref().as_slice() {
            [min, max] if min <= max => ProtocolRange {
                min: *min,
                max: *max,
            },
            _ => {
                return Err(err_at(
                    Some(plugin.protocol.span()),
                    Some("plugin.protocol"),
                    "plugin.protocol must be [min, max] with min <= max, e.g. [1, 1]".into(),
                ))
            }
        };
        let mut requires = Vec::new();
        for (package, text) in plugin.requires {
            let req = parse_requirement(text.get_ref()).map_err(|e| {
                err_at(
                    Some(text.span()),
                    Some(&format!("plugin.requires.{package}")),
                    format!(
                        "the requirement {package}{} does not parse: {e}",
                        text.get_ref()
                    ),
                )
            })?;
            requires.push(Requirement {
                package,
                text: text.get_ref().trim().to_string(),
                req,
            });
        }
        let mut env = Vec::new();
        if let Some(names) = plugin.env {
            let span = names.span();
            for name in names.into_inner() {
                if !is_env_pattern(&name) {
                    return Err(err_at(
                        Some(span),
                        Some("plugin.env"),
                        format!(
                            "plugin.env holds '{name}'; write variable names (letters, digits and _) or prefixes ending in *, e.g. [\"OPENAI_API_KEY\", \"AWS_*\"]"
                        ),
                    ));
                }
                env.push(name);
            }
        }
        let mut provides = BTreeMap::new();
        let mut stores = BTreeMap::new();
        if let Some(p) = raw.provides {
            let groups: [(&str, BTreeMap<String, RawEntry>); 10] = [
                ("envs", p.envs),
                ("artifacts", p.artifacts),
                ("task_steps", p.task_steps),
                ("sandbox_providers", p.sandbox_providers),
                ("state_providers", p.state_providers),
                ("env_providers", p.env_providers),
                ("explorer_plugins", p.explorer_plugins),
                ("cli_plugins", p.cli_plugins),
                ("cli_root_options", p.cli_root_options),
                ("bundles", p.bundles),
            ];
            for (group, entries) in groups {
                if !entries.is_empty() {
                    provides.insert(
                        group.to_string(),
                        entries.into_iter().map(|(k, v)| (k, v.into())).collect(),
                    );
                }
            }
            for (class, kind) in p.stores {
                if !crate::names::STORE_KINDS.contains(&kind.get_ref().as_str()) {
                    return Err(err_at(
                        Some(kind.span()),
                        Some(&format!("provides.stores.{class}")),
                        format!(
                            "provides.stores.{class} is '{}'; a store kind is one of document, object, image, secret",
                            kind.get_ref()
                        ),
                    ));
                }
                stores.insert(class, kind.into_inner());
            }
        }
        Ok(Manifest {
            path: path.to_path_buf(),
            name,
            version,
            exec: plugin.exec.into_inner(),
            protocol,
            requires,
            description: plugin.description,
            env,
            provides,
            stores,
        })
    }

    /// The package's canonical name.
    pub fn canonical_name(&self) -> String {
        canonical_name(&self.name)
    }

    /// The folder holding the manifest.
    pub fn folder(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// `exec` with a relative first element (one containing a `/`, or naming a file beside the manifest)
    /// made absolute against the manifest's folder. A bare name with no such file is left for `PATH`.
    pub fn resolved_exec(&self) -> Vec<String> {
        let mut argv = self.exec.clone();
        if let Some(first) = argv.first_mut() {
            let p = Path::new(first.as_str());
            if p.is_relative() {
                let beside = self.folder().join(p);
                if first.contains('/') || beside.exists() {
                    *first = tidy_path(&beside).to_string_lossy().into_owned();
                }
            }
        }
        argv
    }

    /// The arguments after the first that are relative paths naming a file beside the manifest
    /// (`plugin.py` in `["python3", "plugin.py"]`): they are passed as written, so the plugin finds
    /// the file only when it starts in the manifest's folder.
    pub fn relative_file_args(&self) -> Vec<&str> {
        self.exec
            .iter()
            .skip(1)
            .map(String::as_str)
            .filter(|arg| {
                !arg.starts_with('-')
                    && Path::new(arg).is_relative()
                    && self.folder().join(arg).is_file()
            })
            .collect()
    }

    /// Requirements that name a core package (`agentenv-framework`, `agentenv-framework-protocol`).
    pub fn core_requirements(&self) -> impl Iterator<Item = &Requirement> {
        self.requires.iter().filter(|r| {
            let c = canonical_name(&r.package);
            c == CORE_PACKAGE || c == PROTOCOL_PACKAGE
        })
    }

    /// Every (group, name, entry), in group order then name order.
    pub fn contributions(&self) -> impl Iterator<Item = (&str, &str, &ProvidedEntry)> {
        crate::names::GROUPS.iter().flat_map(move |g| {
            self.provides
                .get(*g)
                .into_iter()
                .flat_map(move |m| m.iter().map(move |(n, e)| (*g, n.as_str(), e)))
        })
    }
}

/// Parses a version requirement such as `>=0.1.0` or `>=0.9, <1`. The two PEP 440 operators a plugin
/// written for the Python original may carry are read as that original reads them: `~=0.9` is
/// `>=0.9, <1` and `~=0.9.1` is `>=0.9.1, <0.10`; `==0.9.1` is `=0.9.1` (and `==0.9.*` is `=0.9.*`).
pub fn parse_requirement(text: &str) -> Result<semver::VersionReq, semver::Error> {
    let clauses: Vec<String> = text
        .split(',')
        .map(|clause| pep440_clause(clause.trim()))
        .collect();
    semver::VersionReq::parse(&clauses.join(", "))
}

/// One comma-separated clause in semver's spelling; a clause that is not PEP 440's `~=` or `==` is kept.
fn pep440_clause(clause: &str) -> String {
    if let Some(version) = clause.strip_prefix("~=") {
        let version = version.trim();
        let parts: Vec<&str> = version.split('.').collect();
        let numbers: Option<Vec<u64>> = parts.iter().map(|p| p.parse().ok()).collect();
        return match numbers.as_deref() {
            Some([major, _]) => format!(">={version}, <{}", major + 1),
            Some([major, minor, _, ..]) => format!(">={version}, <{major}.{}", minor + 1),
            // `~=1` is not valid PEP 440 either; semver says why.
            _ => clause.to_string(),
        };
    }
    match clause.strip_prefix("==") {
        Some(version) => format!("={}", version.trim()),
        None => clause.to_string(),
    }
}

fn guess_key(message: &str) -> Option<String> {
    // serde messages look like "missing field 'exec'" or "unknown field 'taskz', expected ...";
    // another quoted word ("invalid type: integer '1'") is a value, not a key.
    let start = message.find("field '")? + "field '".len();
    let end = start + message[start..].find('\'')?;
    Some(message[start..end].to_string())
}

/// The dotted key whose value stands at `offset` of the manifest `text` (`plugin.version` for the `1`
/// of `version = 1` under `[plugin]`), when the value is on a `key = value` line.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let key = text[line_start..offset].split_once('=')?.0.trim();
    if key.is_empty() || key.starts_with('#') {
        return None;
    }
    // The nearest table header above the line, if any.
    let table = text[..line_start].lines().rev().find_map(|line| {
        let line = line.trim();
        let name = line.strip_prefix('[')?.strip_suffix(']')?;
        Some(
            name.trim_matches(|c| c == '[' || c == ']')
                .trim()
                .to_string(),
        )
    });
    Some(match table {
        Some(table) => format!("{table}.{key}"),
        None => key.to_string(),
    })
}

/// A variable name (`OPENAI_API_KEY`) or a prefix ending in `*` (`AWS_*`).
fn is_env_pattern(text: &str) -> bool {
    let name = text.strip_suffix('*').unwrap_or(text);
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `path` without its `.` parts, and with each `..` taken back over the folder before it when that
/// folder is not a link (where a link leads, `..` leaves from its target): the same file, as a person
/// reads it in a message (`…/plugins/../../../bin/x` was shown as written), and as the host's pins
/// name it.
pub fn tidy_path(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                let folder = matches!(out.components().next_back(), Some(Component::Normal(_)));
                let link =
                    std::fs::symlink_metadata(&out).is_ok_and(|m| m.file_type().is_symlink());
                if folder && !link {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_executable_is_shown_without_dot_parts() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("share/agent-env/plugins/x");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        let tidied = tidy_path(&deep.join("../../../../bin/./tool"));
        assert_eq!(tidied, dir.path().join("bin/tool"));
        // Past a link, `..` is kept: it leaves from where the link leads.
        std::os::unix::fs::symlink(&deep, dir.path().join("link")).unwrap();
        let through = dir.path().join("link/../tool");
        assert_eq!(tidy_path(&through), through);
    }

    #[test]
    fn pep440_requirements_read_as_the_original_reads_them() {
        let matches = |req: &str, version: &str| {
            parse_requirement(req)
                .unwrap()
                .matches(&semver::Version::parse(version).unwrap())
        };
        assert!(matches(">=0.9", "0.10.0"));
        assert!(matches(">=0.9.1220", "0.10.0"));
        assert!(matches("~=0.9", "0.10.0"));
        assert!(!matches("~=0.9", "1.0.0"));
        assert!(matches("~=0.9.1", "0.9.5"));
        assert!(!matches("~=0.9.1", "0.10.0"));
        assert!(matches("==0.10.0", "0.10.0"));
        assert!(!matches("==0.9.1364", "0.10.0"));
        assert!(matches(">=0.9, <1", "0.10.0"));
        assert!(parse_requirement("latest please").is_err());
    }

    const GOOD: &str = r#"
[plugin]
name = "agentenv-openciv3"
version = "0.1.0"
exec = ["./bin/agentenv-openciv3"]
protocol = [1, 1]
requires = { agentenv-framework = ">=0.1.0" }

[provides.task_steps]
openciv3_match = "MatchStep"
save_env_recording = { class = "SaveEnvRecordingStep", fail_task_on_error = false }
[provides.cli_plugins]
openciv3 = { class = "openciv3", description = "Set up and watch OpenCiv3 games" }
[provides.bundles]
openciv3 = "bundles/openciv3"
[provides.stores]
ContentAddressedObjectStore = "object"
"#;

    #[test]
    fn a_good_manifest_parses() {
        let m = Manifest::parse(Path::new("/p/agent-env-plugin.toml"), GOOD).unwrap();
        assert_eq!(m.name, "agentenv-openciv3");
        assert_eq!(m.protocol, ProtocolRange { min: 1, max: 1 });
        assert_eq!(m.requires[0].text, ">=0.1.0");
        assert_eq!(
            m.provides["task_steps"]["openciv3_match"].class,
            "MatchStep"
        );
        assert_eq!(
            m.provides["cli_plugins"]["openciv3"].description.as_deref(),
            Some("Set up and watch OpenCiv3 games")
        );
        assert_eq!(m.stores["ContentAddressedObjectStore"], "object");
        assert_eq!(m.resolved_exec()[0], "/p/bin/agentenv-openciv3");
        assert_eq!(m.contributions().count(), 4);
    }

    #[test]
    fn a_missing_key_names_file_line_and_key() {
        let text = "[plugin]\nname = \"x\"\nversion = \"1\"\nprotocol = [1, 1]\n";
        let e = Manifest::parse(Path::new("/p/m.toml"), text).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("exec"));
        assert!(e.line.is_some());
        assert!(e.to_string().starts_with("/p/m.toml:1"), "{e}");
        assert!(e.message.contains("missing field 'exec'"), "{e}");
    }

    #[test]
    fn a_value_of_the_wrong_type_names_its_key_not_the_value() {
        let text = "[plugin]\nname = \"x\"\nversion = 1\nexec = [\"x\"]\nprotocol = [1, 1]\n";
        let e = Manifest::parse(Path::new("/p/m.toml"), text).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("plugin.version"), "{e}");
        assert_eq!(e.line, Some(3), "{e}");
        assert_eq!(key_at("a = 1", 4), Some("a".into()));
        assert_eq!(key_at("[t]\n# c\nx = [1,\n 2]", 14), Some("t.x".into()));
        assert_eq!(key_at("[t]\n# c\nx = [1,\n 2]", 17), None);
    }

    #[test]
    fn an_unknown_group_is_refused_with_its_line() {
        let text = GOOD.replace("[provides.bundles]", "[provides.bundlez]");
        let e = Manifest::parse(Path::new("/p/m.toml"), &text).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("bundlez"));
        assert_eq!(e.line, Some(14), "{e}");
    }

    #[test]
    fn bad_toml_and_bad_requirements_are_errors() {
        let e = Manifest::parse(Path::new("m.toml"), "[plugin\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        let text = GOOD.replace(">=0.1.0", "latest please");
        let e = Manifest::parse(Path::new("m.toml"), &text).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("plugin.requires.agentenv-framework"));
        assert_eq!(e.line, Some(7));
    }

    #[test]
    fn a_bad_provides_entry_says_what_to_write_instead() {
        let cases = [
            ("5", "an entry is \"ClassLabel\" or { class = \"ClassLabel\", description = \"…\" }, not the integer 5"),
            ("{ clas = \"X\" }", "an entry table needs class = \"ClassLabel\" (it has clas; an entry takes class, description, value, always, fail_task_on_error)"),
            ("{ class = \"X\", always = \"yes\" }", "an entry's always is true or false, not the string \"yes\""),
            ("{ class = \"X\", colour = \"red\" }", "an entry has no key 'colour'; it takes class, description"),
        ];
        for (entry, want) in cases {
            let text = format!(
                "[plugin]\nname = \"x\"\nversion = \"1\"\nexec = [\"x\"]\nprotocol = [1, 1]\n[provides.task_steps]\nmy_step = {entry}\n"
            );
            let err = Manifest::parse(Path::new("/p/agent-env-plugin.toml"), &text)
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{entry}: {err}");
            assert!(!err.contains("untagged"), "{err}");
        }
    }
}

#[cfg(test)]
mod fuzz_regressions {
    use super::*;

    const HEAD: &str =
        "[plugin]\nname = \"x\"\nversion = \"0.1.0\"\nexec = [\"./x\"]\nprotocol = [1, 1]\n";

    /// Found by the fuzz targets: a dotted key where a plain value belongs gave serde's own words.
    #[test]
    fn a_table_where_a_value_belongs_is_said_plainly() {
        for text in [
            format!("{HEAD}[provides.stores]\nConte.tAddressedObjectStore = \"object\"\n"),
            format!("{HEAD}requires = {{ age.tenv-framework = \">=0.1.0\" }}\n"),
            "[plugin]\nname.x = \"a\"\nversion = \"0.1.0\"\nexec = [\"./x\"]\nprotocol = [1, 1]\n"
                .to_string(),
        ] {
            let err = Manifest::parse(Path::new("/p/agent-env-plugin.toml"), &text).unwrap_err();
            let shown = err.to_string();
            assert!(!shown.contains("borrowed"), "{shown}");
            assert!(
                shown.contains("a table stands here where a plain value belongs"),
                "{shown}"
            );
            assert!(err.line.is_some(), "{shown}");
        }
    }

    #[test]
    fn requires_as_a_list_says_it_is_a_table() {
        for requires in [
            "[\"agentenv-framework>=0.1\"]",
            "\"agentenv-framework>=0.1\"",
        ] {
            let text = format!("{HEAD}requires = {requires}\n");
            let err = Manifest::parse(Path::new("/p/agent-env-plugin.toml"), &text).unwrap_err();
            assert_eq!(err.key.as_deref(), Some("plugin.requires"), "{err}");
            assert!(
                err.to_string().contains("plugin.requires is a table of package = version range, such as requires = { agentenv-framework = \">=0.1.0\" }"),
                "{err}"
            );
        }
    }
}
