//! The four store kinds, as `[stores.<kind>]` and `agent-env store check KIND` spell them.

/// One of the four store kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreKind {
    /// Write-once blobs ([`crate::ObjectStore`]).
    Object,
    /// Collections of JSON documents ([`crate::DocumentStore`]).
    Document,
    /// Container image registries ([`crate::ImageStore`]).
    Image,
    /// Named secret strings ([`crate::SecretStore`]).
    Secret,
}

impl StoreKind {
    /// Every kind, in the order commands list them.
    pub const ALL: [StoreKind; 4] = [
        StoreKind::Object,
        StoreKind::Document,
        StoreKind::Image,
        StoreKind::Secret,
    ];

    /// The kind's name: `object`, `document`, `image` or `secret`.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::Object => "object",
            StoreKind::Document => "document",
            StoreKind::Image => "image",
            StoreKind::Secret => "secret",
        }
    }

    /// The kind a name spells, or `None` for any other name.
    pub fn parse(name: &str) -> Option<StoreKind> {
        StoreKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// `AGENT_ENV_<KIND>_STORE`.
    pub fn env_var(self) -> String {
        format!("AGENT_ENV_{}_STORE", self.as_str().to_uppercase())
    }
}

impl std::fmt::Display for StoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
