//! The plugin's answer to `initialize`, held to what the host needs: an answer at all (else why
//! not, in words: a timeout, noise on stdout, an exit, an oversized line), a protocol version the
//! host speaks, and the package name its manifest gives.
//!
//! Invariant: every way the handshake can go wrong is one [`HostError`], with the context of the
//! child as it is when the error is made (after its last stderr has settled, for a child that
//! ended); the caller stops the child and refreshes the context.

use std::path::Path;

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::InitializeResult;
use agent_env_protocol::names::canonical_name;
use agent_env_protocol::peer::CallError;
use agent_env_protocol::version::ProtocolRange;
use serde_json::Value;

use super::child::Child;
use super::describe::failure_context;
use crate::config::HostConfig;
use crate::error::{secs, FailureContext, HostError};
use crate::spec::SpawnSpec;

/// Checks `answer`, what `child` (started from `spec` as `executable`) said to `initialize`.
pub(super) fn check_handshake(
    spec: &SpawnSpec,
    executable: &Path,
    child: &Child,
    config: &HostConfig,
    answer: Result<Value, CallError>,
) -> Result<InitializeResult, HostError> {
    let ctx = || failure_context(spec, executable.display().to_string(), Some(child));
    let ours = ProtocolRange::ours();
    let value = match answer {
        Ok(value) => value,
        Err(CallError::Rpc(e)) if e.kind() == Some(ErrorKind::ProtocolMismatch) => {
            return Err(mismatch(ctx(), plugin_range_of(&e)));
        }
        // Its answer was over the size limit, so the host discarded it: that, not "an error answer".
        Err(CallError::Rpc(e)) if e.kind() == Some(ErrorKind::MessageTooLarge) => {
            return Err(HostError::MessageTooLarge {
                ctx: ctx(),
                method: "initialize".into(),
                detail: e.message,
            });
        }
        Err(CallError::Rpc(e)) => {
            return Err(HostError::HandshakeFailed {
                ctx: ctx(),
                reason: format!("it answered with error {}: {}", e.code, e.message),
            })
        }
        Err(CallError::Timeout(_)) if child.peer.noise().too_large > 0 => {
            return Err(HostError::MessageTooLarge {
                ctx: ctx(),
                method: "initialize".into(),
                detail: format!(
                    "it wrote a line over the {}-byte maximum message size, which was discarded, and no answer that fits",
                    agent_env_protocol::version::MAX_MESSAGE_BYTES
                ),
            });
        }
        // Its answer came as a line meant as a message that is none, or under the request's id
        // written as a string: failed at once, naming what is wrong.
        Err(e @ CallError::Malformed { .. }) => {
            return Err(HostError::HandshakeFailed {
                ctx: ctx(),
                reason: e.to_string(),
            });
        }
        Err(CallError::Timeout(timeout)) if child.peer.unended_bytes() > 0 => {
            return Err(HostError::HandshakeFailed {
                ctx: ctx(),
                reason: format!(
                    "no answer within {}: it wrote {} bytes on stdout without ending the line: end each message with \\n",
                    secs(timeout),
                    child.peer.unended_bytes()
                ),
            });
        }
        Err(CallError::Timeout(timeout)) => {
            if child.peer.noise().lines > 0 {
                // What it wrote instead is said once, by the message's end.
                return Err(HostError::HandshakeFailed {
                    ctx: ctx(),
                    reason: format!(
                        "no answer within {}, only output that is no protocol message",
                        secs(timeout)
                    ),
                });
            }
            return Err(HostError::HandshakeTimeout {
                ctx: ctx(),
                timeout,
                command_mode: spec.command_mode,
            });
        }
        Err(CallError::Closed(reason)) => {
            return Err(match child.exit.wait_timeout(config.grace) {
                Some(ended) => {
                    child.settle_stderr();
                    HostError::ExitedAtStart {
                        ctx: ctx(),
                        ended: ended.describe(),
                        command_mode: spec.command_mode,
                    }
                }
                None => HostError::HandshakeFailed {
                    ctx: ctx(),
                    reason: format!("it closed its stdout ({reason}) without answering"),
                },
            });
        }
        Err(e @ CallError::TooLarge { .. }) => {
            return Err(HostError::HandshakeFailed {
                ctx: ctx(),
                reason: e.to_string(),
            })
        }
    };
    let result: InitializeResult =
        serde_json::from_value(value).map_err(|e| HostError::HandshakeFailed {
            ctx: ctx(),
            reason: format!("the result is not an initialize result ({e})"),
        })?;
    if !ours.contains(result.protocol) {
        return Err(mismatch(ctx(), result.protocol.to_string()));
    }
    if canonical_name(&result.plugin.name) != canonical_name(&spec.package) {
        return Err(HostError::HandshakeFailed {
            ctx: ctx(),
            reason: format!(
                "it says it is '{}', but its manifest {} names '{}'",
                result.plugin.name,
                spec.manifest_path.display(),
                spec.package
            ),
        });
    }
    Ok(result)
}

/// The range a `protocol-mismatch` error says the plugin speaks.
fn plugin_range_of(e: &RpcError) -> String {
    e.data
        .as_ref()
        .and_then(|d| d.get("supported"))
        .and_then(|s| serde_json::from_value::<ProtocolRange>(s.clone()).ok())
        .map(|r| r.to_string())
        .unwrap_or_else(|| "(unknown)".into())
}

/// `protocol-mismatch`, with advice on which side to upgrade.
fn mismatch(ctx: Box<FailureContext>, plugin_speaks: String) -> HostError {
    let ours = ProtocolRange::ours();
    let newer = plugin_speaks
        .split('-')
        .next()
        .and_then(|v| v.parse::<u32>().ok())
        .is_some_and(|v| v > ours.max);
    let advice = if newer {
        format!("upgrade agent-env or install a version of the plugin for protocol {ours}")
    } else {
        format!("upgrade the plugin to a version for protocol {ours}")
    };
    HostError::ProtocolMismatch {
        ctx,
        plugin_speaks,
        host_speaks: ours.to_string(),
        advice,
    }
}
