//! Ids of bundle entities (the end of `docs/protocol.md`'s Bundles section says how they are made):
//! `@local/` ids, their checks, the id root of a bundle, derived ids, and the object-key segment an id's
//! objects live under.

use std::path::Path;

use sha2::{Digest, Sha256};
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// The only namespace a bundle writes to.
pub const LOCAL_PREFIX: &str = "@local/";
/// The longest local id, in UTF-8 bytes.
pub const MAX_ID_BYTES: usize = 4096;
/// Room left for derived suffixes (`__<16 hex>` and the like): authored ids may use at most this much.
pub const MAX_AUTHORED_ID_BYTES: usize = MAX_ID_BYTES - 25;
/// Joins a base id and a suffix into a derived id, so `__` is reserved in artifact and skill names.
pub const DERIVED_SEPARATOR: &str = "__";

const PUNCTUATION: &str = " ._-~/@()+,&";

/// Checks a local id against the id rules; the error text is the user-facing problem.
pub fn check_local_id(id: &str) -> Result<(), String> {
    check_local_id_with_limit(id, MAX_ID_BYTES)
}

/// Checks an id that a bundle author wrote (it leaves room for derived suffixes).
pub fn check_authored_id(id: &str) -> Result<(), String> {
    if !id.starts_with(LOCAL_PREFIX) {
        return Err(format!(
            "'{id}': ids declared in a bundle must start with '@local/', since a bare id names an entity in a shared store"
        ));
    }
    if id.nfc().collect::<String>() != id {
        return Err(format!(
            "'{id}' is not in Unicode normal form C; write it in NFC so it names one entity"
        ));
    }
    check_local_id_with_limit(id, MAX_AUTHORED_ID_BYTES)
}

fn check_local_id_with_limit(id: &str, limit: usize) -> Result<(), String> {
    let Some(rest) = id.strip_prefix(LOCAL_PREFIX) else {
        return Err(format!("local id '{id}' must start with '@local/'"));
    };
    check_path_id("local id", "a local id", id, rest, limit)
}

/// Checks the bare id of a stored entity (`team/hello`): the path rules of a local id, without its
/// prefix (and an `@…` id is no bare id).
pub fn check_bare_id(id: &str) -> Result<(), String> {
    if id.starts_with('@') {
        return Err(format!(
            "'{id}' is an @ id; a stored entity has a bare id, such as team/hello"
        ));
    }
    check_path_id("id", "an id", id, id, MAX_ID_BYTES)
}

/// A bare id as it is read (`--id`, a task file's name): in Unicode normal form C, as every id is
/// kept, so `team/café` typed with a combining accent names the same entity as the composed one;
/// then checked as [`check_bare_id`] checks it.
pub fn bare_id(id: &str) -> Result<String, String> {
    let id: String = id.nfc().collect();
    check_bare_id(&id)?;
    Ok(id)
}

/// The rules `id` (whose path part is `rest`) keeps; `noun` and `a_noun` name it in the messages.
fn check_path_id(
    noun: &str,
    a_noun: &str,
    id: &str,
    rest: &str,
    limit: usize,
) -> Result<(), String> {
    if id.len() > limit {
        return Err(format!(
            "{noun} '{id}' is {} bytes long; {a_noun} may have at most {limit}",
            id.len()
        ));
    }
    for segment in rest.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(format!(
                "{noun} '{id}' has an empty, '.' or '..' path segment"
            ));
        }
        if segment.starts_with(' ') || segment.ends_with(' ') {
            return Err(format!(
                "{noun} '{id}' has a path segment that starts or ends with a space"
            ));
        }
    }
    let mut previous_is_word = false;
    for c in rest.chars() {
        let mark = is_combining_mark(c);
        let allowed = c.is_alphanumeric() || PUNCTUATION.contains(c) || (mark && previous_is_word);
        if !allowed || is_invisible(c) {
            return Err(format!(
                "{noun} '{id}' contains {c:?}; {a_noun} may contain only letters, digits, spaces and . _ - ~ / @ ( ) + , &"
            ));
        }
        previous_is_word = c.is_alphanumeric() || mark;
    }
    Ok(())
}

fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{034f}')
}

/// The id root of a folder bundle, from its canonical path: `@local/~/<parts>` under `home`, else
/// `@local/<absolute parts>`, each part in NFC; `None` when a part is not valid UTF-8 (such a path has
/// no id of its own). [`super::folder_id::id_root`] also refuses a path whose NFC form is another
/// folder.
pub fn folder_id_root(canonical: &Path, home: Option<&Path>) -> Option<String> {
    let parts = |p: &Path| -> Option<Vec<String>> {
        p.components()
            .filter_map(|c| match c {
                std::path::Component::Normal(s) => Some(s.to_str().map(|s| s.nfc().collect())),
                _ => None,
            })
            .collect()
    };
    if let Some(home) = home {
        if let Ok(rest) = canonical.strip_prefix(home) {
            let rest = parts(rest)?;
            if rest.is_empty() {
                return Some("@local/~".to_string());
            }
            return Some(format!("@local/~/{}", rest.join("/")));
        }
    }
    Some(format!("{LOCAL_PREFIX}{}", parts(canonical)?.join("/")))
}

/// The id root of an installed bundle: `@local/<canonical package>/<bundle name>`.
pub fn installed_id_root(package: &str, name: &str) -> String {
    format!(
        "{LOCAL_PREFIX}{}/{name}",
        agent_env_protocol::names::canonical_name(package)
    )
}

/// `<base>__<suffix>`.
pub fn derived_id(base: &str, suffix: &str) -> String {
    format!("{base}{DERIVED_SEPARATOR}{suffix}")
}

/// The first `n` hex digits of the SHA-256 of `text`.
pub fn sha256_hex_prefix(text: &[u8], n: usize) -> String {
    let digest = hex::encode(Sha256::digest(text));
    digest[..n.min(digest.len())].to_string()
}

/// The id of the `file` artifact for one file of a `file_artifact_universe`.
pub fn universe_file_id(universe_id: &str, relative_path: &str) -> String {
    derived_id(
        universe_id,
        &sha256_hex_prefix(relative_path.as_bytes(), 16),
    )
}

/// The slug used in object keys: NFKD, marks dropped, case-folded, `~` removed, runs of anything but
/// `[a-z0-9]` made one `-`, trimmed, at most 48 characters.
pub fn slug(text: &str) -> String {
    let folded: String = text
        .nfkd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .filter(|c| *c != '~')
        .collect();
    let mut out = String::new();
    let mut pending_dash = false;
    for c in folded.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            if pending_dash && !out.is_empty() {
                out.push('-');
            }
            pending_dash = false;
            out.push(c);
        } else {
            pending_dash = true;
        }
    }
    out.truncate(48);
    out.trim_end_matches('-').to_string()
}

/// The object-key segment of an id: `local/<slug>-<sha256(id)[:12]>` for an `@local` id (just
/// `local/<hash>` when the slug is empty); a bare id over 200 bytes becomes `<slug>-<hash>`, other bare
/// ids pass through.
pub fn object_key_segment(id: &str) -> String {
    let hash = sha256_hex_prefix(id.as_bytes(), 12);
    match id.strip_prefix(LOCAL_PREFIX) {
        Some(rest) => {
            let s = slug(rest);
            if s.is_empty() {
                format!("local/{hash}")
            } else {
                format!("local/{s}-{hash}")
            }
        }
        None if id.len() > 200 => format!("{}-{hash}", slug(id)),
        None => id.to_string(),
    }
}

/// The filename form of an object-key segment: the first `/` becomes `-`.
pub fn filename_segment(id: &str) -> String {
    object_key_segment(id).replacen('/', "-", 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_ids_are_paths_of_names() {
        assert!(check_bare_id("team/hello").is_ok());
        assert!(check_bare_id("hello").is_ok());
        for bad in [
            "",
            "/x",
            "x/",
            "a//b",
            "a/../b",
            ".",
            "@local/x",
            "a/ b",
            "a\u{200b}b",
        ] {
            assert!(check_bare_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_bare_id_is_read_in_nfc() {
        assert_eq!(bare_id("team/cafe\u{301}").unwrap(), "team/caf\u{e9}");
        assert_eq!(bare_id("team/hello").unwrap(), "team/hello");
        assert!(bare_id("a//b").is_err());
    }

    #[test]
    fn object_key_segments_match_the_reference_examples() {
        assert_eq!(
            object_key_segment("@local/agentenv-framework/hello/greeting"),
            "local/agentenv-framework-hello-greeting-cdbe393f04fc"
        );
        assert_eq!(
            object_key_segment("@local/agentenv-framework/hello/hello"),
            "local/agentenv-framework-hello-hello-6b8c24b53863"
        );
        assert_eq!(
            filename_segment("@local/agentenv-framework/hello/hello"),
            "local-agentenv-framework-hello-hello-6b8c24b53863"
        );
    }

    #[test]
    fn slug_folds_accents_case_and_tildes() {
        assert_eq!(slug("~/Café Ünïcode/x"), "cafe-unicode-x");
        assert_eq!(slug("~"), "");
        assert_eq!(object_key_segment("@local/~").len(), "local/".len() + 12);
        assert_eq!(slug(&"a".repeat(60)).len(), 48);
    }

    #[test]
    fn folder_ids_are_rooted_at_home_or_the_absolute_path() {
        let home = Path::new("/home/me");
        assert_eq!(
            folder_id_root(Path::new("/home/me/my-hello"), Some(home)).unwrap(),
            "@local/~/my-hello"
        );
        assert_eq!(
            folder_id_root(Path::new("/srv/b"), Some(home)).unwrap(),
            "@local/srv/b"
        );
        assert_eq!(
            folder_id_root(Path::new("/srv/cafe\u{301}"), Some(home)).unwrap(),
            "@local/srv/caf\u{e9}"
        );
        {
            use std::os::unix::ffi::OsStrExt;
            let bad = std::ffi::OsStr::from_bytes(b"/home/me/bad\xffbundle");
            assert_eq!(folder_id_root(Path::new(bad), Some(home)), None);
        }
        assert_eq!(
            installed_id_root("Demo_Installed.Bundles", "hello"),
            "@local/demo-installed-bundles/hello"
        );
    }

    #[test]
    fn id_checks_name_the_fault() {
        assert!(check_local_id("@local/a/b").is_ok());
        assert!(check_local_id("@local/a//b")
            .unwrap_err()
            .contains("has an empty, '.' or '..' path segment"));
        assert!(check_local_id("@local/a/../b").is_err());
        assert!(check_local_id("@local/a$b")
            .unwrap_err()
            .contains("a local id may contain only letters"));
        assert!(check_authored_id("x/y")
            .unwrap_err()
            .contains("must start with '@local/'"));
        assert!(check_local_id("@local/\u{0301}a").is_err());
        assert!(check_local_id("@local/e\u{0301}").is_ok());
    }

    #[test]
    fn derived_file_ids_use_a_hash_of_the_path() {
        let id = universe_file_id("@local/x/g", "hello.txt");
        assert!(id.starts_with("@local/x/g__"));
        assert_eq!(id.len(), "@local/x/g__".len() + 16);
    }
}
