//! The protocol versions a plugin's process says it speaks when it refuses the handshake (an
//! `initialize` answered with `protocol-mismatch` and the range it supports), held to the range its
//! manifest declares: a manifest that claims what its process does not speak is a manifest finding,
//! saying which of the two to fix. (A plugin that answers with a version outside the host's range
//! broke the handshake, which says nothing of the range it speaks: `initialize` fails alone.)

use std::path::Path;

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::version::ProtocolRange;

use super::conversation::Answer;

/// The range the process said it speaks in `answer`, when it refused the handshake over the
/// protocol: the `supported` of a `protocol-mismatch` error.
pub(super) fn refused_with(answer: &Answer) -> Option<ProtocolRange> {
    match answer {
        Answer::Error(e) if e.code == ErrorKind::ProtocolMismatch.code() => e
            .data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .and_then(|s| serde_json::from_value::<ProtocolRange>(s.clone()).ok()),
        _ => None,
    }
}

/// Where the manifest at `manifest_path` disagrees with `spoken`, what its process says it speaks,
/// as a manifest finding says it; `None` when they agree (or the manifest cannot be read: the
/// command that found it read it a moment ago).
pub(super) fn disagreement(manifest_path: &Path, spoken: ProtocolRange) -> Option<String> {
    let manifest = Manifest::load(manifest_path).ok()?;
    disagreement_with(&manifest.protocol, spoken, ProtocolRange::ours())
}

/// As [`disagreement`], for a manifest declaring `declared` and a host speaking `ours`.
fn disagreement_with(
    declared: &ProtocolRange,
    spoken: ProtocolRange,
    ours: ProtocolRange,
) -> Option<String> {
    let claimed = format!(
        "[plugin] protocol: the manifest says the plugin speaks protocol {declared}, but its process \
         answered initialize that it speaks {spoken}"
    );
    let as_written = format!("[{}, {}]", spoken.min, spoken.max);
    match ours.negotiate(declared) {
        // The manifest promises a version the host speaks and the process does not keep it: the
        // process is what is out of step (an SDK or a build for another protocol, say).
        Some(version) => Some(format!(
            "{claimed}; agent-env speaks {ours} and goes by the manifest, so fix the plugin: make it \
             speak protocol {version} as its manifest says (built against an SDK for protocol {version}); \
             if it is meant for protocol {spoken}, set the manifest's protocol to {as_written} instead, \
             and it needs an agent-env that speaks it"
        )),
        None if declared.min <= spoken.min && spoken.max <= declared.max => None,
        // Neither speaks the host's: the manifest misstates its own process.
        None => Some(format!(
            "{claimed}; fix the manifest: set its protocol to {as_written}, what the plugin speaks \
             (this agent-env speaks {ours}, so it needs a plugin version for protocol {ours} to run here)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_env_protocol::message::RpcError;
    use serde_json::json;

    fn range(min: u32, max: u32) -> ProtocolRange {
        ProtocolRange { min, max }
    }

    #[test]
    fn a_mismatch_error_says_the_range_the_process_speaks() {
        let mut e = RpcError::new(ErrorKind::ProtocolMismatch, "no protocol in common");
        e.data = Some(json!({"kind": "protocol-mismatch", "supported": {"min": 2, "max": 3}}));
        assert_eq!(refused_with(&Answer::Error(e)), Some(range(2, 3)));
        // An answer is no refusal, and a mismatch without its range says nothing.
        assert_eq!(refused_with(&Answer::Result(json!({"protocol": 99}))), None);
        let bare = RpcError::new(ErrorKind::ProtocolMismatch, "no");
        assert_eq!(refused_with(&Answer::Error(bare)), None);
    }

    #[test]
    fn a_manifest_the_host_can_speak_and_a_process_that_cannot_is_the_plugins_to_fix() {
        let said = disagreement_with(&range(1, 1), range(2, 3), range(1, 1)).unwrap();
        assert!(
            said.starts_with(
                "[plugin] protocol: the manifest says the plugin speaks protocol 1, but its process \
                 answered initialize that it speaks 2-3; agent-env speaks 1 and goes by the manifest, \
                 so fix the plugin: make it speak protocol 1"
            ),
            "{said}"
        );
        assert!(
            said.contains("set the manifest's protocol to [2, 3] instead"),
            "{said}"
        );
    }

    #[test]
    fn a_manifest_that_misstates_a_process_neither_can_run_here_is_the_manifests_to_fix() {
        let said = disagreement_with(&range(4, 4), range(2, 3), range(1, 1)).unwrap();
        assert!(
            said.contains("fix the manifest: set its protocol to [2, 3]"),
            "{said}"
        );
        // A manifest that says what the process speaks is right, though the host speaks neither.
        assert_eq!(
            disagreement_with(&range(2, 3), range(2, 3), range(1, 1)),
            None
        );
    }
}
