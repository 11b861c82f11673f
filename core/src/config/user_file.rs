//! A user-level config file agent-env does not read: `$XDG_CONFIG_HOME/agent-env/config.toml`
//! (else `~/.config/agent-env/config.toml`). agent-env reads the nearest `.agentenv/config.toml`
//! walking up, or the file `$AGENT_ENV_CONFIG` names, and nothing else; a user who wrote settings
//! in the usual place for them is told so by the config commands (one `stat`), not left to wonder
//! why none of them applies.

use super::document::ConfigDocument;
use super::locate::CONFIG_VAR;
use crate::paths::Paths;
use std::path::{Path, PathBuf};

/// Where a user would put agent-env's config by the XDG convention.
pub fn user_config_path(doc: &ConfigDocument) -> Option<PathBuf> {
    let base = doc
        .env
        .var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| Paths::new(&doc.env).home_dir().map(|h| h.join(".config")))?;
    Some(base.join("agent-env").join("config.toml"))
}

/// The user-level config file, when one is there and is not the file in effect.
pub fn unread_user_config(doc: &ConfigDocument) -> Option<PathBuf> {
    let path = user_config_path(doc)?;
    std::fs::symlink_metadata(&path).ok()?;
    let in_effect = doc
        .path
        .as_deref()
        .is_some_and(|chosen| same_file(chosen, &path));
    (!in_effect).then_some(path)
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(a), Ok(b)) if a == b
        )
}

/// Why a user-level config file is not in effect, and what to do.
pub fn why_not_read() -> String {
    format!(
        "not read: agent-env reads the nearest .agentenv/config.toml walking up from the working folder, or the file ${CONFIG_VAR} names; point {CONFIG_VAR} at it to use it"
    )
}

/// What the config commands say of an unread user-level config file.
pub fn not_read_note(path: &Path) -> String {
    format!("{} is {}", path.display(), why_not_read())
}

/// [`not_read_note`] for `doc`'s environment, when there is such a file.
pub fn unread_user_config_note(doc: &ConfigDocument) -> Option<String> {
    unread_user_config(doc).map(|path| not_read_note(&path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::Environment;
    use std::sync::Arc;

    fn doc_in(vars: &[(&str, &Path)], cwd: &Path) -> ConfigDocument {
        let env = Environment::from_vars(
            vars.iter()
                .map(|(k, v)| (k.to_string(), v.display().to_string())),
            cwd,
        );
        let chosen = env.var_os(CONFIG_VAR).map(Into::into);
        ConfigDocument::load_from(chosen, Arc::new(env))
    }

    #[test]
    fn a_user_file_is_named_until_agent_env_config_points_at_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let xdg = root.join("xdg");
        let file = xdg.join("agent-env/config.toml");
        let work = root.join("work");
        std::fs::create_dir_all(&work).unwrap();
        let doc = doc_in(&[("XDG_CONFIG_HOME", &xdg)], &work);
        assert_eq!(unread_user_config(&doc), None, "no file, nothing to say");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "[stores\n").unwrap();
        let doc = doc_in(&[("XDG_CONFIG_HOME", &xdg)], &work);
        assert_eq!(unread_user_config(&doc), Some(file.clone()));
        let doc = doc_in(
            &[("XDG_CONFIG_HOME", &xdg), ("AGENT_ENV_CONFIG", &file)],
            &work,
        );
        assert_eq!(unread_user_config(&doc), None, "it is the file in effect");
    }

    #[test]
    fn without_xdg_config_home_the_file_is_under_the_home_folder() {
        let dir = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap();
        let doc = doc_in(&[("HOME", &home)], &home);
        assert_eq!(
            user_config_path(&doc),
            Some(home.join(".config/agent-env/config.toml"))
        );
        assert_eq!(
            not_read_note(Path::new("/h/.config/agent-env/config.toml")),
            "/h/.config/agent-env/config.toml is not read: agent-env reads the nearest .agentenv/config.toml walking up from the working folder, or the file $AGENT_ENV_CONFIG names; point AGENT_ENV_CONFIG at it to use it"
        );
    }
}
