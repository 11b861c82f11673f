//! A document store plugin written in `sh` that holds one stored task (`team/stored`) and refuses
//! every read while a file (its "down" cue) exists: a shared store that stops answering under a
//! running explorer, and answers again once the file is gone.

use std::path::{Path, PathBuf};

use super::World;

/// The plugin's package and class, as `[stores.document] impl` names them.
pub const IMPL: &str = "agentenv-shelldocs:ShellDocuments";

/// The stored task the store holds.
const TASK: &str = r#"{"id":"team/stored","version":1,"name":"stored","created_at_utc":"2024-01-01T00:00:00+00:00","steps":[]}"#;

/// The store's error while it is down.
pub const REFUSAL: &str = "the database server is away";

/// Installs the plugin in `world`'s plugins dir; the store is down while the returned file exists.
pub fn install(world: &World) -> PathBuf {
    let down = world.root.join("documents-down");
    let script = world.root.join("shell-documents.sh");
    std::fs::write(&script, script_text(&down)).expect("store script written");
    world.install_manifest(
        "shelldocs",
        &format!(
            "[plugin]\nname = \"agentenv-shelldocs\"\nversion = \"1\"\nexec = [\"/bin/sh\", \"{}\"]\nprotocol = [1, 1]\n\n[provides.stores]\nShellDocuments = \"document\"\n",
            script.display()
        ),
    );
    down
}

fn script_text(down: &Path) -> String {
    format!(
        r#"#!/bin/sh
answer() {{ printf '{{"jsonrpc":"2.0","id":%s,"result":%s}}\n' "$id" "$1"; }}
while IFS= read -r line; do
  rest=${{line#*\"id\":}}
  id=${{rest%%[!0-9]*}}
  [ -n "$id" ] || continue
  # Whether the request is about the stored task: the tasks collection, and a filter naming it or none.
  held=no
  case "$line" in
    *'"collection":"tasks"'*)
      case "$line" in
        *'team/stored'*) held=yes ;;
        *'"value"'*) ;;
        *) held=yes ;;
      esac ;;
  esac
  case "$line" in
    *'"method":"initialize"'*) answer '{{"protocol":1,"plugin":{{"name":"agentenv-shelldocs","version":"1"}},"contributions":[],"stores":[{{"class":"ShellDocuments","kind":"document"}}]}}' ;;
    *'"method":"store.open"'*) answer '{{"handle":"h1"}}' ;;
    *'"method":"store.document.'*)
      if [ -e '{down}' ]; then
        printf '{{"jsonrpc":"2.0","id":%s,"error":{{"code":-32603,"message":"{REFUSAL}"}}}}\n' "$id"
        continue
      fi
      case "$line:$held" in
        *'"method":"store.document.count"'*:yes) answer '{{"count":1}}' ;;
        *'"method":"store.document.count"'*) answer '{{"count":0}}' ;;
        *'"method":"store.document.query"'*:yes) answer '{{"docs":[{TASK}]}}' ;;
        *'"method":"store.document.query"'*) answer '{{"docs":[]}}' ;;
        *'"method":"store.document.find_one"'*:yes) answer '{{"doc":{TASK}}}' ;;
        *'"method":"store.document.find_one"'*) answer '{{"doc":null}}' ;;
        *) answer 'null' ;;
      esac ;;
    *) answer 'null' ;;
  esac
done
"#,
        down = down.display()
    )
}
