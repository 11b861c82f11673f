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
    // Nor do `run` of a folder and of agent-env's own bundle: neither needs the installed bundles. A
    // name that is neither is looked for among them, which reads the manifests.
    s.copy_hello("b");
    for args in [&["run", "./b"][..], &["run", "hello"][..]] {
        let r = s.run(args);
        assert!(!r.stderr.contains(writable), "{args:?}: {}", r.stderr);
        assert!(r.stdout.contains("passed"), "{args:?}: {}", r.stdout);
    }
    let r = s.run(&["run", "no-such-bundle"]);
    assert_eq!(r.stderr.matches(writable).count(), 1, "{}", r.stderr);
}

/// A plugin whose answer to `initialize` is over the 64 MiB message limit: the host discards it and
/// says so (`message-too-large`), instead of calling it an error answer or noise.
#[test]
fn an_initialize_answer_over_the_size_limit_is_message_too_large() {
    let s = Sandboxed::new();
    let script = s.script(
        "huge.sh",
        r#"#!/bin/sh
IFS= read -r line
printf '{"jsonrpc":"2.0","id":1,"result":{"pad":"'
head -c 70000000 /dev/zero | tr '\0' 'a'
printf '"}}\n'
sleep 5
"#,
    );
    s.install_manifest(
        "huge",
        &format!(
            "[plugin]\nname = \"agentenv-huge\"\nversion = \"1\"\nexec = [\"/bin/sh\", \"{}\"]\nprotocol = [1, 1]\n\n[provides.envs]\nh_env = \"H\"\n",
            script.display()
        ),
    );
    let r = s.run(&["plugin", "show", "agentenv-huge", "--json"]);
    let doc: serde_json::Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.both()));
    let failure = &doc["process"]["failure"];
    assert_eq!(failure["code"], "message-too-large", "{doc:#}");
    let message = failure["message"].as_str().unwrap();
    assert!(
        message.starts_with("initialize with plugin agentenv-huge (/bin/sh) failed: a message over the 67108864-byte maximum message size was discarded"),
        "{message}"
    );
}

/// A manifest that does not read yet (its `version` missing) in a folder others may write is warned
/// of too: whoever may write it can make it read, and choose what runs next time.
#[test]
fn a_broken_manifest_others_may_write_is_warned_about() {
    let s = Sandboxed::new();
    let manifest = s.install_manifest(
        "broken",
        "[plugin]\nname = \"agentenv-broken\"\nexec = [\"/bin/true\"]\nprotocol = [1, 1]\n",
    );
    std::fs::set_permissions(&manifest, std::fs::Permissions::from_mode(0o666)).unwrap();
    let folder = manifest.parent().unwrap();
    std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o777)).unwrap();
    let r = s.run(&["plugin", "list"]);
    for path in [&manifest, &folder.to_path_buf()] {
        assert!(
            r.stderr
                .contains(&format!("{} can be written by other users", path.display())),
            "{}: {}",
            path.display(),
            r.stderr
        );
    }
}
