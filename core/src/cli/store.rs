//! `agent-env store check KIND [--json] [--seed]`: runs the conformance kit of KIND against the store the
//! configuration selects (`AGENT_ENV_<KIND>_STORE`, else `[stores.<kind>]`, else the built-in local
//! store), built-in or plugin, and exits 1 when any case fails.
//!
//! The object kit writes under a fresh key prefix (`agent-env-kit/<hex>/`), the document kit into fresh
//! collections (`kit_<hex>__<case>`), the image kit into a fresh repository, so a check never clobbers
//! what a real, shared store holds. (Stores have no delete for objects, so those writes stay behind.)

use clap::{Args, Subcommand, ValueEnum};
use serde_json::{json, Value};

use crate::cli::{Exit, Failure, Terminal};
use crate::config::configured_store::{configured_secrets, store_spec};
use crate::config::references::SecretLookup;
use crate::config::store_selection::selection;
use crate::output::Output;
use crate::session::Session;
use crate::stores::from_spec::{classify, Target};
use crate::stores::kits::{self, KitReport};
use crate::stores::{build_store, AnyStore, StoreKind, StoreSpec};

#[derive(Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub command: StoreCommand,
}

#[derive(Subcommand)]
pub enum StoreCommand {
    /// Run a store kind's conformance kit against the configured store; exit 1 if any case fails.
    Check {
        /// The store kind to check.
        kind: KindArg,
        /// Print JSON instead of one line per case.
        #[arg(long)]
        json: bool,
        /// Secret kit only: add the kit's fixture to the built-in LocalSecretStore's values first.
        #[arg(long)]
        seed: bool,
    },
    /// Read one object by its URL (as a task instance records it) from the configured object store,
    /// or from the local one for a URL of its.
    Get {
        /// The object's URL, such as s3://bucket/key or file:///….
        url: String,
        /// Write the bytes to this file instead of printing them (needed for binary objects).
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<std::path::PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum KindArg {
    Object,
    Document,
    Image,
    Secret,
}

impl From<KindArg> for StoreKind {
    fn from(kind: KindArg) -> StoreKind {
        match kind {
            KindArg::Object => StoreKind::Object,
            KindArg::Document => StoreKind::Document,
            KindArg::Image => StoreKind::Image,
            KindArg::Secret => StoreKind::Secret,
        }
    }
}

/// Runs `store check`.
pub fn run(args: StoreArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    match args.command {
        StoreCommand::Check { kind, json, seed } => {
            check(kind.into(), json, seed, verbose, session, term).map_err(Failure::new)
        }
        StoreCommand::Get { url, output } => get(&url, output.as_deref(), session, term),
    }
}

/// `store get URL`: the configured object store when it owns the URL, else the local one.
fn get(url: &str, output: Option<&std::path::Path>, session: &Session, term: &Terminal) -> Exit {
    let configured = session
        .stores()
        .object()
        .map_err(|e| Failure::new(format!("the configured object store can't be used: {e}")))?;
    let local = crate::run::local_stores::open(&session.paths().state_root()).objects;
    let store = match configured.owns(url) {
        Ok(true) => configured,
        _ if local.owns(url).unwrap_or(false) => local,
        _ => {
            return Err(Failure::new(format!(
                "'{url}' is not a URL of the configured object store or of the local one"
            )))
        }
    };
    if let Some(path) = output {
        store
            .download_to_file(url, path)
            .map_err(|e| Failure::new(e.to_string()))?;
        return Ok(0);
    }
    let bytes = store.get(url).map_err(|e| Failure::new(e.to_string()))?;
    match String::from_utf8(bytes) {
        Ok(text) => {
            term.print_verbatim(&text);
            Ok(0)
        }
        Err(_) => Err(Failure::new(format!(
            "{url} holds binary bytes; write them to a file with --output FILE"
        ))
        .with_code(2)),
    }
}

/// What was checked, for the header and the JSON.
struct Checked {
    kind: StoreKind,
    impl_name: String,
    origin: String,
    namespace: String,
}

fn check(
    kind: StoreKind,
    json_output: bool,
    seed: bool,
    verbose: bool,
    session: &Session,
    term: &Terminal,
) -> Result<i32, String> {
    let doc = session.config();
    let selected = selection(doc, kind.as_str()).map_err(|e| e.to_string())?;
    // -v: the store's config as written (secrets masked), on stderr so that --json stays one document.
    if verbose {
        let config = crate::config::mask::mask_store_config(kind.as_str(), &selected.config);
        let pairs: Vec<String> = config.iter().map(|(k, v)| format!("{k}={v}")).collect();
        term.eprintln(&format!(
            "{} store config: {}",
            kind,
            if pairs.is_empty() {
                "(none)".to_string()
            } else {
                pairs.join("  ")
            }
        ));
    }
    let secrets = if kind == StoreKind::Secret {
        None
    } else {
        configured_secrets(doc, None).ok()
    };
    let mut spec = store_spec(
        &selected,
        &doc.env,
        secrets.as_ref().map(|s| s as &dyn SecretLookup),
    )
    .map_err(|e| e.to_string())?;
    if seed {
        seed_fixture(&mut spec)?;
    }
    // The store's own calls back to the host are not served (a store check needs none).
    let plugins = match classify(spec.kind, &spec.impl_name) {
        Ok(Target::Plugin { .. }) => Some(session.plugin_store_opener()(doc, secrets.as_ref())?),
        _ => None,
    };
    let result = build_store(&spec, plugins.as_deref())
        .map_err(|e| e.to_string())
        .map(|store| {
            run_check(
                &checked_for(&spec, &selected.origin.location),
                &store,
                json_output,
                term,
            )
        });
    // Dropping the factory drops its host, which stops the plugin.
    drop(plugins);
    result
}

fn checked_for(spec: &StoreSpec, origin: &str) -> Checked {
    Checked {
        kind: spec.kind,
        impl_name: spec.impl_name.clone(),
        origin: origin.to_string(),
        namespace: match spec.kind {
            StoreKind::Secret => String::new(),
            other => kits::unique_namespace(other),
        },
    }
}

fn run_check(checked: &Checked, store: &AnyStore, json_output: bool, term: &Terminal) -> i32 {
    if !json_output {
        term.line(&format!(
            "Checking the {} store {} (from {}){}",
            checked.kind,
            checked.impl_name,
            checked.origin,
            if checked.namespace.is_empty() {
                String::new()
            } else {
                format!(", writing under '{}'", checked.namespace)
            }
        ));
    }
    let report = run_kit(store, &checked.namespace);
    for warning in store.take_warnings() {
        term.eprintln(&format!("warning: {warning}"));
    }
    if json_output {
        term.line(&render_json(checked, &report));
    } else {
        term.print(&report.render());
    }
    if report.all_passed() {
        0
    } else {
        1
    }
}

fn run_kit(store: &AnyStore, ns: &str) -> KitReport {
    match store {
        AnyStore::Object(s) => kits::run(
            &kits::object::cases_for(s.supports_transfer_grants()),
            s.as_ref(),
            ns,
        ),
        AnyStore::Document(s) => kits::run(&kits::document::cases(), s.as_ref(), ns),
        AnyStore::Image(s) => kits::run(&kits::image::cases(), s.as_ref(), ns),
        AnyStore::Secret(s) => kits::run(&kits::secret::cases(), s.as_ref(), ns),
    }
}

/// `--seed`: the fixture joins the built-in secret store's `values` (its own values win).
fn seed_fixture(spec: &mut StoreSpec) -> Result<(), String> {
    let builtin = matches!(classify(spec.kind, &spec.impl_name), Ok(Target::Builtin(_)));
    if spec.kind != StoreKind::Secret || !builtin {
        return Err(format!(
            "--seed works only for the secret kit with the built-in LocalSecretStore; the {} store is '{}': \
             store conformance_present=value-1 and conformance_present_empty='' in it yourself",
            spec.kind, spec.impl_name
        ));
    }
    let values = spec
        .config
        .entry("values")
        .or_insert_with(|| Value::Object(Default::default()));
    let Value::Object(values) = values else {
        return Err("[stores.secret] config.values must be a table to seed it".to_string());
    };
    for (name, value) in kits::secret::FIXTURE {
        values
            .entry(name.to_string())
            .or_insert_with(|| Value::from(value));
    }
    Ok(())
}

fn render_json(checked: &Checked, report: &KitReport) -> String {
    let mut out = json!({
        "format_version": 1,
        "kind": checked.kind.as_str(),
        "impl": checked.impl_name,
        "from": checked.origin,
        "namespace": checked.namespace,
    });
    if let (Value::Object(map), Value::Object(kit)) = (&mut out, report.to_json()) {
        map.extend(kit);
    }
    serde_json::to_string_pretty(&out).unwrap_or_else(|_| out.to_string())
}
