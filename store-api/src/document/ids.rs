//! The id rules document stores hold entity ids to.

use crate::error::{StoreError, StoreResult};

/// Refuses ids with the reserved `@` prefix: `@local/…` ids live only in the @local namespace's store,
/// and any other `@…` names a registry-qualified id.
pub fn check_id(id: &str) -> StoreResult<()> {
    if id.starts_with("@local/") {
        return Err(StoreError::InvalidValue(format!(
            "id '{id}' is an @local id, which only the @local namespace's store holds; the agent-env CLI writes @local ids there"
        )));
    }
    if id.starts_with('@') {
        return Err(StoreError::InvalidValue(format!(
            "id '{id}' starts with the reserved '@' prefix: that addresses a registry-qualified name (@namespace/id), so a local id cannot use it"
        )));
    }
    Ok(())
}

/// The SQLite store's extra rule: a bare id spelled like an encoded @local id (`local/…`, or the filename
/// form `local-<slug>-<12 hex>`) would share that id's objects, images and files.
pub fn check_not_encoded_local(id: &str) -> StoreResult<()> {
    if id.starts_with("local/") || is_encoded_filename(id) {
        return Err(StoreError::InvalidValue(format!(
            "id '{id}' is spelled like an encoded @local id, so it would share that id's objects, images and files; a bare id in a local store can't start with 'local/' or 'local-<name>-<12 hex>'"
        )));
    }
    Ok(())
}

fn is_encoded_filename(id: &str) -> bool {
    let Some(rest) = id.strip_prefix("local-") else {
        return false;
    };
    let (slug, hash) = match rest.rsplit_once('-') {
        Some((slug, hash)) => (slug, hash),
        None => ("", rest),
    };
    let slug_ok = slug
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    let hash_ok = hash.len() == 12
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    slug_ok && hash_ok
}

/// The @local namespace's store holds only @local ids.
pub fn check_local_namespace_id(id: &str) -> StoreResult<()> {
    if id.starts_with("@local/") {
        Ok(())
    } else {
        Err(StoreError::InvalidValue(format!(
            "id '{id}' isn't an @local id, and the @local namespace's store holds only those"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_and_encoded_ids_are_refused() {
        assert!(check_id("@local/a/b")
            .unwrap_err()
            .to_string()
            .contains("is an @local id"));
        assert!(check_id("@acme/x")
            .unwrap_err()
            .to_string()
            .contains("reserved '@' prefix"));
        assert!(check_id("plain").is_ok());
        assert!(check_not_encoded_local("local/x").is_err());
        assert!(
            check_not_encoded_local("local-agentenv-framework-hello-greeting-cdbe393f04fc")
                .is_err()
        );
        assert!(check_not_encoded_local("local-tools").is_ok());
        assert!(check_not_encoded_local("locality").is_ok());
        assert!(check_local_namespace_id("x").is_err());
    }
}
