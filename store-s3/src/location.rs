//! `s3://<bucket>/<key>` URLs: making them from keys, and reading keys back out of them.

use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::object_key::normalize_key;

/// The URLs of one bucket.
#[derive(Debug, Clone)]
pub struct Locations {
    bucket: String,
    /// `s3://<bucket>/`.
    base: String,
}

impl Locations {
    /// URLs under `s3://<bucket>/`.
    pub fn new(bucket: &str) -> Locations {
        Locations {
            bucket: bucket.to_string(),
            base: format!("s3://{bucket}/"),
        }
    }

    /// `s3://<bucket>`, as messages name the store.
    pub fn root(&self) -> &str {
        self.base.trim_end_matches('/')
    }

    /// The key of an object write: normalized, and naming an object (not the bucket itself).
    pub fn object_key(&self, key: &str) -> StoreResult<String> {
        let normal = normalize_key(key)?;
        if normal.is_empty() {
            return Err(StoreError::InvalidValue(format!(
                "Key '{key}' names the bucket itself, not an object."
            )));
        }
        Ok(normal)
    }

    /// A key or prefix normalized, keeping a trailing `/` (a prefix of a "folder").
    pub fn prefix_key(&self, key: &str) -> StoreResult<String> {
        let normal = normalize_key(key)?;
        Ok(if key.ends_with('/') && !normal.is_empty() {
            format!("{normal}/")
        } else {
            normal
        })
    }

    /// `s3://<bucket>/<key>`.
    pub fn url(&self, key: &str) -> StoreResult<String> {
        Ok(format!("{}{}", self.base, self.prefix_key(key)?))
    }

    /// The key of one of this bucket's URLs; [`StoreError::ForeignUrl`] for any other URL.
    pub fn key_of(&self, url: &str) -> StoreResult<String> {
        let foreign =
            || StoreError::ForeignUrl(format!("'{url}' is not an object in s3://{}.", self.bucket));
        let rest = url.strip_prefix(&self.base).ok_or_else(foreign)?;
        self.prefix_key(rest).map_err(|_| foreign())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_round_trip_and_foreign_ones_are_refused() {
        let at = Locations::new("team");
        assert_eq!(at.url("a//b.json").unwrap(), "s3://team/a/b.json");
        assert_eq!(at.url("lp/").unwrap(), "s3://team/lp/");
        assert_eq!(at.key_of("s3://team/a/b.json").unwrap(), "a/b.json");
        assert_eq!(
            at.key_of("s3://other/a").unwrap_err().to_string(),
            "'s3://other/a' is not an object in s3://team."
        );
        assert!(matches!(
            at.key_of("s3://teamx/a"),
            Err(StoreError::ForeignUrl(_))
        ));
        assert!(matches!(
            at.key_of("s3://team/../x"),
            Err(StoreError::ForeignUrl(_))
        ));
        assert!(at.object_key("../x").is_err());
        assert!(at.object_key("a/..").is_err());
    }
}
