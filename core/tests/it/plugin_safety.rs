//! Warnings about plugins others could change, said once by every command that read the manifests (not
//! only by `plugin list`): a manifest other users can write to, and a relative `exec` that leads out of
//! the plugins directory.

use std::os::unix::fs::PermissionsExt;

use crate::support::run::Sandboxed;

#[test]
fn unsafe_plugin_paths_are_warned_about_once_by_every_command_that_reads_manifests() {
    let s = Sandboxed::new();
    let manifest = s.install_manifest(
        "writable",
        "[plugin]\nname = \"agentenv-writable\"\nversion = \"1\"\nexec = [\"/bin/true\"]\nprotocol = [1, 1]\n\n[provides.envs]\nw_env = \"W\"\n",
    );
    std::fs::set_permissions(&manifest, std::fs::Permissions::from_mode(0o666)).unwrap();
    s.install_manifest(
        "escapes",
        "[plugin]\nname = \"agentenv-escapes\"\nversion = \"1\"\nexec = [\"../../elsewhere/bin/x\"]\nprotocol = [1, 1]\n\n[provides.envs]\ne_env = \"E\"\n",
    );
    let writable = "can be written by other users (mode 0666), who could then choose what agent-env runs; run `chmod go-w";
    let escapes = "plugin agentenv-escapes's exec '../../elsewhere/bin/x' resolves to";
    for args in [
        &["plugin", "list"][..],
        &["plugin", "check"][..],
        &["config", "show"][..],
        &["--help"][..],
    ] {
        let r = s.run(args);
        assert_eq!(
            r.stderr.matches(writable).count(),
            1,
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(
            r.stderr.matches(escapes).count(),
            1,
            "{args:?}: {}",
            r.stderr
        );
        assert!(
            r.stderr.contains("outside the plugins directory"),
            "{}",
            r.stderr
        );
    }
    // `--version` reads no manifest, so it has nothing to say.
    let r = s.run(&["--version"]);
    assert!(!r.stderr.contains(writable), "{}", r.stderr);
}
