//! `agent-env config check [--json]`, and `check_all` for `agent-env run`: every configured store and every
//! registration table is checked before anything runs, and every problem is reported at once.

use super::document::ConfigDocument;
use super::error::ConfigError;
use super::explorer::ExplorerSettings;
use super::plugins::plugin_tables;
use super::references::{resolve_table_at, resolve_table_fully, unresolved_at, SecretLookup};
use super::registrations::{
    check_agents, impls, provider_entries, split_impl, ProviderKind, IMPL_TABLES,
};
use super::shared_stores::SharedStores;
use super::store_builder::{StoreBuilder, StoresBuilder};
use super::store_selection::{runner_problem, selection, StoreSelection, RUNNER, STORE_SECTIONS};
use super::tables::{table_at, toml_key};
use super::warnings::warnings;
use crate::impl_spelling;
use serde::Serialize;
use std::cell::RefCell;
use std::collections::BTreeSet;

/// A lookup that answers every name and remembers it, so references are checked for form while secrets the
/// check cannot read are noted rather than reported as missing.
#[derive(Default)]
struct NotedSecrets {
    names: RefCell<Vec<String>>,
}

impl SecretLookup for NotedSecrets {
    fn get(&self, name: &str) -> Result<Option<String>, String> {
        self.names.borrow_mut().push(name.to_string());
        Ok(Some(String::new()))
    }
}

/// What the check found.
#[derive(Debug, Clone, Serialize)]
pub struct CheckOutcome {
    pub config_path: Option<String>,
    pub problems: Vec<Problem>,
    pub warnings: Vec<String>,
    /// What could not be checked here (plugin stores, secrets no store was built for).
    pub notes: Vec<String>,
    /// How many stores, plugin tables and registration tables were checked.
    pub checked: Checked,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Checked {
    pub stores: usize,
    pub plugin_tables: usize,
    pub registrations: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    pub code: &'static str,
    pub message: String,
}

/// What one pass over the config found.
#[derive(Default)]
struct Findings {
    /// Problems in the tables agent-env reads.
    errors: Vec<ConfigError>,
    /// Problems in `[plugins.<package>]` tables no installed plugin reads, said as warnings. Such a
    /// table is its plugin's alone: a broken one fails only that plugin's start, never agent-env.
    plugin_tables: Vec<String>,
    /// Problems in the tables of installed plugins (`config check` only): each stops its plugin
    /// from starting, so a run whose tasks use one of its steps refuses to start. A run's preflight
    /// leaves them to the steps that use the plugin.
    plugin_table_problems: Vec<Problem>,
    /// Settings nothing in this agent-env reads, said as warnings.
    unused: Vec<String>,
    notes: Vec<String>,
    checked: Checked,
    /// For a run's preflight: the sections this agent-env does not read (`[model]`,
    /// `[conversations]`, `[agents]`) are left to the tools that do, so a reference there that does
    /// not resolve (an API key not set here) stops no run. `config check` still says it.
    for_run: bool,
    /// For a run's preflight: the store sections the run reads (a bundle run keeps its objects
    /// and documents in the local stores, whatever `[stores.object]` and `[stores.document]` say,
    /// so a teammate without the shared stores' credentials still runs bundles); `None` for all.
    /// The others are resolved all the same, so the secrets they hold are masked.
    stores_read: Option<&'static [&'static str]>,
}

/// Every problem in the tables agent-env reads, for a caller that only needs them (`agent-env run`
/// before any step). The plugins' own tables are left to their plugins.
pub fn check_all(doc: &ConfigDocument, builder: &dyn StoreBuilder) -> Vec<ConfigError> {
    check_for_run(doc, builder, None)
}

/// [`check_all`] for a run that reads only the store sections `stores_read` names (all for
/// `None`).
fn check_for_run(
    doc: &ConfigDocument,
    builder: &dyn StoreBuilder,
    stores_read: Option<&'static [&'static str]>,
) -> Vec<ConfigError> {
    let mut found = Findings {
        for_run: true,
        stores_read,
        ..Findings::default()
    };
    run_checks(doc, builder, &mut found);
    found.errors
}

/// The full outcome, for `config check`: a plugin table's problem is a warning, since it fails only
/// that plugin.
pub fn check(doc: &ConfigDocument, builder: &dyn StoreBuilder) -> CheckOutcome {
    let mut found = Findings::default();
    run_checks(doc, builder, &mut found);
    let mut all_warnings = if doc.error.is_none() {
        warnings(&doc.table)
    } else {
        Vec::new()
    };
    let mut shared_stores_note = None;
    if doc.error.is_none() {
        all_warnings.extend(super::shared_variables::credentials_in_plugins_variables(
            &doc.table,
        ));
        let open_config = doc
            .path
            .as_deref()
            .and_then(super::file_modes::open_to_others);
        all_warnings.extend(super::literal_secrets::literal_credentials(
            &doc.table,
            open_config.as_ref(),
        ));
        all_warnings.extend(super::file_modes::secrets_file_warning(doc));
        all_warnings.extend(super::grant_bind::exposed_grant_server(doc));
        match super::shared_stores::shared_stores_finding(doc) {
            Some(SharedStores::Warning(warning)) => all_warnings.push(warning),
            Some(SharedStores::Note(note)) => shared_stores_note = Some(note),
            None => {}
        }
    }
    all_warnings.extend(found.plugin_tables);
    all_warnings.extend(found.unused);
    let mut problems: Vec<Problem> = found
        .errors
        .iter()
        .map(|e| Problem {
            code: e.code(),
            message: e.to_string(),
        })
        .collect();
    problems.extend(found.plugin_table_problems);
    // `[explorer]` fails only `agent-env up`, so a run's preflight (`check_all`) leaves it out. A
    // problem the checks above found already (an `[explorer]` that is not a table, which the
    // `[explorer.plugins]` read finds too) is not said twice.
    if doc.error.is_none() {
        for e in ExplorerSettings::problems(doc) {
            let message = e.to_string();
            if !problems.iter().any(|p| p.message == message) {
                problems.push(Problem {
                    code: e.code(),
                    message: format!("{message} (agent-env up refuses to start until it is fixed)"),
                });
            }
        }
    }
    CheckOutcome {
        config_path: doc.path_display(),
        problems,
        warnings: all_warnings,
        notes: found.notes.into_iter().chain(shared_stores_note).collect(),
        checked: found.checked,
    }
}

/// `; did you mean [plugins.agentenv-browser]?` when an installed package's name is close to
/// `package`, a table's canonical name no installed package has.
fn meant_package(package: &str, installed: &BTreeSet<String>) -> Option<String> {
    crate::discovery::not_installed::NotInstalled::new(package, installed)
        .meant()
        .map(|meant| format!("; did you mean [plugins.{}]?", toml_key(meant)))
}

/// What an impl that names no class at all (neither a built-in one nor a plugin's
/// `<package>:<Class>`) says, for a store section the run does not build.
fn unknown_class(selection: &StoreSelection) -> Option<ConfigError> {
    let kind = super::configured_store::store_kind(selection).ok()?;
    crate::stores::from_spec::classify(kind, &selection.impl_name)
        .err()
        .map(|e| ConfigError::Store(e.to_string()))
}

/// `[sandbox] default` as `agent-env run` reads it: a chain of provider names, one of which this
/// agent-env must have (a plugin's provider, which loads, is said to be unused here).
fn sandbox_default_problem(
    doc: &ConfigDocument,
    manifests: &[agent_env_protocol::manifest::Manifest],
) -> Option<ConfigError> {
    let value = doc.table.get("sandbox")?.as_table()?.get("default")?;
    let Some(chain) = value.as_str() else {
        return Some(ConfigError::SandboxDefault(format!(
            "[sandbox] default must be a string of sandbox provider names (the built-in one is 'local'), got {}",
            super::tables::type_name(value)
        )));
    };
    crate::sandbox::first_available(chain).is_none().then(|| {
        ConfigError::SandboxDefault(super::sandbox_chain::no_provider_here(
            "[sandbox] default",
            chain,
            manifests,
        ))
    })
}

fn run_checks(doc: &ConfigDocument, builder: &dyn StoreBuilder, found: &mut Findings) {
    let Findings {
        errors,
        plugin_tables: plugin_problems,
        plugin_table_problems,
        unused,
        notes,
        checked,
        for_run,
        stores_read,
    } = found;
    if let Some(problem) = &doc.error {
        errors.push(problem.error.clone());
        return;
    }
    let noted = NotedSecrets::default();
    let secrets: &dyn SecretLookup = builder.secrets().unwrap_or(&noted);

    for section in STORE_SECTIONS {
        // A section the run does not read stops nothing but a store it cannot even select: a table
        // of the wrong shape or a class no one has is the config's own fault, not a credential
        // missing here, and a run must not go on as if the user had written nothing.
        let read_here = stores_read.is_none_or(|read| read.contains(&section.name));
        let selection = match selection(doc, section.name) {
            Ok(s) => s,
            Err(e) => {
                // A `[stores]` that is not a table is every store section's problem: said once.
                if !errors.contains(&e) {
                    errors.push(e);
                }
                continue;
            }
        };
        let noted_before = noted.names.borrow().len();
        let result = check_store(&selection, &doc.env, builder, secrets, notes);
        // A section the run does not read is still resolved (each secret it holds is remembered,
        // so the run masks it), but what is wrong with it stops nothing.
        if !read_here {
            // Save an impl no one has: the config's own fault, as a table it cannot select is.
            errors.extend(unknown_class(&selection));
            continue;
        }
        checked.stores += 1;
        // A `secret:` value the check could not read (the secret store is a plugin's, not started
        // here) stands in as an empty string: what that fails is not the config's fault, and the
        // store is checked with its real values when it is built.
        let took_unread_secret = noted.names.borrow().len() > noted_before;
        match result {
            Err(found) if took_unread_secret => {
                // What the stand-in caused is left out; the section's other problems stay.
                let from_secrets = keys_taking_secrets(&selection.config);
                errors.extend(
                    found
                        .into_iter()
                        .filter(|e| !names_one_of(e, &from_secrets)),
                );
                notes.push(format!(
                    "[stores.{}] takes a secret: value the check cannot read here; its settings are checked with it when the store is built",
                    section.name
                ));
            }
            Err(found) => errors.extend(found),
            Ok(()) => {}
        }
    }
    // A runner other than the built-in one, by the variable or in the file, stops runs: they would
    // not run where it asks.
    match selection(doc, RUNNER.name) {
        Err(e) => errors.push(e),
        Ok(chosen) => errors.extend(runner_problem(&chosen)),
    }

    // The installed packages, for `config check`: a run's preflight leaves the plugins' tables,
    // and an impl whose package is not installed, to the steps that would start the plugins.
    let installed: Option<BTreeSet<String>> = (!*for_run)
        .then(|| builder.installed_packages())
        .flatten()
        .map(|names| names.into_iter().collect());
    match plugin_tables(doc) {
        Err(e) => match installed.as_ref().filter(|names| !names.is_empty()) {
            Some(_) => plugin_table_problems.push(Problem {
                code: e.code(),
                message: format!("{e} (no plugin starts until it is fixed: a run whose tasks use a plugin's step refuses to start, and what the plugins provide fails to load)"),
            }),
            None => plugin_problems.push(format!(
                "{e}; every plugin's read of its settings fails, and agent-env itself does not read [plugins]"
            )),
        },
        Ok(tables) => {
            for table in tables {
                checked.plugin_tables += 1;
                let package = &table.package;
                let problems = table.settings_problems(doc, Some(secrets));
                // A table no installed package has: `Some(hint)`, the hint a "did you mean" when an
                // installed package's name is close (a typo reads as a table nothing reads).
                let unread_hint = installed
                    .as_ref()
                    .filter(|names| !names.contains(package))
                    .map(|names| meant_package(package, names));
                if let (true, Some(hint)) = (problems.is_empty(), &unread_hint) {
                    let hint = hint.as_deref().unwrap_or(
                        "; `agent-env plugin list` shows the installed plugins",
                    );
                    plugin_problems.push(format!(
                        "[plugins.{}]: no installed plugin is named {package}, so nothing reads the table{hint}",
                        toml_key(table.spellings[0])
                    ));
                }
                for e in problems {
                    match (&installed, &unread_hint) {
                        (Some(_), None) => plugin_table_problems.push(Problem {
                            code: e.code(),
                            message: format!("{e} ({package} does not start until it is fixed: a run whose tasks use one of its steps refuses to start, and what else it provides fails to load)"),
                        }),
                        (Some(_), Some(hint)) => plugin_problems.push(format!(
                            "{e}; no installed plugin is named {package}, so nothing reads the table now; once {package} is installed, it does not start until the table is fixed{}",
                            hint.as_deref().unwrap_or_default()
                        )),
                        (None, _) => plugin_problems.push(format!(
                            "{e}; {package} is not started while its table cannot be read, so what it provides fails to load (agent-env itself does not read the table)"
                        )),
                    }
                }
            }
        }
    }

    // `config check` also names an impl whose package is not installed, as `plugin check` does.
    for (group, path) in IMPL_TABLES {
        match impls(doc, group) {
            Err(e) => errors.push(e),
            Ok(items) => {
                if !items.is_empty() {
                    checked.registrations += 1;
                }
                let table = path.join(".");
                for item in items {
                    match split_impl(&item) {
                        Err(e) => errors.push(e.at(format!("[{table}] impls"))),
                        Ok((package, class)) => {
                            let package = package.trim();
                            let missing = installed.as_ref().is_some_and(|names| {
                                !names.contains(&agent_env_protocol::names::canonical_name(package))
                            });
                            if missing {
                                let class = class.trim();
                                let instead = impl_spelling::provider_in_group(
                                    builder.manifests(),
                                    group,
                                    class,
                                )
                                .map(|m| impl_spelling::write_instead(m, class, ""))
                                .unwrap_or_else(|| {
                                    "; `agent-env plugin list` shows the installed ones".to_string()
                                });
                                errors.push(ConfigError::Store(format!(
                                    "[{table}] impls: Cannot import impl '{item}': no installed plugin package named '{package}'{instead}"
                                )));
                            }
                        }
                    }
                }
            }
        }
    }
    for kind in [ProviderKind::Sandbox, ProviderKind::State] {
        match provider_entries(doc, kind) {
            Err(e) => errors.push(e),
            Ok(entries) => {
                for entry in entries {
                    checked.registrations += 1;
                    let table = entry.table_name();
                    match builtin_provider_problem(&entry) {
                        Some(e) => errors.push(e),
                        None => unused.extend(unrun_builtin_provider(&entry)),
                    }
                    if let Some(impl_name) = &entry.impl_name {
                        if let Err(e) = split_impl(impl_name) {
                            errors.push(e.at(format!("[{table}]")));
                        }
                    }
                    notes.extend(entry.extra_key_warnings());
                    if let Some(config) = &entry.config {
                        errors.extend(unresolved_at(
                            config,
                            &format!("{table}.config"),
                            &doc.env,
                            Some(secrets),
                        ));
                    }
                }
            }
        }
    }
    if let Err(e) = check_agents(doc) {
        errors.push(e);
    }
    if let Some(e) = sandbox_default_problem(doc, builder.manifests()) {
        errors.push(e);
    }
    // References in the plain sections are resolved where they are read; resolve them now.
    // `[explorer]`'s are `ExplorerSettings::problems`' to check, with the rules `agent-env up` reads
    // them by (no `secret:`), and fail only `up`.
    for name in ["model", "conversations", "agents", "sandbox"] {
        if *for_run && name != "sandbox" {
            continue;
        }
        match table_at(&doc.table, &[name]) {
            Err(e) => errors.push(e),
            Ok(None) => {}
            Ok(Some(table)) => {
                let mut plain = table.clone();
                if name == "sandbox" {
                    plain.remove("providers");
                }
                errors.extend(unresolved_at(&plain, name, &doc.env, Some(secrets)));
            }
        }
    }
    let mut unread: Vec<String> = noted.names.borrow().clone();
    unread.dedup();
    let why = match builder.secrets_unavailable() {
        Some(reason) => format!(
            "the configured secret store could not be built ({reason}), so what names it was checked without its value"
        ),
        None => "no secret store is built by this check".to_string(),
    };
    for name in unread {
        notes.push(format!("secret:{name} was not looked up: {why}"));
    }
}

/// A config-only sandbox provider table on a name the Python agent-env has built in and this one
/// does not run (`modal`): accepted, as the original accepts it, but nothing here reads it.
fn unrun_builtin_provider(entry: &super::registrations::ProviderEntry) -> Option<String> {
    let reserved = entry.kind == ProviderKind::Sandbox
        && entry.name != crate::sandbox::LOCAL
        && crate::builtin_names::is_builtin(entry.kind.group(), &entry.name);
    reserved.then(|| {
        format!(
            "[{}] configures '{}', a sandbox provider built into the Python agent-env that this agent-env does not run (its one provider is '{}'), so nothing uses the table; remove it, or keep it for the Python agent-env",
            entry.table_name(),
            entry.name,
            crate::sandbox::LOCAL
        )
    })
}

/// A provider table on a built-in backend's name: a sandbox one may only configure it, a state one may not
/// name it at all.
fn builtin_provider_problem(entry: &super::registrations::ProviderEntry) -> Option<ConfigError> {
    if !crate::builtin_names::is_builtin(entry.kind.group(), &entry.name) {
        return None;
    }
    match entry.kind {
        ProviderKind::State => Some(ConfigError::StateProviderIsBuiltin {
            name: entry.name.clone(),
        }),
        ProviderKind::Sandbox if entry.impl_name.is_some() => {
            Some(ConfigError::SandboxProviderIsBuiltin {
                name: entry.name.clone(),
            })
        }
        ProviderKind::Sandbox => entry.config_only_violation("a built-in backend"),
    }
}

fn check_store(
    selection: &StoreSelection,
    env: &crate::environment::Environment,
    builder: &dyn StoreBuilder,
    secrets: &dyn SecretLookup,
    notes: &mut Vec<String>,
) -> Result<(), Vec<ConfigError>> {
    let table = format!("stores.{}.config", selection.kind);
    // The secret store is built before any secret store exists, so it cannot use secret: references.
    let lookup = (selection.kind != "secret").then_some(secrets);
    let config = match resolve_table_fully(&selection.config, env, lookup) {
        Ok(config) => config,
        Err(failures) => {
            let unresolved = failures.into_iter().map(|f| f.at(&table)).collect();
            return Err(with_the_other_settings(
                selection, unresolved, env, builder, lookup,
            ));
        }
    };
    if let Some(note) = builder.build(selection, &config)? {
        notes.push(note);
    }
    Ok(())
}

/// Every reference that does not resolve, and the problems of a built-in local store's other
/// settings (an unknown key, a wrong type), which they would otherwise hide until they resolve: the
/// store is checked without the keys that did not resolve, leaving out what it says about those. A
/// hosted or a plugin's store is not checked so, since checking it reaches its server, which a
/// missing setting would fail.
fn with_the_other_settings(
    selection: &StoreSelection,
    unresolved: Vec<ConfigError>,
    env: &crate::environment::Environment,
    builder: &dyn StoreBuilder,
    lookup: Option<&dyn SecretLookup>,
) -> Vec<ConfigError> {
    let is_local = super::configured_store::store_kind(selection)
        .is_ok_and(|kind| crate::stores::local_builtin(kind, &selection.impl_name).is_some());
    if !is_local {
        return unresolved;
    }
    let table = format!("stores.{}.config", selection.kind);
    let mut errors = unresolved;
    let mut resolved = toml::Table::new();
    let mut unresolved_keys: Vec<String> = Vec::new();
    for (key, value) in &selection.config {
        let one = toml::Table::from_iter([(key.clone(), value.clone())]);
        match resolve_table_at(&one, &table, env, lookup) {
            Ok(one) => resolved.extend(one),
            Err(_) => unresolved_keys.push(key.clone()),
        }
    }
    if let Err(found) = builder.build(selection, &resolved) {
        errors.extend(
            found
                .into_iter()
                .filter(|e| !names_one_of(e, &unresolved_keys)),
        );
    }
    errors
}

/// Whether the problem `e` is about one of the settings `keys`, as a store's problems name them.
fn names_one_of(e: &ConfigError, keys: &[String]) -> bool {
    let text = e.to_string();
    keys.iter()
        .any(|key| text.contains(&format!("'{key}'")) || text.contains(&format!(" {key} ")))
}

/// The keys of a store's config whose value holds a `secret:` reference, at any depth.
fn keys_taking_secrets(config: &toml::Table) -> Vec<String> {
    fn takes(value: &toml::Value) -> bool {
        match value {
            toml::Value::String(text) => {
                super::references::parse_reference(text).is_some_and(|r| r.scheme == "secret")
            }
            toml::Value::Array(items) => items.iter().any(takes),
            toml::Value::Table(table) => table.values().any(takes),
            _ => false,
        }
    }
    config
        .iter()
        .filter(|(_, value)| takes(value))
        .map(|(key, _)| key.clone())
        .collect()
}

/// The text answer: each problem, then `ok: …` or the count.
pub fn render_text(outcome: &CheckOutcome) -> String {
    let mut out = String::new();
    let place = outcome.config_path.as_deref().unwrap_or("(no config file)");
    for warning in &outcome.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
    for note in &outcome.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    if outcome.problems.is_empty() {
        let c = &outcome.checked;
        out.push_str(&format!(
            "ok: {place}: {} store(s), {} plugin table(s), {} registration table(s) checked\n",
            c.stores, c.plugin_tables, c.registrations
        ));
    } else {
        for problem in &outcome.problems {
            out.push_str(&format!(
                "problem: {} [{}]\n",
                problem.message, problem.code
            ));
        }
        let found = match outcome.config_path.as_deref() {
            Some(path) => format!("in {path}"),
            None => "found; no config file was read".to_string(),
        };
        out.push_str(&format!("{} problem(s) {found}\n", outcome.problems.len()));
    }
    out
}

/// The JSON answer, two-space indented.
pub fn render_json(outcome: &CheckOutcome) -> String {
    #[derive(Serialize)]
    struct Out<'a> {
        format_version: u32,
        ok: bool,
        #[serde(flatten)]
        outcome: &'a CheckOutcome,
    }
    serde_json::to_string_pretty(&Out {
        format_version: 1,
        ok: outcome.problems.is_empty(),
        outcome,
    })
    .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// Why `agent-env run` refused to start: the config has problems.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "the config{} has {} problem(s), so nothing was run:\n{}\nFix them, then check with `agent-env config check`.",
    place.as_deref().map(|p| format!(" at {p}")).unwrap_or_default(),
    problems.len(),
    problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n")
)]
pub struct PreflightError {
    pub place: Option<String>,
    pub problems: Vec<ConfigError>,
}

/// The store sections a bundle run reads: its objects and documents are the local stores', so
/// only the secret and image stores its plugin steps reach are the configured ones.
pub const BUNDLE_RUN_STORES: &[&str] = &["secret", "image"];

/// What a run that reads only the store sections `stores_read` names warns of before it starts: each
/// section it does not read whose impl is a plugin's `<package>:<Class>` that the installed
/// `manifests` do not provide (the package is not installed, or lists no such class). Not refused,
/// since a teammate may lack a plugin the shared config names, but not passed over in silence either:
/// `config check` and a run that reads the section fail on it.
pub fn unread_plugin_store_warnings(
    doc: &ConfigDocument,
    manifests: &[agent_env_protocol::manifest::Manifest],
    stores_read: &[&str],
) -> Vec<String> {
    if doc.error.is_some() || doc.path.is_none() {
        return Vec::new();
    }
    let unread_plugin_stores: Vec<StoreSelection> = STORE_SECTIONS
        .iter()
        .filter(|section| !stores_read.contains(&section.name))
        .filter_map(|section| selection(doc, section.name).ok())
        .filter(|selection| {
            super::configured_store::store_kind(selection).is_ok_and(|kind| {
                matches!(
                    crate::stores::from_spec::classify(kind, &selection.impl_name),
                    Ok(crate::stores::from_spec::Target::Plugin { .. })
                )
            })
        })
        .collect();
    if unread_plugin_stores.is_empty() {
        return Vec::new();
    }
    // No factory: a plugin's store is checked against the manifests alone, starting nothing.
    let builder = StoresBuilder::new(doc, None).with_manifests(manifests);
    unread_plugin_stores
        .iter()
        .flat_map(|selection| {
            let problems = builder
                .build(selection, &toml::Table::new())
                .err()
                .unwrap_or_default();
            problems.into_iter().map(move |problem| {
                format!(
                    "[stores.{kind}] {problem}; this run does not use [stores.{kind}], so it goes on, but agent-env config check and the runs that do use it (agent-env task run) fail on it",
                    kind = selection.kind
                )
            })
        })
        .collect()
}

/// The check a run makes before any step runs: the process's config, every store the run reads
/// built (`stores_read` names their sections, all of them for `None`; a plugin store is opened by
/// `plugins` when given, else checked against the installed `manifests`), every reference resolved.
pub fn preflight(
    doc: &ConfigDocument,
    plugins: Option<&dyn crate::stores::PluginStoreFactory>,
    manifests: &[agent_env_protocol::manifest::Manifest],
    stores_read: Option<&'static [&'static str]>,
) -> Result<(), PreflightError> {
    let builder = StoresBuilder::new(doc, plugins).with_manifests(manifests);
    let problems = check_for_run(doc, &builder, stores_read);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(PreflightError {
            place: doc.path_display(),
            problems,
        })
    }
}
