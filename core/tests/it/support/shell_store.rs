//! A store plugin written in `sh`, for the cases no fixture covers (noise on stdout, a secret in its
//! stderr, a slow answer): it answers `initialize` and `store.open` itself and runs the test's shell
//! lines for every other request, with `$id` (the request's id) and `$line` (the request) set.

use std::path::Path;

/// What the plugin is: its package, the class it provides and as what kind of store.
pub struct ShellStore<'a> {
    pub package: &'a str,
    pub class: &'a str,
    pub kind: &'a str,
    /// Shell lines run before `store.open` is answered.
    pub on_open: &'a str,
    /// Shell lines that answer any other request.
    pub on_call: &'a str,
}

impl ShellStore<'_> {
    /// Writes the script beside `plugins_dir` and its manifest into `plugins_dir/<folder>/`.
    pub fn install(&self, plugins_dir: &Path, folder: &str) {
        let script = plugins_dir
            .parent()
            .unwrap_or(plugins_dir)
            .join(format!("{folder}.sh"));
        let (package, class, kind) = (self.package, self.class, self.kind);
        std::fs::write(
            &script,
            format!(
                r#"#!/bin/sh
while IFS= read -r line; do
  rest=${{line#*\"id\":}}
  id=${{rest%%[!0-9]*}}
  [ -n "$id" ] || continue
  case "$line" in
    *'"method":"initialize"'*) printf '{{"jsonrpc":"2.0","id":%s,"result":{{"protocol":1,"plugin":{{"name":"{package}","version":"1"}},"contributions":[],"stores":[{{"class":"{class}","kind":"{kind}"}}]}}}}\n' "$id" ;;
    *'"method":"store.open"'*) {on_open}
      printf '{{"jsonrpc":"2.0","id":%s,"result":{{"handle":"h1"}}}}\n' "$id" ;;
    *) {on_call} ;;
  esac
done
"#,
                on_open = self.on_open,
                on_call = self.on_call,
            ),
        )
        .unwrap();
        let dir = plugins_dir.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("agent-env-plugin.toml"),
            format!(
                "[plugin]\nname = \"{package}\"\nversion = \"1\"\nexec = [\"/bin/sh\", \"{}\"]\nprotocol = [1, 1]\n\n[provides.stores]\n{class} = \"{kind}\"\n",
                script.display()
            ),
        )
        .unwrap();
    }
}

/// The shell line that answers the request with an `internal-error`.
pub const REFUSE: &str =
    r#"printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"not here"}}\n' "$id""#;
