//! How a peer is set up: its name, its message size limit and who reads.

use crate::version::MAX_MESSAGE_BYTES;

/// Which threads read the incoming stream (see the `peer` module's docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReaderMode {
    /// A pool thread always reads; requests run on the thread that read them.
    #[default]
    Dedicated,
    /// Only callers read, while they wait for their answers.
    Callers,
}

/// Settings of one peer.
#[derive(Debug, Clone)]
pub struct PeerConfig {
    /// Used to name threads, e.g. the plugin's package.
    pub name: String,
    /// The longest line read or written, newline excluded.
    pub max_message_bytes: usize,
    /// Who reads the incoming stream.
    pub mode: ReaderMode,
}

impl Default for PeerConfig {
    fn default() -> Self {
        PeerConfig {
            name: "peer".into(),
            max_message_bytes: MAX_MESSAGE_BYTES,
            mode: ReaderMode::Dedicated,
        }
    }
}
