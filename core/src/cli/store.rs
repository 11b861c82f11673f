//! `agent-env store check KIND [--json] [--seed]`: runs the conformance kit of KIND against the store the
//! configuration selects (`AGENT_ENV_<KIND>_STORE`, else `[stores.<kind>]`, else the built-in local
//! store), built-in or plugin, and exits 1 when any case fails.
//!
//! The object kit writes under a fresh key prefix (`agent-env-kit/<hex>/`), the document kit into fresh
//! collections (`kit_<hex>__<case>`), the image kit into a fresh repository, so a check never clobbers
//! what a real, shared store holds. (Stores have no delete for objects, so those writes stay behind.)
//! After the kit, notes say what the user should know of how it went: a plugin's document store that
//! cannot drop a collection had the kit's collections emptied one document at a time instead.
//!
//! `agent-env store get URL [-o FILE|-]` writes one object to a file or to stdout, streamed through a
//! temporary file (under `TMPDIR`) whatever its size, binary bytes refused only on a terminal, where
//! text has its control and invisible characters shown as escapes.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_env_host::{HostServices, NoServices, RpcError};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{json, Value};

use crate::cli::style::Stream;
use crate::cli::{Exit, Failure, Terminal};
use crate::config::configured_store::{configured_secrets, store_spec};
use crate::config::references::SecretLookup;
use crate::config::store_selection::selection;
use crate::output::Output;
use crate::run::cancel::{watch_signals, Cancel, Signalled};
use crate::session::Session;
use crate::stores::from_spec::{classify, Target};
use crate::stores::kits::{self, KitReport};
use crate::stores::{
    build_store, AnyStore, ObjectStore, PluginDocumentStore, PluginStoreFactory, StoreError,
    StoreKind, StoreSpec,
};

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
    /// or from the local object store when the URL is one of the local store's.
    Get {
        /// The object's URL, such as s3://bucket/key or file:///….
        url: String,
        /// Write the bytes to this file instead of printing them ('-' is stdout, as they are). Without
        /// it a binary object is refused when stdout is a terminal, and text is shown with its control
        /// and invisible characters (bidi controls, zero-width spaces) escaped; a pipe gets the bytes
        /// as they are.
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

/// Runs `store check` or `store get`. With `-v`, what plugin stores write to stderr is shown, a line
/// at a time, as `[<package>] <line>` (as a run shows its plugins' lines; `cli::dispatch` listens).
pub fn run(args: StoreArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    match args.command {
        StoreCommand::Check { kind, json, seed } => {
            check(kind.into(), json, seed, verbose, session, term).map_err(Failure::new)
        }
        StoreCommand::Get { url, output } => get(&url, output.as_deref(), session),
    }
}

/// Shows each stderr line of a plugin store on agent-env's stderr (secrets masked, control characters
/// escaped), as `[<package>] <line>`: what `-v` does with them outside a run.
pub struct PrintStoreStderr {
    term: Terminal,
}

impl PrintStoreStderr {
    /// A printer in `term`'s style.
    pub fn new(term: &Terminal) -> PrintStoreStderr {
        PrintStoreStderr {
            term: Terminal::with_style(term.style()),
        }
    }
}

impl HostServices for PrintStoreStderr {
    fn handle(&self, package: &str, method: &str, params: Value) -> Result<Value, RpcError> {
        NoServices.handle(package, method, params)
    }

    fn stderr_line(&self, package: &str, line: &str) {
        let text = format!("[{package}] {line}");
        self.term
            .eprintln(&self.term.style().dim(Stream::Stderr, &text));
    }
}

/// `store get URL`: the configured object store when it owns the URL, else the local one. The object
/// goes to the file `--output` names, or to stdout (also for `-o -`).
fn get(url: &str, output: Option<&Path>, session: &Session) -> Exit {
    let store = store_owning(url, session)?;
    match output {
        Some(path) if path != Path::new("-") => {
            store
                .download_to_file(url, path)
                .map_err(|e| Failure::new(e.to_string()))?;
            Ok(0)
        }
        Some(_) => print_object(store.as_ref(), url, Shown::AsTheyAre),
        None => print_object(store.as_ref(), url, Shown::ForTheTerminal),
    }
}

/// The object store `url` is one of: the configured one, else the local one.
fn store_owning(url: &str, session: &Session) -> Result<Arc<dyn ObjectStore>, Failure> {
    let configured = session
        .stores()
        .object()
        .map_err(|e| Failure::new(format!("the configured object store can't be used: {e}")))?;
    if let Ok(true) = configured.owns(url) {
        return Ok(configured);
    }
    let local = crate::run::local_stores::open(&session.paths().state_root()).objects;
    if local.owns(url).unwrap_or(false) {
        return Ok(local);
    }
    Err(Failure::new(format!(
        "'{url}' is not a URL of the configured object store or of the local one"
    )))
}

/// How `store get` writes an object to stdout.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// Its bytes, whatever stdout is (`-o -`).
    AsTheyAre,
    /// Its bytes to a pipe or file; to a terminal, text with its control characters escaped, and
    /// binary bytes refused.
    ForTheTerminal,
}

/// Writes the object to stdout, whatever its size: the store downloads it to a private temporary file
/// (a plugin's store writes the file itself; nothing crosses the pipe but its path), which is copied
/// out a piece at a time. Bytes that are not text are refused only when stdout is a terminal, which
/// they would garble; a pipe or a file gets them as they are.
fn print_object(store: &dyn ObjectStore, url: &str, shown: Shown) -> Exit {
    let temp = std::env::temp_dir();
    let scratch = Scratch::new_in(&temp).map_err(|e| scratch_failure(url, &temp, &e))?;
    let file = scratch.path.join("object");
    download(store, url, &file).map_err(|e| download_failure(url, &temp, &e))?;
    let stdout = std::io::stdout();
    if shown == Shown::AsTheyAre || !stdout.is_terminal() {
        return copy_to(&file, &mut stdout.lock(), url);
    }
    let is_text = match text_pieces(&file, |_| Ok(())) {
        Ok(is_text) => is_text,
        Err(e) => return e.exit(&file, url),
    };
    if !is_text {
        return Err(Failure::new(format!(
            "{url} holds binary bytes, which a terminal cannot show; write them to a file with --output FILE, or pipe them to a program"
        )));
    }
    // Text from a shared store reaches the terminal with its control characters shown as escapes
    // (one could retitle the window or clear the screen), and its invisible ones too (a bidi control
    // could show other text than the object holds), a piece at a time; a pipe or a file gets the
    // bytes as they are.
    let mut out = stdout.lock();
    let mut at_start = true;
    let shown = text_pieces(&file, |piece| {
        let written = out.write_all(escaped_piece(piece, at_start).as_bytes());
        at_start &= piece.is_empty();
        written
    })
    .and_then(|_| out.flush().map_err(PieceError::Write));
    match shown {
        Err(e) => e.exit(&file, url),
        Ok(()) => Ok(0),
    }
}

/// A piece of the object's text as a terminal gets it: [`crate::printable::plain`], a byte order mark
/// kept only at the object's start.
fn escaped_piece(piece: &str, at_start: bool) -> std::borrow::Cow<'_, str> {
    if at_start {
        crate::printable::plain(piece)
    } else {
        crate::printable::plain_continued(piece)
    }
}

/// `store.download_to_file(url, file)`; a store that does not implement it has the object read whole.
fn download(store: &dyn ObjectStore, url: &str, file: &Path) -> Result<(), StoreError> {
    match store.download_to_file(url, file) {
        Err(StoreError::NotSupported(_)) => {
            let bytes = store.get(url)?;
            std::fs::write(file, bytes)
                .map_err(|e| StoreError::io(format_args!("cannot write {}", file.display()), &e))
        }
        other => other,
    }
}

/// Whether an I/O error of `kind` says the disk, or the user's quota on it, is full.
fn out_of_room(kind: std::io::ErrorKind) -> bool {
    matches!(
        kind,
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}

/// The temporary folder `temp` could not hold the scratch folder `store get` fetches `url` into.
fn scratch_failure(url: &str, temp: &Path, e: &std::io::Error) -> Failure {
    if out_of_room(e.kind()) {
        return no_room(url, temp, e);
    }
    Failure::new(format!(
        "cannot fetch {url} to print it: the temporary folder {} cannot be written ({e}); set TMPDIR to \
         a folder you can write that has room for the object, or write the object to a file with \
         --output FILE",
        temp.display()
    ))
}

/// The download of `url` into the temporary folder `temp` failed: for want of room, said so with what
/// to do; else the store's own words.
fn download_failure(url: &str, temp: &Path, e: &StoreError) -> Failure {
    match e.io_kind() {
        Some(kind) if out_of_room(kind) => no_room(url, temp, e),
        _ => Failure::new(e.to_string()),
    }
}

/// The temporary folder `temp` has no room for `url`.
fn no_room(url: &str, temp: &Path, e: &dyn std::fmt::Display) -> Failure {
    Failure::new(format!(
        "cannot fetch {url} to print it: the temporary folder {} is full ({e}); free space there, set \
         TMPDIR to a folder with room for the object, or write the object to a file with --output FILE",
        temp.display()
    ))
}

fn reading(file: &Path, e: &std::io::Error) -> Failure {
    Failure::new(format!(
        "cannot read the downloaded object {}: {e}",
        file.display()
    ))
}

/// How much of the object is read at a time.
const CHUNK: usize = 64 * 1024;

/// What stopped [`text_pieces`]: reading the file, or what was done with a piece.
enum PieceError {
    Read(std::io::Error),
    Write(std::io::Error),
}

impl PieceError {
    /// How the command ends: a reader of stdout that went away is no failure, as [`written`] says.
    fn exit(self, file: &Path, url: &str) -> Exit {
        match self {
            PieceError::Read(e) => Err(reading(file, &e)),
            PieceError::Write(e) => written(Err(e), url),
        }
    }
}

/// Hands `file` to `on_piece` as text, a piece at a time; `Ok(false)` at the first bytes that are not
/// UTF-8 (what came before them was handed over).
fn text_pieces(
    file: &Path,
    mut on_piece: impl FnMut(&str) -> std::io::Result<()>,
) -> Result<bool, PieceError> {
    let mut reader = std::fs::File::open(file).map_err(PieceError::Read)?;
    // A character cut at a piece's end (at most 3 of its bytes) is carried to the next piece.
    let mut buf = vec![0u8; CHUNK + 3];
    let mut carried = 0;
    loop {
        let n = reader
            .read(&mut buf[carried..carried + CHUNK])
            .map_err(PieceError::Read)?;
        if n == 0 {
            return Ok(carried == 0);
        }
        let filled = carried + n;
        let (valid, is_text) = match std::str::from_utf8(&buf[..filled]) {
            Ok(_) => (filled, true),
            Err(e) => (e.valid_up_to(), e.error_len().is_none()),
        };
        // Checked just above: the first `valid` bytes are UTF-8.
        let piece = std::str::from_utf8(&buf[..valid]).unwrap_or_default();
        on_piece(piece).map_err(PieceError::Write)?;
        if !is_text {
            return Ok(false);
        }
        buf.copy_within(valid..filled, 0);
        carried = filled - valid;
    }
}

/// Copies `file` to `out`. A reader that went away (`| head`) is no failure: it chose to stop.
fn copy_to(file: &Path, out: &mut impl Write, url: &str) -> Exit {
    let mut reader = std::fs::File::open(file).map_err(|e| reading(file, &e))?;
    written(
        std::io::copy(&mut reader, out).and_then(|_| out.flush()),
        url,
    )
}

/// What a write of the object to stdout came to: a reader that went away is not a failure.
fn written(result: std::io::Result<()>, url: &str) -> Exit {
    match result {
        Ok(()) => Ok(0),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(Failure::new(format!(
            "could not write {url} to stdout: {e}; what was written is incomplete"
        ))),
    }
}

/// A folder only this user can read, removed with what it holds when dropped.
struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// A new folder in `temp`.
    fn new_in(temp: &Path) -> std::io::Result<Scratch> {
        use std::os::unix::fs::DirBuilderExt;
        let mut random = [0u8; 8];
        getrandom::getrandom(&mut random).map_err(|e| std::io::Error::other(e.to_string()))?;
        let path = temp.join(format!("agent-env-get-{}", hex::encode(random)));
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        // A signal ends the command before any drop (`store get … | less`, then Ctrl-C): the copy
        // of the object goes first.
        if SCRATCH.set(path.clone()).is_ok() {
            watch_signals(Cancel::new(), Some(on_get_signal))?;
        }
        Ok(Scratch { path })
    }
}

/// The folder `store get` copies the object into, for its signal handler.
static SCRATCH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// A signal during `store get`: the copy is removed and the command ends as the signal says.
fn on_get_signal(signalled: Signalled) {
    let (Signalled::First(signal) | Signalled::Again(signal)) = signalled;
    if let Some(path) = SCRATCH.get() {
        // Again if the download made it anew meanwhile.
        for _ in 0..3 {
            if std::fs::remove_dir_all(path).is_err() && !path.exists() {
                break;
            }
        }
    }
    std::process::exit(128 + signal);
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
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
    let (plugins, package) = match classify(spec.kind, &spec.impl_name) {
        Ok(Target::Plugin { package, .. }) => (
            Some(session.plugin_store_opener()(doc, secrets.as_ref())?),
            Some(package),
        ),
        _ => (None, None),
    };
    let result = open_checked(&spec, plugins.as_deref())
        .and_then(|store| reachable(store, &spec.impl_name))
        .map(|store| {
            run_check(
                &checked_for(&spec, &selected.origin.location),
                &store,
                json_output,
                term,
            )
        });
    // A store that writes to stdout besides the protocol's messages passes its cases while a
    // partial line would stall its next answer: said, as `plugin list` says it.
    let noise = package.and_then(|p| session.plugin_pool().ok()?.diagnosis(&p)?.noise());
    if let Some(warning) = noise {
        term.eprintln(&format!("warning: {warning}"));
    }
    // Dropping the factory drops its host, which stops the plugin.
    drop(plugins);
    result
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
    super::stopping::two_step(
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
        AnyStore::Secret(s) => kits::run_until(&kits::secret::cases(), s.as_ref(), ns, stopped),
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

    const URL: &str = "s3://bucket/big.txt";

    fn temp() -> PathBuf {
        PathBuf::from("/var/tmp/scratch")
    }

    #[test]
    fn a_full_temporary_folder_is_named_with_what_to_do() {
        let full = "cannot fetch s3://bucket/big.txt to print it: the temporary folder /var/tmp/scratch \
                    is full (No space left on device (os error 28)); free space there, set TMPDIR to a \
                    folder with room for the object, or write the object to a file with --output FILE";
        let no_space = StoreError::Io {
            message: "No space left on device (os error 28)".into(),
            raw_os_error: Some(libc::ENOSPC),
        };
        assert_eq!(download_failure(URL, &temp(), &no_space).to_string(), full);
        let making = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert_eq!(scratch_failure(URL, &temp(), &making).to_string(), full);
        let quota = StoreError::io("writing", &std::io::Error::from_raw_os_error(libc::EDQUOT));
        let said = download_failure(URL, &temp(), &quota).to_string();
        assert!(
            said.contains("/var/tmp/scratch is full (writing: "),
            "{said}"
        );
    }

    #[test]
    fn a_temporary_folder_that_cannot_be_written_is_named_with_what_to_do() {
        let missing = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(
            scratch_failure(URL, &temp(), &missing).to_string(),
            "cannot fetch s3://bucket/big.txt to print it: the temporary folder /var/tmp/scratch cannot \
             be written (No such file or directory (os error 2)); set TMPDIR to a folder you can write \
             that has room for the object, or write the object to a file with --output FILE"
        );
    }

    #[test]
    fn another_download_failure_is_the_stores_own() {
        let failures = [
            StoreError::object_not_found(URL),
            StoreError::io("reading", &std::io::Error::from_raw_os_error(libc::EIO)),
            StoreError::Io {
                message: "the plugin's disk is gone".into(),
                raw_os_error: None,
            },
        ];
        for e in failures {
            assert_eq!(
                download_failure(URL, &temp(), &e).to_string(),
                e.to_string()
            );
        }
    }

    #[test]
    fn a_byte_order_mark_is_kept_only_at_the_start_of_the_object() {
        assert_eq!(escaped_piece("\u{feff}a\u{202e}", true), "\u{feff}a\\u202e");
        assert_eq!(escaped_piece("\u{feff}a", false), "\\ufeffa");
    }

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
