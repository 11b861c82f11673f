//! The bundle parser: reads a bundle's tree (its kind directories and their entries, as
//! `docs/protocol.md` lists them under Bundles) into a [`Bundle`]. Every problem is collected, then all
//! are reported together, sorted.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use unicode_normalization::UnicodeNormalization;

use super::error::BundleError;
use super::ids::{self, DERIVED_SEPARATOR};
use super::model::{Artifact, BuildEntry, Bundle, Eval, Task};
use super::natural_order::{natural_cmp, sort_naturally};
use super::tree::{is_ignored_name, Entry, Tree};

/// The kind directories, in the order messages list them.
pub const KIND_DIRS: [&str; 6] = ["envs", "agents", "artifacts", "skills", "tasks", "evals"];

/// The kind folder a folder named `name` likely means (`task` for `tasks`, `Evals`, `artifcats`):
/// one of [`KIND_DIRS`] that differs from it only in case, or is close to it, but not itself.
fn near_kind_dir(name: &str) -> Option<&'static str> {
    if KIND_DIRS.contains(&name) {
        return None;
    }
    let lower = name.to_lowercase();
    if let Some(kind) = KIND_DIRS.iter().find(|k| **k == lower) {
        return Some(kind);
    }
    crate::similar::best_match(&lower, KIND_DIRS, 0.75)
}

/// Why an entry inside one of the [`KIND_DIRS`] was not read (what that folder holds instead); `None`
/// for an entry outside them (a bundle may carry other files).
pub fn why_ignored(rel: &str) -> Option<&'static str> {
    let (kind, _) = rel.split_once('/')?;
    Some(match kind {
        "tasks" => "a task is a .json file",
        "evals" => "an eval is a .toml file",
        "artifacts" | "skills" => "each entry of it is a folder",
        "envs" => "each env is a folder holding env.toml",
        "agents" => "each agent is a folder holding agent.toml",
        _ => return None,
    })
}

/// Why the kind folder `kind` can't be listed, and what to do: a folder this user may not read or
/// enter is said so, with the permission it lacks (the system's words alone say neither).
fn unlistable_folder(kind: &str, error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::PermissionDenied => format!(
            "can't be read: this user may not list the folder ({error}); let it read and enter {kind}/ (chmod a+rx {kind}, as the folder's owner)"
        ),
        _ => format!("can't be read: {error}"),
    }
}

/// Reads a bundle from `tree`; `display_root` prefixes every problem, `id_root` roots every id.
pub fn parse_tree(
    tree: Tree<'_>,
    display_root: &str,
    id_root: &str,
) -> Result<Bundle, BundleError> {
    let mut p = Parser {
        tree,
        root: display_root.to_string(),
        id_root: id_root.to_string(),
        problems: Vec::new(),
        task_files: Default::default(),
        task_files_with_problems: Default::default(),
        bundle: Bundle {
            display_root: display_root.to_string(),
            id_root: id_root.to_string(),
            description: None,
            artifacts: Vec::new(),
            tasks: Vec::new(),
            evals: Vec::new(),
            builds: Vec::new(),
            aliases: BTreeMap::new(),
            ignored: Vec::new(),
            unread: Vec::new(),
            artifacts_unlisted: false,
        },
    };
    p.parse_root();
    if p.problems.is_empty() {
        Ok(p.bundle)
    } else {
        // The tasks whose files had no problem, for the run to plan: their problems (a step type
        // nothing runs) are said with these, not once these are fixed.
        let mut partly = p.bundle;
        partly
            .tasks
            .retain(|t| !p.task_files_with_problems.contains(&t.path));
        Err(BundleError::of_parse(p.problems, partly))
    }
}

struct Parser<'a> {
    tree: Tree<'a>,
    root: String,
    id_root: String,
    problems: Vec<String>,
    bundle: Bundle,
    /// The name of every task file, those that did not parse included: what an eval may name.
    task_files: std::collections::BTreeSet<String>,
    /// The paths of the task files that had a problem (left out of what a failed parse hands on).
    task_files_with_problems: std::collections::BTreeSet<String>,
}

/// What some editors write at the start of a UTF-8 file.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The key two names collide under: case-folded, compatibility-normalized.
fn collision_key(name: &str) -> String {
    name.nfkc().flat_map(char::to_lowercase).collect()
}

fn nfc(name: &str) -> String {
    name.nfc().collect()
}

impl Parser<'_> {
    fn problem(&mut self, rel: &str, message: impl Into<String>) {
        let message = message.into();
        if rel.is_empty() {
            self.problems.push(format!("{}: {message}", self.root));
        } else {
            self.problems
                .push(format!("{}/{rel}: {message}", self.root));
        }
    }

    fn entity_id(&self, name: &str) -> String {
        format!("{}/{}", self.id_root, nfc(name))
    }

    fn parse_root(&mut self) {
        let entries = match self.tree.list("") {
            Ok(e) => e,
            Err(e) => {
                self.problem("", format!("can't be read: {e}"));
                return;
            }
        };
        if !entries
            .iter()
            .any(|e| e.is_dir && KIND_DIRS.contains(&e.name.as_str()))
        {
            let near: Vec<&str> = entries
                .iter()
                .filter_map(|e| {
                    KIND_DIRS
                        .iter()
                        .find(|k| **k != e.name && k.eq_ignore_ascii_case(&e.name))
                        .copied()
                })
                .collect();
            if near.is_empty() {
                // Folders named near a kind (task/, Artifact/, evls/) say which they would be.
                let meant: Vec<String> = entries
                    .iter()
                    .filter(|e| e.is_dir)
                    .filter_map(|e| Some(format!("{}/ for {}/", near_kind_dir(&e.name)?, e.name)))
                    .collect();
                let meant = match meant.is_empty() {
                    true => String::new(),
                    false => format!("; did you mean {}?", meant.join(", ")),
                };
                self.problem(
                    "",
                    format!("not a bundle: it has none of envs/, agents/, artifacts/, skills/, tasks/, evals/{meant}"),
                );
            }
        } else {
            // Beside the kind folders, one named near a kind is not read: said, as a file of a
            // kind folder that is not of its kind is.
            for entry in entries
                .iter()
                .filter(|e| e.is_dir && !is_ignored_name(&e.name))
            {
                // One that differs only in case is a problem of its own (rename it).
                let kind =
                    near_kind_dir(&entry.name).filter(|k| !k.eq_ignore_ascii_case(&entry.name));
                if let Some(kind) = kind {
                    self.bundle.unread.push(format!(
                        "{}/ is not read: a bundle's folders are envs/, agents/, artifacts/, skills/, tasks/, evals/; did you mean {kind}/?",
                        entry.name
                    ));
                }
            }
        }
        for entry in &entries {
            let name = entry.name.as_str();
            if is_ignored_name(name) {
                continue;
            }
            match (name, entry.is_dir) {
                ("bundle.toml", _) => self.problem(
                    name,
                    "reserved: a bundle takes its name from the folder and its description from README.md",
                ),
                ("README.md", false) => self.read_readme(),
                ("aliases.toml", false) => self.read_aliases(),
                (kind, true) if KIND_DIRS.contains(&kind) => {}
                (kind, false) if KIND_DIRS.contains(&kind) => {
                    self.problem(kind, format!("must be a folder, {kind}/"))
                }
                _ => {
                    if let Some(k) = KIND_DIRS
                        .iter()
                        .chain(["README.md", "aliases.toml", "bundle.toml"].iter())
                        .find(|k| k.eq_ignore_ascii_case(name))
                    {
                        self.problem(name, format!("rename to {k}; names are case-sensitive"));
                    } else {
                        self.bundle.ignored.push(name.to_string());
                    }
                }
            }
        }
        let has = |k: &str| entries.iter().any(|e| e.is_dir && e.name == k);
        if has("artifacts") {
            self.read_artifact_folders("artifacts");
        }
        if has("skills") {
            self.read_artifact_folders("skills");
        }
        if has("tasks") {
            self.read_tasks();
        }
        // After the tasks: each eval's task names are checked as the eval is read.
        if has("evals") {
            self.read_evals();
        }
        for kind in ["envs", "agents"] {
            if has(kind) {
                self.read_builds(kind);
            }
        }
        self.check_shared_names();
        self.check_duplicate_ids();
        sort_naturally(&mut self.problems);
    }

    /// The entries of the folder `kind` that aren't ignored names, each with its path in the bundle; a
    /// folder that can't be read is a problem and has none. A name that can't be read (not UTF-8) is
    /// a problem of its own, and the folder's other entries are read all the same: an artifact a task
    /// loads is not said to be missing because a folder beside it has such a name.
    fn entries_of(&mut self, kind: &str) -> Vec<(Entry, String)> {
        match self.tree.listing(kind) {
            Ok(listing) => {
                for why in listing.refused {
                    self.problem(kind, why);
                }
                listing.entries
            }
            Err(e) => {
                self.problem(kind, unlistable_folder(kind, &e));
                if kind == "artifacts" || kind == "skills" {
                    self.bundle.artifacts_unlisted = true;
                }
                Vec::new()
            }
        }
        .into_iter()
        .filter(|e| !is_ignored_name(&e.name))
        .map(|e| {
            let rel = format!("{kind}/{}", e.name);
            (e, rel)
        })
        .collect()
    }

    /// As [`Self::entries_of`], in the natural order of their names (`task2` before `task10`): the
    /// order tasks and evals are planned, run and listed in.
    fn entries_in_natural_order(&mut self, kind: &str) -> Vec<(Entry, String)> {
        let mut entries = self.entries_of(kind);
        entries.sort_by(|(a, _), (b, _)| natural_cmp(&a.name, &b.name));
        entries
    }

    fn read_readme(&mut self) {
        match self.tree.read("README.md") {
            Ok(bytes) => {
                self.bundle.description = first_text_line(&String::from_utf8_lossy(&bytes));
            }
            Err(e) => self.problem("README.md", format!("can't be read: {e}")),
        }
    }

    fn read_aliases(&mut self) {
        let text = match self.tree.read("aliases.toml") {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => return self.problem("aliases.toml", format!("can't be read: {e}")),
        };
        let table: toml::Table = match text.parse() {
            Ok(t) => t,
            Err(e) => {
                return self.problem(
                    "aliases.toml",
                    format!(
                        "isn't valid TOML: {}",
                        crate::toml_errors::describe(&e, &text)
                    ),
                )
            }
        };
        for (section, value) in table {
            if section != "agents" && section != "envs" {
                self.problem(
                    "aliases.toml",
                    format!("unknown table [{section}]; it takes [agents] and [envs]"),
                );
                continue;
            }
            let Some(map) = value.as_table() else {
                self.problem("aliases.toml", format!("[{section}] must be a table"));
                continue;
            };
            let mut out = BTreeMap::new();
            for (folder, aliases) in map {
                let list: Option<Vec<String>> = aliases
                    .as_array()
                    .and_then(|a| a.iter().map(|v| v.as_str().map(str::to_string)).collect());
                let Some(list) = list else {
                    self.problem(
                        "aliases.toml",
                        format!("[{section}] {folder} must be a list of strings"),
                    );
                    continue;
                };
                for alias in &list {
                    if !is_valid_alias(alias) {
                        self.problem(
                            "aliases.toml",
                            format!(
                                "alias '{alias}' must be lowercase letters, digits and '-', at most 64 characters"
                            ),
                        );
                    }
                }
                out.insert(folder.clone(), list);
            }
            self.bundle.aliases.insert(section, out);
        }
    }

    fn read_artifact_folders(&mut self, kind: &str) {
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        for (entry, rel) in self.entries_of(kind) {
            if !entry.is_dir {
                self.bundle.ignored.push(rel);
                continue;
            }
            let name = nfc(&entry.name);
            if let Some(other) = seen.insert(collision_key(&name), name.clone()) {
                self.problem(
                    &rel,
                    format!(
                        "'{other}' and '{name}' differ only in case or Unicode form; rename one"
                    ),
                );
            }
            if name.contains(DERIVED_SEPARATOR) {
                self.problem(
                    &rel,
                    format!("'{name}': '__' is reserved in artifact and skill names, since derived ids use it"),
                );
            }
            if kind == "skills" {
                self.read_skill(&rel, &name);
            } else {
                self.read_artifact(&rel, &name);
            }
        }
    }

    fn read_skill(&mut self, rel: &str, name: &str) {
        let (files, listed) = match self.tree.files_below(rel) {
            Ok(f) => (f, true),
            // Its files can't be listed, which is its problem; it is a skill of the bundle all
            // the same, so a task loading it is told nothing more.
            Err(e) => {
                self.problem(rel, format!("can't be read: {e}"));
                (Vec::new(), false)
            }
        };
        self.note_folder_links(rel);
        if listed && !files.iter().any(|f| f == "SKILL.md") {
            match files.iter().find(|f| f.eq_ignore_ascii_case("SKILL.md")) {
                Some(_) => self.problem(rel, "rename to SKILL.md; names are case-sensitive"),
                None => self.problem(rel, "a skill needs a SKILL.md"),
            }
        }
        self.bundle.artifacts.push(Artifact {
            name: name.to_string(),
            path: rel.to_string(),
            id: self.entity_id(name),
            artifact_type: "skill".to_string(),
            config: Map::new(),
            files,
        });
    }

    /// Notes each link to a folder inside the bundle among the files of the artifact or skill at
    /// `rel`: no link to a folder is followed, so what it leads to is not among the artifact's files
    /// under the link's name (one leading outside the bundle is named by the run, as left out).
    fn note_folder_links(&mut self, rel: &str) {
        for (link, target) in self.tree.folder_links_inside(rel) {
            let said = match target.strip_prefix(&format!("{rel}/")) {
                _ if target == rel => format!(
                    "the artifact's own top folder: a run follows no link to a folder, so the artifact has no {link}/ (its files are read once, from the folder itself); remove the link if nothing needs it"
                ),
                Some(own) => format!(
                    "the artifact's own folder {own}: a run follows no link to a folder, so the artifact has no {link}/ (what it holds is read as {own}/ alone); put a copy of the folder there if the artifact needs it under that name"
                ),
                None => format!(
                    "the folder {} of the bundle: a run follows no link to a folder, so what it holds is left out of the artifact; put a copy of the folder in it if the artifact needs it",
                    if target.is_empty() { "." } else { target.as_str() }
                ),
            };
            self.bundle.unread.push(format!(
                "{rel}/{link} of the bundle is a symbolic link to {said}"
            ));
        }
    }

    fn read_artifact(&mut self, rel: &str, name: &str) {
        let manifest = format!("{rel}/artifact.toml");
        let (all, listed) = match self.tree.files_below(rel) {
            Ok(f) => (f, true),
            // Its files can't be listed, which is its problem; it is an artifact of the bundle all
            // the same (its artifact.toml read when it has one), so a task loading it is told
            // nothing more.
            Err(e) => {
                self.problem(rel, format!("can't be read: {e}"));
                let known = match self.tree.is_file(&manifest) {
                    true => vec!["artifact.toml".to_string()],
                    false => Vec::new(),
                };
                (known, false)
            }
        };
        self.note_folder_links(rel);
        let mut declared_type = None;
        let mut id = self.entity_id(name);
        let mut config = Map::new();
        if all.iter().any(|f| f == "artifact.toml") {
            let path = manifest;
            match self
                .tree
                .read(&path)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
            {
                Ok(text) => {
                    let (manifest, problems) = read_artifact_manifest(&text);
                    for problem in problems {
                        self.problem(&path, problem);
                    }
                    declared_type = manifest.artifact_type;
                    config = manifest.config;
                    if let Some(i) = manifest.id {
                        match ids::check_authored_id(&i) {
                            Ok(()) => id = i,
                            Err(m) => self.problem(&path, m),
                        }
                    }
                }
                Err(e) => self.problem(&path, format!("can't be read: {e}")),
            }
        }
        let files: Vec<String> = all.into_iter().filter(|f| f != "artifact.toml").collect();
        if files.iter().any(|f| f == "SKILL.md") {
            self.problem(
                rel,
                "this looks like a skill: skills live in skills/<name>/, not artifacts/",
            );
        }
        for f in &files {
            if !f.contains('/') {
                for exact in ["Dockerfile", "artifact.toml"] {
                    if f != exact && f.eq_ignore_ascii_case(exact) {
                        self.problem(
                            &format!("{rel}/{f}"),
                            format!("rename to {exact}; names are case-sensitive"),
                        );
                    }
                }
            }
        }
        if listed && files.is_empty() {
            match declared_type.as_deref() {
                None => self.problem(rel, "is empty: put the artifact's files in it"),
                Some(declared) if FILE_ARTIFACT_TYPES.contains(&declared) => self.problem(
                    rel,
                    format!("holds only artifact.toml, and a '{declared}' artifact is files: put its files beside it"),
                ),
                Some(_) => {}
            }
        }
        let artifact_type = declared_type.unwrap_or_else(|| implied_artifact_type(&files).into());
        if let Some(problem) = several_files_for_one(&artifact_type, &files) {
            self.problem(rel, problem);
        }
        self.bundle.artifacts.push(Artifact {
            name: name.to_string(),
            path: rel.to_string(),
            id,
            artifact_type,
            config,
            files,
        });
    }

    fn read_tasks(&mut self) {
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        for (entry, rel) in self.entries_in_natural_order("tasks") {
            if entry.is_dir {
                let message = match entry.name.ends_with(".json") {
                    true => {
                        "is a folder, but a task is a file: make it a JSON file of the task's steps"
                            .to_string()
                    }
                    false => format!(
                        "task folders are not supported yet; write tasks/{}.json",
                        entry.name
                    ),
                };
                self.problem(&rel, message);
                continue;
            }
            let Some(stem) = entry.name.strip_suffix(".json") else {
                if entry.name.to_ascii_lowercase().ends_with(".json") {
                    self.problem(&rel, "rename to end in .json; names are case-sensitive");
                } else {
                    self.bundle.ignored.push(rel);
                }
                continue;
            };
            let name = nfc(stem);
            self.task_files.insert(name.clone());
            let problems_before = self.problems.len();
            if let Some(other) = seen.insert(collision_key(&name), name.clone()) {
                self.problem(
                    &rel,
                    format!(
                        "'{other}' and '{name}' differ only in case or Unicode form; rename one"
                    ),
                );
            }
            let text = match self.tree.read(&rel) {
                Ok(b) => b,
                Err(e) => {
                    self.problem(&rel, format!("can't be read: {e}"));
                    continue;
                }
            };
            // An array of steps, or an object with a `steps` array (the form `task put` also takes).
            // A byte order mark (some editors write one) is not part of the JSON.
            let json = text.strip_prefix(UTF8_BOM).unwrap_or(&text);
            let parsed = match super::task_json::parse_all(json) {
                Ok(parsed) => parsed,
                Err(e) => {
                    self.problem(&rel, super::task_json::why_not_json(&e, json));
                    continue;
                }
            };
            // Every key given twice, and the file's other problems with them: its values read as
            // a JSON reader reads them, the last of each.
            for duplicate in &parsed.duplicates {
                self.problem(&rel, duplicate.describe(&parsed.value));
            }
            let steps = match parsed.value {
                Value::Array(items) => self.read_steps(&rel, items),
                Value::Object(mut doc) if doc.get("steps").is_some_and(Value::is_array) => {
                    // `task put` takes the id a task file gives; a bundle names its tasks by file.
                    if let Some(given) = doc.get("id").and_then(Value::as_str) {
                        if given != name {
                            self.bundle.unread.push(format!(
                                "{rel} gives the id '{given}', which a bundle run does not read: a bundle's task is named by its file, so this one is '{name}' (agent-env task put reads the id)"
                            ));
                        }
                    }
                    for key in doc
                        .keys()
                        .filter(|k| !TASK_DOCUMENT_KEYS.contains(&k.as_str()))
                    {
                        self.bundle.unread.push(unread_task_key(&rel, key));
                    }
                    let items = match doc.remove("steps") {
                        Some(Value::Array(items)) => items,
                        _ => Vec::new(),
                    };
                    self.read_steps(&rel, items)
                }
                _ => {
                    self.problem(
                        &rel,
                        "a task file must be a JSON array of step objects, or an object with a \"steps\" array",
                    );
                    continue;
                }
            };
            if self.problems.len() > problems_before {
                self.task_files_with_problems.insert(rel.clone());
            }
            let id = self.entity_id(&name);
            self.bundle.tasks.push(Task {
                name,
                path: rel,
                id,
                steps,
            });
        }
    }

    fn read_steps(&mut self, rel: &str, items: Vec<Value>) -> Vec<Map<String, Value>> {
        let checked = super::task_steps::check_steps(items);
        for problem in checked.problems {
            self.problem(rel, problem);
        }
        checked.steps
    }

    /// Each task an eval names must be a task file of this bundle (one that did not parse is
    /// reported as itself): found now, with every other problem, rather than when the run plans.
    fn check_eval_tasks(&mut self, rel: &str, names: &[String]) {
        for name in names {
            let is_file = |file: &String| file == name || self.entity_id(file) == *name;
            if self.bundle.task(name).is_some() || self.task_files.iter().any(is_file) {
                continue;
            }
            let near =
                crate::similar::best_match(name, self.task_files.iter().map(String::as_str), 0.75)
                    .map(|near| format!("; did you mean '{near}'?"))
                    .unwrap_or_default();
            self.problem(
                rel,
                format!("{}{near}", super::model::not_a_task_of_this_bundle(name)),
            );
        }
    }

    fn read_evals(&mut self) {
        for (entry, rel) in self.entries_in_natural_order("evals") {
            let Some(stem) = entry.name.strip_suffix(".toml").filter(|_| !entry.is_dir) else {
                self.bundle.ignored.push(rel);
                continue;
            };
            let name = nfc(stem);
            let text = match self.tree.read(&rel) {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(e) => {
                    self.problem(&rel, format!("can't be read: {e}"));
                    continue;
                }
            };
            let table: toml::Table = match text.parse() {
                Ok(t) => t,
                Err(e) => {
                    self.problem(
                        &rel,
                        format!(
                            "isn't valid TOML: {}",
                            crate::toml_errors::describe(&e, &text)
                        ),
                    );
                    continue;
                }
            };
            let mut eval = Eval {
                id: self.entity_id(&name),
                name,
                path: rel.clone(),
                eval_type: "eval".to_string(),
                tasks: Vec::new(),
            };
            let mut has_tasks = false;
            for (key, value) in table {
                match key.as_str() {
                    "tasks" => {
                        has_tasks = true;
                        let list: Option<Vec<String>> = value.as_array().and_then(|a| {
                            a.iter().map(|v| v.as_str().map(str::to_string)).collect()
                        });
                        match list {
                            Some(l) if !l.is_empty() => {
                                eval.tasks = l.iter().map(|t| as_task_name(t)).collect();
                                // Said here, in the order of the eval's keys (the tasks are read).
                                self.check_eval_tasks(&rel, &eval.tasks);
                            }
                            _ => self.problem(&rel, eval_tasks_problem(&value)),
                        }
                    }
                    "type" => match value.as_str() {
                        Some(t) => eval.eval_type = t.to_string(),
                        None => self.problem(&rel, "type must be a string"),
                    },
                    "id" => match value.as_str().map(|i| (i, ids::check_authored_id(i))) {
                        Some((i, Ok(()))) => eval.id = i.to_string(),
                        Some((_, Err(m))) => self.problem(&rel, m),
                        None => self.problem(&rel, "id must be a string"),
                    },
                    other => self.problem(
                        &rel,
                        format!("unknown key '{other}'; an eval takes tasks, type, id"),
                    ),
                }
            }
            if !has_tasks {
                self.problem(
                    &rel,
                    "an eval needs tasks, a non-empty list of task names or ids",
                );
            }
            self.bundle.evals.push(eval);
        }
    }

    fn read_builds(&mut self, kind: &str) {
        let (toml_name, default_type) = if kind == "envs" {
            ("env.toml", "mcp_server")
        } else {
            ("agent.toml", "a2a_agent")
        };
        for (entry, rel) in self.entries_of(kind) {
            if !entry.is_dir {
                self.bundle.ignored.push(rel);
                continue;
            }
            let has_dockerfile = self.tree.is_file(&format!("{rel}/Dockerfile"));
            let has_toml = self.tree.is_file(&format!("{rel}/{toml_name}"));
            if !has_dockerfile && !has_toml {
                let listing = self.tree.list(&rel).unwrap_or_default();
                if let Some(f) = listing
                    .iter()
                    .find(|e| e.name.eq_ignore_ascii_case("Dockerfile"))
                {
                    let name = f.name.clone();
                    self.problem(
                        &format!("{rel}/{name}"),
                        "rename to Dockerfile; names are case-sensitive",
                    );
                } else {
                    self.problem(&rel, format!("needs a Dockerfile or {toml_name}"));
                }
            }
            let name = nfc(&entry.name);
            self.bundle.builds.push(BuildEntry {
                kind: kind.to_string(),
                id: self.entity_id(&name),
                name,
                path: rel,
                entry_type: default_type.to_string(),
            });
        }
    }

    fn check_shared_names(&mut self) {
        let mut by_key: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for a in &self.bundle.artifacts {
            by_key
                .entry(collision_key(&a.name))
                .or_default()
                .push(a.path.clone());
        }
        for paths in by_key.into_values() {
            let kinds: Vec<&str> = paths.iter().filter_map(|p| p.split('/').next()).collect();
            if kinds.contains(&"artifacts") && kinds.contains(&"skills") {
                self.problems.push(format!(
                    "{}: {} share a name; artifacts and skills share one store, so rename one",
                    self.root,
                    paths.join(" and ")
                ));
            }
        }
    }

    fn check_duplicate_ids(&mut self) {
        let mut owners: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
        let b = &self.bundle;
        let entries = b
            .artifacts
            .iter()
            .map(|a| ("artifacts", &a.id, &a.path))
            .chain(b.tasks.iter().map(|t| ("tasks", &t.id, &t.path)))
            .chain(b.evals.iter().map(|e| ("evals", &e.id, &e.path)))
            .chain(b.builds.iter().map(|e| (e.kind.as_str(), &e.id, &e.path)));
        for (store, id, path) in entries {
            // Skills are stored with artifacts; a task and an eval are written under one ledger
            // entry per id, so an eval may not take a task's id either.
            let store = match store {
                "skills" => "artifacts",
                "evals" => "tasks",
                other => other,
            };
            owners
                .entry((store.to_string(), id.clone()))
                .or_default()
                .push(path.clone());
        }
        for ((_, id), paths) in owners {
            if paths.len() > 1 {
                let task_and_eval = paths.iter().any(|p| p.starts_with("evals/"))
                    && paths.iter().any(|p| p.starts_with("tasks/"));
                let why = match task_and_eval {
                    true => "a task and an eval may not share an id (a run records one version per id), so rename one",
                    false => "ids must be unique",
                };
                self.problems.push(format!(
                    "{}: {} have the same id '{id}'; {why}",
                    self.root,
                    paths.join(" and ")
                ));
            }
        }
    }
}

/// The keys of a task file in the object form a run or `task put` reads (`steps`, and the `id`
/// `task put` takes), and those the document `task get ID --json` prints carries beside them.
const TASK_DOCUMENT_KEYS: [&str; 7] = [
    "steps",
    "id",
    "type",
    "version",
    "created_at_utc",
    "name",
    "bundle",
];

/// What a run notes of `key`, which the task file `rel` in the object form gives and nothing reads.
fn unread_task_key(rel: &str, key: &str) -> String {
    let unread = format!("{rel} gives the key '{key}', which a task file does not read");
    match crate::similar::best_match(key, ["steps", "id"], 0.75) {
        Some(meant) => format!("{unread}: did you mean '{meant}'?"),
        None => format!("{unread} (it reads 'steps', and the 'id' agent-env task put takes)"),
    }
}

/// The task a name in an eval's `tasks` names, in the forms `agent-env run --task` takes: its path in
/// the bundle (`tasks/hello.json`, `./tasks/hello.json`, `hello.json`) as its name (`hello`), in NFC
/// as names read from files are; a name or an id as given.
pub fn as_task_name(given: &str) -> String {
    as_entity_name(given, "tasks/", ".json")
}

/// The name of a bundle's entity given by its path in the bundle (`./` and the kind folder `prefix`
/// optional, the file's `suffix` required: `tasks/t001.json`, `small.toml`), in NFC as names read
/// from files are; anything else (a name, an id, a path into a subfolder) as given.
pub fn as_entity_name(given: &str, prefix: &str, suffix: &str) -> String {
    let given = &*crate::bundle::model::as_nfc(given);
    let bare = given.strip_prefix("./").unwrap_or(given);
    let bare = bare.strip_prefix(prefix).unwrap_or(bare);
    match bare.strip_suffix(suffix) {
        Some(name) if !name.is_empty() && !name.contains('/') => name.to_string(),
        _ => given.to_string(),
    }
}

/// What an eval's `tasks` that is not a non-empty list of strings is told: what it got, and for one
/// task name, the list of it to write.
fn eval_tasks_problem(value: &toml::Value) -> String {
    let wanted = "tasks must be a non-empty list of task names or ids";
    match value {
        toml::Value::String(_) => format!("{wanted}, got a string: write tasks = [{value}]"),
        toml::Value::Array(items) if items.is_empty() => format!("{wanted}, got an empty list"),
        toml::Value::Array(_) => format!("{wanted} (strings), got {value}"),
        other => format!("{wanted}, got {other}"),
    }
}

/// An alias: `[a-z0-9]`, then up to 62 of `[a-z0-9-]`, ending in `[a-z0-9]`.
fn is_valid_alias(alias: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !alias.is_empty()
        && alias.len() <= 64
        && alias.chars().all(|c| ok(c) || c == '-')
        && alias.chars().next().is_some_and(ok)
        && alias.chars().last().is_some_and(ok)
}

/// The first line of text of a README: front matter, badges, HTML and blank lines skipped; heading
/// markers dropped.
pub fn first_text_line(text: &str) -> Option<String> {
    let mut lines = text.lines().peekable();
    if lines.peek().map(|l| l.trim()) == Some("---") {
        lines.next();
        for line in lines.by_ref() {
            if line.trim() == "---" {
                break;
            }
        }
    }
    for line in lines {
        let t = line.trim();
        if t.is_empty() || t.starts_with('<') || t.starts_with("[![") || t.starts_with("![") {
            continue;
        }
        let t = t.trim_start_matches('#').trim();
        if !t.is_empty() {
            return Some(t.to_string());
        }
    }
    None
}

/// What an `artifact.toml` says: its `type`, its `id`, and every other key as a setting.
#[derive(Debug, Default)]
pub struct ArtifactManifest {
    pub artifact_type: Option<String>,
    /// As written; an id the bundle gives it is checked by the caller.
    pub id: Option<String>,
    pub config: Map<String, Value>,
}

/// Reads an `artifact.toml`'s text, with the problems found in it (each said of the file).
pub fn read_artifact_manifest(text: &str) -> (ArtifactManifest, Vec<String>) {
    let mut manifest = ArtifactManifest::default();
    let mut problems = Vec::new();
    let table = match text.parse::<toml::Table>() {
        Ok(table) => table,
        Err(e) => {
            problems.push(format!(
                "isn't valid TOML: {}",
                crate::toml_errors::describe(&e, text)
            ));
            return (manifest, problems);
        }
    };
    // A near miss of `type` (`typ = "file"`) would be taken for a setting in silence, and the
    // artifact's type guessed from its files.
    if !table.contains_key("type") {
        for key in table.keys() {
            if crate::similar::best_match(key, ["type"], 0.75).is_some() {
                problems.push(format!(
                    "'{key}' would be a setting of the artifact, and its type guessed from its files; did you mean 'type'?"
                ));
            }
        }
    }
    for (key, value) in table {
        match (key.as_str(), value) {
            ("type", toml::Value::String(t)) => manifest.artifact_type = Some(t),
            ("type", _) => problems.push("type must be a string".into()),
            ("id", toml::Value::String(i)) => manifest.id = Some(i),
            ("id", _) => problems.push("id must be a string".into()),
            (_, v) => {
                manifest.config.insert(key, toml_to_json(v));
            }
        }
    }
    (manifest, problems)
}

/// A TOML value as JSON (datetimes become their text).
pub fn toml_to_json(value: toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => Value::from(f),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => {
            Value::Object(t.into_iter().map(|(k, v)| (k, toml_to_json(v))).collect())
        }
    }
}

/// The artifact types that are their folder's files (`load_artifact` copies them into a sandbox).
const FILE_ARTIFACT_TYPES: [&str; 3] = ["file", "file_artifact_universe", "skill"];

/// A `file` artifact is one file: a folder of several would load only the first. The problem, when
/// `artifact_type` is `file` and `files` are more than one.
pub fn several_files_for_one(artifact_type: &str, files: &[String]) -> Option<String> {
    if artifact_type != "file" || files.len() <= 1 {
        return None;
    }
    let shown: Vec<&str> = files.iter().take(5).map(String::as_str).collect();
    let more = match files.len() - shown.len() {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    Some(format!(
        "type = \"file\" is one file, and this folder has {} ({}{more}); keep one, or write type = \"file_artifact_universe\" (or no type) to load them all",
        files.len(),
        shown.join(", ")
    ))
}

/// The type of an artifact whose folder has no `artifact.toml` saying it: a `Dockerfile` makes an
/// image, a single file a `file`, anything else a `file_artifact_universe`.
pub fn implied_artifact_type(files: &[String]) -> &'static str {
    if files.iter().any(|f| f == "Dockerfile") {
        "docker_image"
    } else if files.len() == 1 {
        "file"
    } else {
        "file_artifact_universe"
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_near_miss_of_type_in_artifact_toml_is_a_problem_not_a_setting() {
        let (manifest, problems) = read_artifact_manifest("typ = \"file\"\nmode = \"fast\"\n");
        assert_eq!(
            problems,
            ["'typ' would be a setting of the artifact, and its type guessed from its files; did you mean 'type'?"]
        );
        assert!(manifest.artifact_type.is_none());
        let (_, problems) = read_artifact_manifest("type = \"file\"\ntypes = [1]\n");
        assert!(problems.is_empty(), "{problems:?}");
    }

    use super::*;

    #[test]
    fn readme_description_skips_front_matter_badges_and_html() {
        let text = "---\ntitle: x\n---\n\n[![ci](b.svg)](x)\n<p>hi</p>\n# The real line\nmore";
        assert_eq!(first_text_line(text).as_deref(), Some("The real line"));
    }

    #[test]
    fn aliases_are_lowercase_and_bounded() {
        assert!(is_valid_alias("a-1"));
        assert!(!is_valid_alias("-a"));
        assert!(!is_valid_alias("A"));
        assert!(!is_valid_alias(&"a".repeat(65)));
    }

    #[test]
    fn an_eval_naming_no_task_file_is_reported_with_the_other_problems() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("tasks")).unwrap();
        std::fs::create_dir_all(root.join("evals")).unwrap();
        std::fs::write(root.join("tasks/broken.json"), "{not json").unwrap();
        std::fs::write(
            root.join("evals/e.toml"),
            "tasks = [\"broken\", \"missing\"]\n",
        )
        .unwrap();
        let err = parse_tree(Tree::Disk(root), "b", "@local/~/b")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("b/tasks/broken.json: isn't valid JSON"),
            "{err}"
        );
        assert!(
            err.contains("b/evals/e.toml: 'missing' is not a task of this bundle"),
            "{err}"
        );
        // The broken file is one problem, not two: an eval may name it.
        assert!(!err.contains("'broken' is not a task"), "{err}");
    }

    #[test]
    fn a_file_artifact_of_several_files_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("artifacts/multi")).unwrap();
        std::fs::write(
            root.join("artifacts/multi/artifact.toml"),
            "type = \"file\"\n",
        )
        .unwrap();
        std::fs::write(root.join("artifacts/multi/a"), "1").unwrap();
        std::fs::write(root.join("artifacts/multi/b"), "2").unwrap();
        let err = parse_tree(Tree::Disk(root), "b", "@local/~/b")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "b/artifacts/multi: type = \"file\" is one file, and this folder has 2 (a, b)"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_named_pipe_in_an_artifact_is_refused_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("artifacts/a")).unwrap();
        std::fs::write(root.join("artifacts/a/x"), "1").unwrap();
        let pipe = root.join("artifacts/a/p");
        let c_path = std::ffi::CString::new(pipe.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        let err = parse_tree(Tree::Disk(root), "b", "@local/~/b")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("is a named pipe (FIFO), not a regular file"),
            "{err}"
        );
    }

    #[test]
    fn names_in_another_unicode_form_are_the_same_name() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("tasks")).unwrap();
        std::fs::create_dir_all(root.join("evals")).unwrap();
        // The file's name decomposed (as macOS writes it), the eval's entry and the lookup composed
        // and decomposed.
        let decomposed = "cafe\u{301}";
        std::fs::write(
            root.join(format!("tasks/{decomposed}.json")),
            r#"[{"id": "b", "type": "deploy_sandbox", "sandbox_name": "b"}]"#,
        )
        .unwrap();
        std::fs::write(
            root.join("evals/e.toml"),
            format!("tasks = [\"{decomposed}\"]\n"),
        )
        .unwrap();
        let bundle = parse_tree(Tree::Disk(root), "b", "@local/~/b").unwrap();
        assert_eq!(
            bundle.task("caf\u{e9}").map(|t| t.name.as_str()),
            Some("caf\u{e9}")
        );
        assert!(bundle.task(decomposed).is_some());
    }

    #[test]
    fn a_retry_and_a_dependency_problem_are_said_together() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("tasks")).unwrap();
        std::fs::write(
            root.join("tasks/t.json"),
            r#"[{"id": "w", "type": "x", "retry_config": {"retry_from_step_id": "nope"}},
                {"id": "v", "type": "x", "retry_config": []},
                {"id": "d", "type": "x", "depends_on": ["zzz"]},
                {"id": "x", "type": "x", "retry_config": {"max_retries": "2", "retry_from_step_id": "ghost"}}]"#,
        )
        .unwrap();
        let err = parse_tree(Tree::Disk(root), "b", "@local/~/b")
            .unwrap_err()
            .to_string();
        for said in [
            "step 'w': retry_config resumes from 'nope', which is not this step or an earlier step of this task",
            "step 'x': retry_config.max_retries must be a whole number of 0 or more",
            "step 'x': retry_config resumes from 'ghost', which is not this step or an earlier step of this task",
            "step 'v': retry_config must be an object such as {\"max_retries\": 1}",
            "step 'd' depends on 'zzz', which is not an earlier step of this task",
        ] {
            assert!(err.contains(said), "{said}\n{err}");
        }
    }

    #[test]
    fn a_task_file_with_a_byte_order_mark_reads_and_a_bad_one_says_its_forms() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("tasks")).unwrap();
        std::fs::create_dir_all(root.join("evals")).unwrap();
        std::fs::write(
            root.join("tasks/bom.json"),
            "\u{feff}[{\"id\": \"b\", \"type\": \"deploy_sandbox\", \"sandbox_name\": \"b\"}]",
        )
        .unwrap();
        std::fs::write(root.join("evals/e.toml"), "\u{feff}tasks = [\"bom\"]\n").unwrap();
        assert!(parse_tree(Tree::Disk(root), "b", "@local/~/b").is_ok());
        std::fs::write(root.join("tasks/obj.json"), "{}").unwrap();
        std::fs::write(root.join("tasks/odd.json"), r#"["string step"]"#).unwrap();
        let err = parse_tree(Tree::Disk(root), "b", "@local/~/b")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("b/tasks/obj.json: a task file must be a JSON array of step objects, or an object with a \"steps\" array"),
            "{err}"
        );
        assert!(
            err.contains("b/tasks/odd.json: step 1 is \"string step\", not a step object"),
            "{err}"
        );
    }

    #[test]
    fn a_key_given_twice_in_a_task_file_is_refused_with_its_line() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("tasks")).unwrap();
        std::fs::write(
            root.join("tasks/t.json"),
            "[{\"id\": \"v\", \"type\": \"verify_sandbox\", \"sandbox_name\": \"b\",\n  \"criteria\": [{\"type\": \"probe_dir_exists\", \"paths\": [\".\"]}],\n  \"criteria\": []}]",
        )
        .unwrap();
        let err = parse_tree(Tree::Disk(root), "b", "@local/~/b")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "b/tasks/t.json: step 1 ('v') has the key 'criteria' twice (line 3, column 3), and only the last would be read: keep the one you mean"
        );
    }

    #[test]
    fn a_task_and_an_eval_of_one_name_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("tasks")).unwrap();
        std::fs::create_dir_all(root.join("evals")).unwrap();
        std::fs::write(root.join("tasks/dup.json"), "[]").unwrap();
        std::fs::write(root.join("evals/dup.toml"), "tasks = [\"dup\"]\n").unwrap();
        let err = parse_tree(Tree::Disk(root), "b", "@local/~/b")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("tasks/dup.json and evals/dup.toml have the same id '@local/~/b/dup'; a task and an eval may not share an id"),
            "{err}"
        );
    }
}
