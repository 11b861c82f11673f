//! The inputs agent-env reads from files and pipes it does not control, as fuzz targets: a plugin's
//! manifest, a config file, and one line a plugin writes on its stdout. Each target feeds the bytes to the
//! real parser and holds it to two rules: it never panics, and an error it reports is a sentence a user can
//! act on (not a serde internal such as `untagged enum` or `borrowed string`).
//!
//! The same functions run two ways: `cargo +nightly fuzz run manifest` (the `fuzz/` crate, coverage-guided
//! with libFuzzer), and on stable in this crate's test, which replays the checked-in corpus under
//! `corpus/<target>/` and a bounded number of mutations of it (`scripts/test-fuzz.sh`).

use std::path::Path;

/// Phrases of serde's own messages that must never reach a user.
const INTERNAL_PHRASES: [&str; 3] = [
    "untagged enum",
    "borrowed string",
    "data did not match any variant",
];

/// Panics when `message` leaks a serde internal instead of saying what is wrong.
fn assert_user_facing(target: &str, message: &str) {
    for phrase in INTERNAL_PHRASES {
        assert!(
            !message.contains(phrase),
            "the {target} target's error leaks a serde internal ({phrase}): {message}"
        );
    }
    assert!(
        !message.trim().is_empty(),
        "the {target} target's error is empty"
    );
}

/// A plugin manifest (`agent-env-plugin.toml`).
pub fn manifest(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("/fuzz/plugin/agent-env-plugin.toml");
    if let Err(err) = agent_env_protocol::manifest::Manifest::parse(path, text) {
        assert_user_facing("manifest", &err.to_string());
    }
}

/// A config file (`.agentenv/config.toml`), read and shown as `agent-env config show` shows it.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("/fuzz/project/.agentenv/config.toml");
    let doc = agent_env::config::document::ConfigDocument::from_text(text, path);
    if let Some(error) = &doc.error {
        assert_user_facing("config", &error.reason);
    }
    let report = agent_env::config::show::show(&doc, &[], &|_| None, Path::new("/fuzz/state"));
    for section in &report.sections {
        if let Some(error) = &section.error {
            assert_user_facing("config", error);
        }
    }
    let _ = agent_env::config::show::render_text(&report);
}

/// One line of a plugin's stdout, as the host decodes it.
pub fn line(data: &[u8]) {
    if let Err(err) = agent_env_protocol::message::Message::decode(data) {
        assert_user_facing("line", &err.to_string());
    }
}

/// A fuzz target: bytes in, a panic when a rule is broken.
pub type Target = fn(&[u8]);

/// The targets by name, as the corpus folders are named.
pub const TARGETS: [(&str, Target); 3] =
    [("manifest", manifest), ("config", config), ("line", line)];
