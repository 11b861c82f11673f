//! A credential a config reads from an `AGENT_ENV_*` variable: agent-env hands every plugin it starts
//! its own `AGENT_ENV_*` variables, so such a value reaches every plugin, not only the store or the
//! plugin whose setting names it. `config check` warns of each.

use toml::{Table, Value};

use super::secret_names::is_secret_key;

/// The prefix of the variables every plugin is handed.
const HANDED_TO_PLUGINS: &str = "env:AGENT_ENV_";

/// One warning for each setting of a secret (a secret-like key, or a `dsn`, which holds a
/// password) whose value is an `env:AGENT_ENV_…` reference, in the document's order.
pub fn credentials_in_plugins_variables(table: &Table) -> Vec<String> {
    let mut found = Vec::new();
    walk(&mut Vec::new(), table, &mut found);
    found
}

fn walk<'t>(path: &mut Vec<&'t str>, table: &'t Table, found: &mut Vec<String>) {
    for (key, value) in table {
        path.push(key);
        match value {
            Value::Table(inner) => walk(path, inner, found),
            Value::String(text) if holds_a_secret(key) && text.starts_with(HANDED_TO_PLUGINS) => {
                let variable = text
                    .trim_start_matches("env:")
                    .split('?')
                    .next()
                    .unwrap_or_default();
                let (setting, section) = path.split_last().map_or(("", &[][..]), |(k, s)| (*k, s));
                found.push(format!(
                    "[{}] {setting} reads {variable}: agent-env hands its AGENT_ENV_* variables to every plugin it starts, so this credential reaches them all; keep it in a variable of another name (env:{}) or in the secret store (secret:NAME)",
                    section.join("."),
                    variable.trim_start_matches("AGENT_ENV_")
                ));
            }
            _ => {}
        }
        path.pop();
    }
}

/// Whether a setting of this name holds a secret.
fn holds_a_secret(key: &str) -> bool {
    is_secret_key(key) || key.eq_ignore_ascii_case("dsn")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_in_an_agent_env_variable_is_warned_of_and_others_are_not() {
        let table: Table = toml::from_str(
            r#"
[stores.document.config]
dsn = "env:AGENT_ENV_TEAM_PG"
[stores.object.config]
root = "env:AGENT_ENV_ROOT"
secret_access_key = "env:TEAM_S3_SECRET"
[plugins.agentenv-grader]
api_key = "env:AGENT_ENV_GRADER_KEY?none"
"#,
        )
        .unwrap();
        let found = credentials_in_plugins_variables(&table);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0].starts_with(
                "[stores.document.config] dsn reads AGENT_ENV_TEAM_PG: agent-env hands"
            ),
            "{}",
            found[0]
        );
        assert!(
            found[0].contains("another name (env:TEAM_PG)"),
            "{}",
            found[0]
        );
        assert!(
            found[1].starts_with("[plugins.agentenv-grader] api_key reads AGENT_ENV_GRADER_KEY:")
        );
    }
}
