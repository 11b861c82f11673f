//! What `store get` and `store check` tell the user besides their answer, black-box with the fixture
//! store plugins: `store get` shows an object's bidi controls and invisible characters as escapes on a
//! terminal (and its bytes as they are anywhere else), and says which temporary folder it could not
//! fetch an object into and what to do; `store check document` notes that a plugin's document store
//! without `store.document.drop_collection` had the kit's collections emptied one document at a time.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{IsolatedDirs, AGENT_ENV};

/// A temp world: a work folder whose config selects `stores` (a `[stores.*]` table), plugins in the
/// world's plugins dir, HOME and the XDG folders inside it.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        World {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn plugins(&self) -> PathBuf {
        self.path().join("data/agent-env/plugins")
    }

    fn work(&self) -> PathBuf {
        self.path().join("work")
    }

    /// Installs the fixture plugin `exe` as `package`, providing `class` of `kind`.
    fn install(&self, package: &str, exe: &str, class: &str, kind: &str) {
        crate::support::install_store_fixture(
            &self.plugins(),
            package,
            (package, "0.1.0"),
            exe,
            (class, kind),
        );
    }

    fn configure(&self, stores: &str) {
        std::fs::create_dir_all(self.work().join(".agentenv")).unwrap();
        std::fs::write(self.work().join(".agentenv/config.toml"), stores).unwrap();
    }

    /// `agent-env ARGS` in the work folder, TMPDIR inside the world.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(AGENT_ENV);
        cmd.env_clear();
        IsolatedDirs {
            home: self.path().join("home"),
            xdg_data: self.path().join("data"),
            xdg_state: self.path().join("state"),
            xdg_config: self.path().join("config"),
            plugins: self.plugins(),
        }
        .apply(&mut cmd)
        .args(args)
        .current_dir(self.work())
        .env("PATH", "/usr/bin:/bin")
        .env("TMPDIR", self.path());
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }
}

/// A world whose object store is the fixture's `DiskObjectStore` over `<world>/root`.
fn object_world() -> World {
    let world = World::new();
    world.install(
        "agentenv-fixture-store",
        "fixture-store",
        "DiskObjectStore",
        "object",
    );
    world.configure(&format!(
        "[stores.object]\nimpl = \"agentenv-fixture-store:DiskObjectStore\"\nconfig = {{ root = \"{}\" }}\n",
        world.path().join("root").display()
    ));
    world
}

/// Puts `bytes` in the object world's store as `key`, without the plugin; its URL.
fn object(world: &World, key: &str, bytes: &[u8]) -> String {
    let path = world.path().join("root/objects").join(key);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
    format!("disk://fixture/{key}")
}

/// A world whose document store is the fixture's `DiskDocumentStore`, answering
/// `store.document.drop_collection` as `drop` says (`own`: drops; `refuse`: not-supported).
fn document_world(drop: &str) -> World {
    let world = World::new();
    world.install(
        "agentenv-fixture-documents",
        "fixture-documents",
        "DiskDocumentStore",
        "document",
    );
    world.configure(&format!(
        "[stores.document]\nimpl = \"agentenv-fixture-documents:DiskDocumentStore\"\nconfig = {{ root = \"{}\", drop = \"{drop}\" }}\n",
        world.path().join("docs").display()
    ));
    world
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `cmd` with its stdout on a pseudo-terminal: its exit code, what the terminal showed, and its
/// stderr.
fn on_a_terminal(cmd: Command) -> (i32, String, String) {
    let ran = agent_env_test_support::terminal::on_a_terminal(cmd);
    (ran.code, ran.shown, ran.stderr)
}

/// The trojan-source line: on a terminal it reads `user" // Check if admin`, while it holds a string
/// that goes on past the comment; then a zero-width space and a word joiner.
const TROJAN: &str =
    "\u{feff}if role != \"user\u{202e} \u{2066}// Check if admin\u{2069} \u{2066}\" {\nad\u{200b}min\u{2060}\n";

#[test]
fn store_get_shows_bidi_and_invisible_characters_as_escapes_on_a_terminal_only() {
    let world = object_world();
    let url = object(&world, "trojan.txt", TROJAN.as_bytes());
    let (code, shown, stderr) = on_a_terminal(world.command(&["store", "get", &url]));
    assert_eq!(code, 0, "{stderr}");
    // The byte order mark that starts the object stays; what draws nothing inside it is shown.
    assert_eq!(
        shown,
        "\u{feff}if role != \"user\\u202e \\u2066// Check if admin\\u2069 \\u2066\" {\nad\\u200bmin\\u2060\n"
    );
    // Past the first piece the object is shown in, a byte order mark is inside it.
    let long = "y".repeat(64 * 1024);
    let late = object(
        &world,
        "late.txt",
        format!("{long}\u{feff}\u{202e}x\n").as_bytes(),
    );
    let (code, shown, stderr) = on_a_terminal(world.command(&["store", "get", &late]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(shown, format!("{long}\\ufeff\\u202ex\n"));
    // `-o -` on a terminal: the bytes as they are.
    let (code, shown, stderr) = on_a_terminal(world.command(&["store", "get", &url, "-o", "-"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(shown, TROJAN);
    // A pipe, with and without `-o -`.
    for args in [
        &["store", "get", &url][..],
        &["store", "get", &url, "-o", "-"],
    ] {
        let out = world.run(args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(out.stdout, TROJAN.as_bytes(), "{args:?}");
    }
    // A file.
    let file = world.path().join("copy.txt");
    let out = world.run(&["store", "get", &url, "-o", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&file).unwrap(), TROJAN.as_bytes());
}

#[test]
fn store_get_names_the_temporary_folder_it_cannot_write_and_what_to_do() {
    let world = object_world();
    let url = object(&world, "note.txt", b"hello\n");
    let missing = world.path().join("no-such-folder");
    let regular = world.path().join("a-file");
    std::fs::write(&regular, "not a folder").unwrap();
    for (temp, why) in [
        (&missing, "No such file or directory"),
        (&regular, "Not a directory"),
    ] {
        for args in [
            &["store", "get", &url][..],
            &["store", "get", &url, "-o", "-"],
        ] {
            let out = world.command(args).env("TMPDIR", temp).output().unwrap();
            let stderr = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{stderr}");
            assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
            let said = format!(
                "Error: cannot fetch {url} to print it: the temporary folder {} cannot be written ({why}",
                temp.display()
            );
            assert!(stderr.starts_with(&said), "{stderr}");
            assert!(
                stderr.trim_end().ends_with(
                    "; set TMPDIR to a folder you can write that has room for the object, or write the object to a file with --output FILE"
                ),
                "{stderr}"
            );
        }
        // As the message says: a file needs no temporary folder.
        let file = world.path().join("note-copy.txt");
        let out = world
            .command(&["store", "get", &url, "-o", file.to_str().unwrap()])
            .env("TMPDIR", temp)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(std::fs::read(&file).unwrap(), b"hello\n");
    }
}

/// `store check document --json` in `world`: the report, after checking that every case passed.
fn checked_json(world: &World) -> serde_json::Value {
    let out = world.run(&["store", "check", "document", "--json"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}\n{stderr}"))
}

#[test]
fn store_check_notes_a_plugin_document_store_that_cannot_drop_collections() {
    let world = document_world("refuse");
    let report = checked_json(&world);
    let ns = report["namespace"].as_str().unwrap().to_string();
    assert!(ns.starts_with("kit_"), "{report:#}");
    let notes = report["notes"].as_array().expect("notes");
    assert_eq!(notes.len(), 1, "{report:#}");
    let note = notes[0].as_str().unwrap();
    assert_eq!(
        note,
        format!(
            "the plugin's document store does not implement store.document.drop_collection, so the kit's collections ('{ns}__<case>') were emptied one document at a time instead of dropped, and any that the store keeps while empty are still there; the plugin can implement store.document.drop_collection to have them dropped whole"
        )
    );
    let out = world.run(&["store", "check", "document"]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("note: the plugin's document store does not implement store.document.drop_collection, so the kit's collections ('kit_"),
        "{stdout}"
    );
    assert!(
        last.ends_with(
            "the plugin can implement store.document.drop_collection to have them dropped whole"
        ),
        "{stdout}"
    );
}

#[test]
fn store_check_has_no_note_for_a_plugin_document_store_that_drops_collections() {
    let world = document_world("own");
    let report = checked_json(&world);
    assert_eq!(report["notes"], serde_json::json!([]), "{report:#}");
    let out = world.run(&["store", "check", "document"]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(!stdout.contains("note:"), "{stdout}");
}

/// A hosted store that cannot be reached is one sentence, not a failure of every case.
#[test]
fn store_check_of_a_store_that_cannot_be_reached_says_so_once() {
    let world = World::new();
    // A port nothing listens on: connecting is refused at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    world.configure(&format!(
        "[stores.document]\nimpl = \"PostgresDocumentStore\"\nconfig = {{ dsn = \"postgresql://u:p@127.0.0.1:{port}/db\" }}\n"
    ));
    let out = world.run(&["store", "check", "document"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "the store PostgresDocumentStore cannot serve requests, so no case was run: "
        ),
        "{stderr}"
    );
    assert!(!stdout.contains("FAILED"), "{stdout}");
    assert!(
        !format!("{stdout}{stderr}").contains("u:p@"),
        "the password is never shown"
    );
}
