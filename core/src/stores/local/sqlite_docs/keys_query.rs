//! The statement that reads a sorted listing's keys: what a connection runs to read them, and what
//! a kept order is known by.

/// A statement reading a listing's sort keys, with its parameters: two equal ones read the same
/// rows' same fields.
#[derive(Debug, Clone, PartialEq)]
pub struct KeysQuery {
    pub sql: String,
    pub args: Vec<rusqlite::types::Value>,
}
