//! `agent-env store check KIND [--json] [--seed]`: runs the conformance kit of KIND against the store the
//! configuration selects (`AGENT_ENV_<KIND>_STORE`, else `[stores.<kind>]`, else the built-in local
//! store), built-in or plugin, and exits 1 when any case fails.
//!
//! The object kit writes under a fresh key prefix (`agent-env-kit/<hex>/`), the document kit into fresh
//! collections (`kit_<hex>__<case>`), the image kit into a fresh repository, so a check never clobbers
//! what a real, shared store holds. Stores have no delete for objects, so those writes stay behind,
//! but for the built-in local object store's, whose folder the check removes once the kit is done.
//! After the kit, notes say what the user should know of how it went: a plugin's document store that
//! cannot drop a collection had the kit's collections emptied one document at a time instead.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::cli::{Failure, Terminal};
use crate::config::configured_store::{configured_secrets, store_spec};
use crate::config::references::SecretLookup;
use crate::config::store_selection::{class_of, selection};
use crate::output::Output;
use crate::run::cancel::{watch_signals, Cancel, Signalled};
use crate::session::Session;
use crate::stores::from_spec::{classify, Target};
use crate::stores::kits::{self, KitReport};
use crate::stores::{
    build_store, AnyStore, LocalFilesystemObjectStore, PluginDocumentStore, PluginStoreFactory,
    StoreKind, StoreSpec,
};

/// What was checked, for the header and the JSON.
struct Checked {
    kind: StoreKind,
    impl_name: String,
    origin: String,
    namespace: String,
}

pub(super) fn check(
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
    let (plugins, package) = match classify(spec.kind, &spec.impl_name) {
        Ok(Target::Plugin { package, .. }) => (
            Some(session.plugin_store_opener()(doc, secrets.as_ref())?),
            Some(package),
        ),
        _ => (None, None),
    };
    let checked = checked_for(&spec, &selected.origin.location);
    let result = open_checked(&spec, plugins.as_deref())
        .and_then(|store| reachable(store, &shown_name(&spec)))
        .map(|store| run_check(&checked, &store, json_output, term));
    // A store that never opened had nothing written to it.
    if let Err(e) = result
        .as_ref()
        .map_or(Ok(()), |_| remove_kit_folder(&spec, &checked))
    {
        term.eprintln(&format!(
            "warning: can't remove the kit's folder '{}' from the object store: {e}; remove it by hand",
            checked.namespace
        ));
    }
    // A store that writes to stdout besides the protocol's messages passes its cases while a
    // partial line would stall its next answer: said, as `plugin list` says it.
    let noise = package.and_then(|p| session.plugin_pool().diagnosis(&p)?.noise());
    if let Some(warning) = noise {
        term.eprintln(&format!("warning: {warning}"));
    }
    // Dropping the factory drops its host, which stops the plugin.
    drop(plugins);
    result
}

/// Removes the folder the object kit wrote under from the built-in local object store, whose
/// layout agent-env owns: a check leaves nothing there. Any other store keeps it (the object store
/// API has no delete).
fn remove_kit_folder(spec: &StoreSpec, checked: &Checked) -> Result<(), String> {
    let local = spec.kind == StoreKind::Object
        && matches!(
            classify(spec.kind, spec.impl_name.trim()),
            Ok(Target::Builtin(_))
        )
        && class_of(spec.impl_name.trim()) != agent_env_store_s3::CLASS;
    if !local || checked.namespace.is_empty() {
        return Ok(());
    }
    let store = LocalFilesystemObjectStore::from_config(&spec.impl_name, &spec.config, &spec.env)
        .map_err(|e| e.to_string())?;
    store
        .remove_folder(&checked.namespace)
        .map_err(|e| e.to_string())
}

/// The store, once it answered that it can serve requests (a hosted one reaches its server): one that
/// cannot is one sentence, not a failure of every case.
fn reachable(store: CheckedStore, impl_name: &str) -> Result<CheckedStore, String> {
    match store.store.probe() {
        Ok(()) => Ok(store),
        Err(e) => Err(format!(
            "the store {impl_name} cannot serve requests, so no case was run: {e}"
        )),
    }
}

/// The store a check runs against and, when it is a plugin's document store, that store as such, which
/// can say afterwards how it removed the kit's collections.
struct CheckedStore {
    store: AnyStore,
    plugin_documents: Option<Arc<PluginDocumentStore>>,
}

/// Builds the store `spec` selects, as [`build_store`] does, keeping a plugin's document store as such.
fn open_checked(
    spec: &StoreSpec,
    plugins: Option<&dyn PluginStoreFactory>,
) -> Result<CheckedStore, String> {
    let plugin_class = match classify(spec.kind, spec.impl_name.trim()) {
        Ok(Target::Plugin { package, class }) => Some((package, class)),
        _ => None,
    };
    if let (StoreKind::Document, Some(factory), Some((package, class))) =
        (spec.kind, plugins, plugin_class)
    {
        let transport = factory
            .open(spec.kind, &package, &class, &spec.config)
            .map_err(|e| e.to_string())?;
        let documents = Arc::new(PluginDocumentStore::new(transport));
        return Ok(CheckedStore {
            store: AnyStore::Document(documents.clone()),
            plugin_documents: Some(documents),
        });
    }
    let store = build_store(spec, plugins).map_err(|e| e.to_string())?;
    Ok(CheckedStore {
        store,
        plugin_documents: None,
    })
}

/// What the user should know of how the kit went besides its cases, one sentence each.
fn notes(checked: &Checked, store: &CheckedStore) -> Vec<String> {
    let emptied = store
        .plugin_documents
        .as_ref()
        .is_some_and(|documents| documents.refused_drop_collection());
    if emptied {
        vec![emptied_one_by_one(&checked.namespace)]
    } else {
        Vec::new()
    }
}

/// The note for a plugin's document store that could not drop the collections of namespace `ns`.
fn emptied_one_by_one(ns: &str) -> String {
    format!(
        "the plugin's document store does not implement store.document.drop_collection, so the kit's \
         collections ('{ns}__<case>') were emptied one document at a time instead of dropped, and any \
         that the store keeps while empty are still there; the plugin can implement \
         store.document.drop_collection to have them dropped whole"
    )
}

/// The store as `config show` names it: a built-in one by its class alone (`LocalSecretStore`, however
/// the config spelled it, the original's module path included), a plugin's as written (`<package>:<Class>`).
fn shown_name(spec: &StoreSpec) -> String {
    let written = spec.impl_name.trim();
    match classify(spec.kind, written) {
        Ok(Target::Builtin(_)) => class_of(written).to_string(),
        _ => written.to_string(),
    }
}

fn checked_for(spec: &StoreSpec, origin: &str) -> Checked {
    Checked {
        kind: spec.kind,
        impl_name: shown_name(spec),
        origin: origin.to_string(),
        namespace: match spec.kind {
            StoreKind::Secret => String::new(),
            other => kits::unique_namespace(other),
        },
    }
}

fn run_check(checked: &Checked, opened: &CheckedStore, json_output: bool, term: &Terminal) -> i32 {
    let store = &opened.store;
    // A signal lets the case running end, removing what it made, and skips the rest: watched from
    // before the header, which says the check began.
    let cancel = Cancel::new();
    let watching = watch_signals(cancel.clone(), Some(on_check_signal));
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
    let stopped = || cancel.is_cancelled();
    let report = run_kit(store, &checked.namespace, &stopped);
    let warnings = store.take_warnings();
    // A script reading --json reads the store's warnings among the notes; a person, on stderr.
    if !json_output {
        for warning in &warnings {
            term.eprintln(&format!("warning: {warning}"));
        }
    }
    if let Err(e) = watching {
        term.eprintln(&format!("warning: can't watch for Ctrl-C: {e}"));
    }
    let mut notes = notes(checked, opened);
    if json_output {
        notes.extend(warnings);
    }
    if json_output {
        term.line(&render_json(checked, &report, &notes));
    } else {
        term.print(&report.render());
        for note in &notes {
            term.line(&format!("note: {note}"));
        }
    }
    match cancel.signal() {
        Some(signal) => 128 + signal,
        None if report.all_passed() => 0,
        None => 1,
    }
}

/// A signal during `store check`: the first lets the case running finish (it removes what it made),
/// the next stops at once.
fn on_check_signal(signalled: Signalled) {
    crate::cli::stopping::two_step(
        signalled,
        "Stopping once the case running has removed what it made",
        || "the case that was running may have left what it made in the store".to_string(),
    );
}

fn run_kit(store: &AnyStore, ns: &str, stopped: &dyn Fn() -> bool) -> KitReport {
    match store {
        AnyStore::Object(s) => kits::run_until(
            &kits::object::cases_for(s.supports_transfer_grants()),
            s.as_ref(),
            ns,
            stopped,
        ),
        AnyStore::Document(s) => kits::run_until(&kits::document::cases(), s.as_ref(), ns, stopped),
        AnyStore::Image(s) => kits::run_until(&kits::image::cases(), s.as_ref(), ns, stopped),
        AnyStore::Secret(s) => in_kit_order(
            kits::run_until(
                &kits::secret::cases_unless_unseeded(s.as_ref()),
                s.as_ref(),
                ns,
                stopped,
            ),
            &kits::secret::cases(),
        ),
    }
}

/// `report` with its cases in the order of `kit`'s, skipped or not: a store seeded or not lists the
/// secret kit's cases in one order.
fn in_kit_order<S: ?Sized>(mut report: KitReport, kit: &kits::Kit<S>) -> KitReport {
    let place = |name: &str| kit.cases.iter().position(|c| c.name == name);
    report.results.sort_by_key(|(name, _)| place(name));
    report
}

/// `--seed` given for a kit other than the secret one's: a usage error (exit 2), said before the
/// store is looked at.
pub(super) fn seed_misused(kind: StoreKind, seed: bool) -> Option<Failure> {
    (seed && kind != StoreKind::Secret).then(|| {
        Failure::new("--seed is for the secret kit only (store check secret --seed)").with_code(2)
    })
}

/// `--seed`: the fixture joins the built-in secret store's `values` (its own values win). Another
/// secret store, named by its class as `config show` names it, is seeded by whoever runs it.
fn seed_fixture(spec: &mut StoreSpec) -> Result<(), String> {
    let builtin = matches!(classify(spec.kind, &spec.impl_name), Ok(Target::Builtin(_)));
    if !builtin {
        return Err(format!(
            "--seed works only for the secret kit with the built-in LocalSecretStore; the secret store is {}: \
             store conformance_present=value-1 and conformance_present_empty='' in it yourself",
            class_of(spec.impl_name.trim())
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

fn render_json(checked: &Checked, report: &KitReport, notes: &[String]) -> String {
    let mut out = json!({
        "format_version": 1,
        "kind": checked.kind.as_str(),
        "impl": checked.impl_name,
        "from": checked.origin,
        "namespace": checked.namespace,
        "notes": notes,
    });
    if let (Value::Object(map), Value::Object(kit)) = (&mut out, report.to_json()) {
        map.extend(kit);
    }
    serde_json::to_string_pretty(&out).unwrap_or_else(|_| out.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_for_emptied_collections_names_them_and_the_method_to_implement() {
        let note = emptied_one_by_one("kit_0a1b2c");
        assert!(note.contains("('kit_0a1b2c__<case>')"), "{note}");
        assert!(note.contains("emptied one document at a time"), "{note}");
        assert!(
            note.ends_with("implement store.document.drop_collection to have them dropped whole"),
            "{note}"
        );
    }
}
