//! What `agent-env config check` asks the server beyond a login: whether the dsn's user may create the
//! store's tables and write those already there (another user's, on a shared database), read-only (the
//! privilege functions of the catalog), so that a user who may log in but not create or write tables is
//! told so before any work instead of at the first write.

use agent_env_store::error::{StoreError, StoreResult};

use crate::blocking::Connection;
use crate::errors::pg_error;
use crate::CLASS;

/// The user, the database, and what the user may do in the schema (or in the database, when the schema
/// does not exist yet: the store creates it on first use); then the store's tables there (`docs_*`)
/// the user may not read and write, and those whose id sequence it may not use (an insert needs it).
const PRIVILEGES: &str = "SELECT current_user::text, current_database()::text, n.oid IS NOT NULL, \
     coalesce(has_schema_privilege(n.oid, 'CREATE') AND has_schema_privilege(n.oid, 'USAGE'), false), \
     has_database_privilege(current_database(), 'CREATE'), \
     coalesce((SELECT array_agg(c.relname::text ORDER BY c.relname) FROM pg_catalog.pg_class AS c \
       WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND c.relname LIKE 'docs\\_%' \
       AND NOT (has_table_privilege(c.oid, 'SELECT') AND has_table_privilege(c.oid, 'INSERT') \
         AND has_table_privilege(c.oid, 'UPDATE') AND has_table_privilege(c.oid, 'DELETE'))), '{}'), \
     coalesce((SELECT array_agg(s.relname::text ORDER BY s.relname) FROM pg_catalog.pg_class AS s \
       WHERE s.relnamespace = n.oid AND s.relkind = 'S' AND s.relname LIKE 'docs\\_%' \
       AND CASE WHEN s.relkind = 'S' THEN NOT has_sequence_privilege(s.oid, 'USAGE') END), '{}') \
     FROM (SELECT $1::text AS name) AS wanted \
     LEFT JOIN pg_catalog.pg_namespace AS n ON n.nspname = wanted.name";

/// What the server said about the user's privileges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Privileges {
    /// The user the dsn logs in as.
    pub user: String,
    /// The database the dsn names.
    pub database: String,
    /// Whether the schema exists.
    pub schema_exists: bool,
    /// Whether the user may create tables in the schema and use it (`CREATE` and `USAGE`).
    pub may_create_in_schema: bool,
    /// Whether the user may create schemas in the database (`CREATE` on the database).
    pub may_create_schema: bool,
    /// The store's tables in the schema the user may not read and write (`SELECT`, `INSERT`,
    /// `UPDATE`, `DELETE`): another user's, on a shared database.
    pub tables_not_writable: Vec<String>,
    /// The id sequences of the store's tables the user may not use (`USAGE`), which an insert needs.
    pub sequences_not_usable: Vec<String>,
}

/// Asks the server what the user may do in `schema`.
pub fn privileges(client: &Connection, shown: &str, schema: &str) -> StoreResult<Privileges> {
    let row = client
        .query_one(PRIVILEGES, &[&schema])
        .map_err(|e| pg_error(shown, &e))?;
    Ok(Privileges {
        user: row.get(0),
        database: row.get(1),
        schema_exists: row.get(2),
        may_create_in_schema: row.get(3),
        may_create_schema: row.get(4),
        tables_not_writable: row.get(5),
        sequences_not_usable: row.get(6),
    })
}

/// The problem with the user's privileges, naming the user, the schema and the grant to ask for; `None`
/// when the store can create its tables.
pub fn problem(found: &Privileges, shown: &str, schema: &str) -> Option<StoreError> {
    let user = identifier(&found.user);
    let message = if found.schema_exists {
        if found.may_create_in_schema {
            return not_writable(found, shown, schema);
        }
        format!(
            "{CLASS}: on {shown}, the dsn's user '{}' may not create tables in the schema '{schema}', so the first write would fail; ask the database's administrator for GRANT USAGE, CREATE ON SCHEMA {} TO {user}, or name a schema the user owns in schema",
            found.user,
            identifier(schema)
        )
    } else if schema == "public" {
        format!(
            "{CLASS}: {shown} has no schema 'public', which the store keeps its tables in; ask the database's administrator to create it (CREATE SCHEMA public AUTHORIZATION {user}), or name an existing schema in schema"
        )
    } else {
        if found.may_create_schema {
            return None;
        }
        format!(
            "{CLASS}: on {shown}, the schema '{schema}' does not exist and the dsn's user '{}' may not create it, so the first write would fail; ask the database's administrator to create it (CREATE SCHEMA {} AUTHORIZATION {user}) or for GRANT CREATE ON DATABASE {} TO {user}",
            found.user,
            identifier(schema),
            identifier(&found.database)
        )
    };
    Some(StoreError::Config(message))
}

/// The problem with the tables already in the schema (another user made them), naming them and the
/// grants to ask for; `None` when the user may read and write each.
fn not_writable(found: &Privileges, shown: &str, schema: &str) -> Option<StoreError> {
    if found.tables_not_writable.is_empty() && found.sequences_not_usable.is_empty() {
        return None;
    }
    let (user, in_schema) = (identifier(&found.user), identifier(schema));
    let shown_names = named_apart(&found.tables_not_writable, &found.sequences_not_usable);
    Some(StoreError::Config(format!(
        "{CLASS}: on {shown}, the dsn's user '{}' may create tables in the schema '{schema}' but not write the store's tables already there, which another user made ({shown_names}), so reads or writes would fail; ask the database's administrator for GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {in_schema} TO {user} and GRANT USAGE ON ALL SEQUENCES IN SCHEMA {in_schema} TO {user}, or use the user that made them",
        found.user
    )))
}

/// The tables and the sequences, named apart (a sequence is no table the user would look for):
/// `the tables docs_a and docs_b with their id sequences`, or, when a sequence is not one of those
/// tables' own, `the table docs_a; the id sequence docs_b_id_seq`.
fn named_apart(tables: &[String], sequences: &[String]) -> String {
    let tables_part = match tables.len() {
        0 => None,
        1 => Some(format!("the table {}", listed(tables))),
        _ => Some(format!("the tables {}", listed(tables))),
    };
    let own = |sequence: &String| tables.iter().any(|t| *sequence == format!("{t}_id_seq"));
    let sequences_part = match sequences.len() {
        0 => None,
        _ if sequences.iter().all(own) && tables.len() == 1 => Some("its id sequence".to_string()),
        _ if sequences.iter().all(own) => Some("their id sequences".to_string()),
        1 => Some(format!("the id sequence {}", listed(sequences))),
        _ => Some(format!("the id sequences {}", listed(sequences))),
    };
    match (tables_part, sequences_part) {
        (Some(t), Some(s)) if sequences.iter().all(own) => format!("{t} with {s}"),
        (Some(t), Some(s)) => format!("{t}; {s}"),
        (Some(one), None) | (None, Some(one)) => one,
        (None, None) => String::new(),
    }
}

/// A few names: `a`, `a and b`, `a, b, c and d`, or the first three and how many more.
fn listed(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        _ if names.len() > 4 => format!("{} and {} more", names[..3].join(", "), names.len() - 3),
        [first @ .., last] => format!("{} and {last}", first.join(", ")),
    }
}

/// A name as SQL reads it: as it is when it is a plain lower-case identifier, else in double quotes.
fn identifier(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        name.to_string()
    } else {
        crate::sql::quote(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(schema_exists: bool, in_schema: bool, in_database: bool) -> Privileges {
        Privileges {
            user: "Reader".into(),
            database: "team".into(),
            schema_exists,
            may_create_in_schema: in_schema,
            may_create_schema: in_database,
            tables_not_writable: Vec::new(),
            sequences_not_usable: Vec::new(),
        }
    }

    #[test]
    fn a_user_who_may_create_what_the_store_needs_has_no_problem() {
        assert!(problem(&found(true, true, false), "h:5432/team", "agents").is_none());
        assert!(problem(&found(false, false, true), "h:5432/team", "agents").is_none());
    }

    #[test]
    fn tables_another_user_made_are_named_a_few_at_a_time() {
        let mut f = found(true, true, false);
        f.tables_not_writable = ["docs_a", "docs_b", "docs_c", "docs_d"]
            .map(String::from)
            .to_vec();
        f.sequences_not_usable = vec!["docs_a_id_seq".into()];
        let text = problem(&f, "h:5432/team", "public").unwrap().to_string();
        assert!(
            text.contains(
                "already there, which another user made (the tables docs_a, docs_b, docs_c and docs_d with their id sequences), so"
            ),
            "{text}"
        );
        assert!(text.contains("GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO \"Reader\""));
    }

    /// Sequences are named apart from tables, and never counted among them.
    #[test]
    fn sequences_are_named_apart_from_tables() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            named_apart(
                &names(&["docs_artifacts", "docs_task_instances", "docs_tasks"]),
                &names(&[
                    "docs_artifacts_id_seq",
                    "docs_task_instances_id_seq",
                    "docs_tasks_id_seq"
                ])
            ),
            "the tables docs_artifacts, docs_task_instances and docs_tasks with their id sequences"
        );
        assert_eq!(
            named_apart(&names(&["docs_tasks"]), &names(&["docs_tasks_id_seq"])),
            "the table docs_tasks with its id sequence"
        );
        assert_eq!(
            named_apart(&names(&["docs_a"]), &names(&["docs_b_id_seq"])),
            "the table docs_a; the id sequence docs_b_id_seq"
        );
        assert_eq!(
            named_apart(&[], &names(&["docs_a_id_seq", "docs_b_id_seq"])),
            "the id sequences docs_a_id_seq and docs_b_id_seq"
        );
        assert_eq!(
            named_apart(
                &names(&["docs_a", "docs_b", "docs_c", "docs_d", "docs_e", "docs_f"]),
                &[]
            ),
            "the tables docs_a, docs_b, docs_c and 3 more"
        );
    }

    #[test]
    fn each_missing_privilege_names_the_user_the_schema_and_the_grant() {
        let text = |f: Privileges, schema: &str| {
            problem(&f, "h:5432/team", schema)
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert_eq!(
            text(found(true, false, true), "public"),
            "PostgresDocumentStore: on h:5432/team, the dsn's user 'Reader' may not create tables in the schema 'public', so the first write would fail; ask the database's administrator for GRANT USAGE, CREATE ON SCHEMA public TO \"Reader\", or name a schema the user owns in schema"
        );
        assert_eq!(
            text(found(false, false, false), "agent-env"),
            "PostgresDocumentStore: on h:5432/team, the schema 'agent-env' does not exist and the dsn's user 'Reader' may not create it, so the first write would fail; ask the database's administrator to create it (CREATE SCHEMA \"agent-env\" AUTHORIZATION \"Reader\") or for GRANT CREATE ON DATABASE team TO \"Reader\""
        );
        assert!(text(found(false, false, true), "public").contains("has no schema 'public'"));
    }
}
