//! The tables and keys agent-env reads, as a tree: it drives the unread-key warnings of `config show`.

/// What agent-env expects at one node of the document.
#[derive(Debug, Clone, Copy)]
pub enum Node {
    /// A value agent-env reads as is.
    Leaf,
    /// A table agent-env does not descend into (a seam's `config`, `[plugins]`, `[model.params]`).
    FreeForm,
    /// A table with these keys.
    Table(&'static [(&'static str, Node)]),
    /// A table whose keys are names the user picks, each holding the node given.
    Named(&'static Node),
    /// An aliased store section or a provider entry: a string, or a table with `impl` and `config`.
    Seam,
}

impl Node {
    /// The known keys of a table node.
    pub fn keys(&self) -> Vec<&'static str> {
        match self {
            Node::Table(entries) => entries.iter().map(|(k, _)| *k).collect(),
            Node::Seam => SEAM_KEYS.to_vec(),
            _ => Vec::new(),
        }
    }

    /// The node of a child key, when agent-env reads it.
    pub fn child(&self, key: &str) -> Option<Node> {
        match self {
            Node::Table(entries) => entries.iter().find(|(k, _)| *k == key).map(|(_, n)| *n),
            Node::Named(node) => Some(**node),
            Node::Seam => match key {
                "impl" => Some(Node::Leaf),
                "config" => Some(Node::FreeForm),
                _ => None,
            },
            _ => None,
        }
    }
}

/// The two keys of a seam table.
pub const SEAM_KEYS: [&str; 2] = ["impl", "config"];

const PROVIDERS: Node = Node::Named(&Node::Seam);

/// The top-level tables agent-env reads and what each holds.
pub const TOP_LEVEL: &[(&str, Node)] = &[
    (
        "stores",
        Node::Table(&[
            ("document", Node::Seam),
            ("object", Node::Seam),
            ("image", Node::Seam),
            ("secret", Node::Seam),
        ]),
    ),
    ("runner", Node::Seam),
    (
        "model",
        Node::Table(&[
            ("base_url", Node::Leaf),
            ("api_key", Node::Leaf),
            ("default", Node::Leaf),
            ("roles", Node::FreeForm),
            ("params", Node::FreeForm),
            ("headers", Node::FreeForm),
        ]),
    ),
    (
        "conversations",
        Node::Table(&[("default_human_a2a_url", Node::Leaf)]),
    ),
    (
        "agents",
        Node::Table(&[("default_a2a_agent_id", Node::Leaf)]),
    ),
    (
        "sandbox",
        Node::Table(&[
            ("default", Node::Leaf),
            ("agent_default", Node::Leaf),
            ("attribution", Node::FreeForm),
            ("providers", PROVIDERS),
        ]),
    ),
    ("state", Node::Table(&[("providers", PROVIDERS)])),
    ("envs", Node::Table(&[("impls", Node::Leaf)])),
    ("task_steps", Node::Table(&[("impls", Node::Leaf)])),
    (
        "artifacts",
        Node::Table(&[("impls", Node::Leaf), ("type_aliases", Node::FreeForm)]),
    ),
    (
        "explorer",
        Node::Table(&[
            ("port", Node::Leaf),
            ("cors_origins", Node::Leaf),
            ("allowed_hosts", Node::Leaf),
            ("static_dir", Node::Leaf),
            ("plugin_timeout_seconds", Node::Leaf),
            ("plugin_idle_seconds", Node::Leaf),
            ("store_retry_seconds", Node::Leaf),
            ("plugins", Node::Table(&[("impls", Node::Leaf)])),
        ]),
    ),
    ("plugins", Node::FreeForm),
];

/// Whether a table's keys it does not take are refused (a problem `config check` reports, from
/// [`super::registrations::check_agents`]) rather than left unread (a warning): `[agents]`, as in the
/// original. Such a key is said once, as the problem.
pub fn refuses_unknown_keys(path: &[&str]) -> bool {
    path == ["agents"]
}

/// The node of a top-level table.
pub fn top_level(name: &str) -> Option<Node> {
    TOP_LEVEL.iter().find(|(k, _)| *k == name).map(|(_, n)| *n)
}

/// The names of the top-level tables.
pub fn top_level_names() -> impl Iterator<Item = &'static str> {
    TOP_LEVEL.iter().map(|(k, _)| *k)
}

/// The first top-level table that takes a key of this name directly (for a stray top-level key).
pub fn table_taking(key: &str) -> Option<&'static str> {
    TOP_LEVEL
        .iter()
        .find(|(_, node)| node.keys().contains(&key))
        .map(|(name, _)| *name)
}
