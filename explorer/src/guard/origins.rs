//! A request's `Origin`, read as `[explorer] cors_origins` reads an entry (`scheme://host[:port]` over
//! http or https, the scheme and host lowercased, a trailing `/` and a default port dropped), and what
//! a refused one is told: a change to the config that would let it in and that the config accepts, or,
//! when no entry can (`null`, another scheme, a path), why not.
//!
//! Comparing origins in this one form is safe: a browser always sends an origin in it (lowercase, no
//! trailing `/`, no default port), so another spelling comes from a client that is no browser, which
//! could as well send the allowed origin as it is; the guard's origin checks keep web pages out, and
//! merging spellings of one origin lets in no page they refused.

use agent_env::config::explorer::{origin, SettingsError};

/// What an `Origin` header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `scheme://host[:port]` in the form the config keeps its entries in.
    Site(String),
    /// `null`: a page opened from a file, in a sandboxed frame, or reached by a redirect across sites.
    Null,
    /// Something no `cors_origins` entry can match, and why.
    Unlistable(&'static str),
}

impl Origin {
    /// Reads an `Origin` header's value, as the config reads a `cors_origins` entry.
    pub fn read(sent: &str) -> Origin {
        match origin(sent) {
            Ok(site) => Origin::Site(site),
            Err(SettingsError::NullOrigin) => Origin::Null,
            Err(SettingsError::BadOrigin { why, .. }) => Origin::Unlistable(why),
            Err(SettingsError::WildcardOrigin) => {
                Origin::Unlistable("an origin is one site, not a pattern")
            }
            Err(_) => Origin::Unlistable("it is no origin"),
        }
    }

    /// The origin in the config's form, if it is one a `cors_origins` entry can name.
    pub fn site(&self) -> Option<&str> {
        match self {
            Origin::Site(site) => Some(site),
            _ => None,
        }
    }
}

/// What a page of another origin (`sent`, as the request carried it; none when it carried no
/// `Origin`) must be for the explorer to answer it: named in `cors_origins`, when it can be.
pub fn how_to_allow(sent: Option<&str>) -> String {
    let Some(sent) = sent else {
        return "a page on another site may call the API only from an origin listed in .agentenv/config.toml under [explorer] as cors_origins".to_string();
    };
    match Origin::read(sent) {
        Origin::Site(site) => format!(
            "origin '{sent}' is not allowed; to allow it, list it in .agentenv/config.toml under [explorer] as cors_origins = [\"{site}\"] and start agent-env up again"
        ),
        Origin::Null => "origin 'null' cannot be allowed: a browser sends it for a page opened from a file or in a sandboxed frame, so letting it in would let any such page drive the explorer (cors_origins refuses 'null'); serve the page over http or https and list its origin in .agentenv/config.toml under [explorer] as cors_origins, or open it from the explorer itself".to_string(),
        Origin::Unlistable(why) => format!(
            "origin '{sent}' cannot be allowed: {why}, and [explorer] cors_origins lists only such origins; call the API from a page served over http or https whose origin is listed there"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_read_in_the_form_the_config_keeps() {
        for (sent, site) in [
            ("http://127.0.0.1:8234", "http://127.0.0.1:8234"),
            ("http://127.0.0.1:8234/", "http://127.0.0.1:8234"),
            ("HTTP://LocalHost:8234", "http://localhost:8234"),
            ("https://dash.example:443", "https://dash.example"),
            ("http://a.example:80/", "http://a.example"),
            ("http://[::1]:3000", "http://[::1]:3000"),
        ] {
            assert_eq!(Origin::read(sent), Origin::Site(site.to_string()), "{sent}");
        }
        assert_eq!(Origin::read("null"), Origin::Null);
        assert_eq!(Origin::read("NULL"), Origin::Null);
        for unlistable in [
            "file://",
            "chrome-extension://abc",
            "localhost:8234",
            "http://a.example/path",
            "http://user@a.example",
            "http://*.example",
            "http://a.example:0",
            "http://a.example:x",
            "http://",
            "*",
        ] {
            assert!(
                matches!(Origin::read(unlistable), Origin::Unlistable(_)),
                "{unlistable}"
            );
        }
    }

    #[test]
    fn the_advice_names_only_what_the_config_accepts() {
        assert_eq!(
            how_to_allow(Some("HTTPS://Evil.Example/")),
            "origin 'HTTPS://Evil.Example/' is not allowed; to allow it, list it in .agentenv/config.toml under [explorer] as cors_origins = [\"https://evil.example\"] and start agent-env up again"
        );
        let null = how_to_allow(Some("null"));
        assert!(
            null.starts_with("origin 'null' cannot be allowed: a browser sends it for a page opened from a file or in a sandboxed frame")
                && !null.contains("cors_origins = ["),
            "{null}"
        );
        let extension = how_to_allow(Some("chrome-extension://abc"));
        assert_eq!(
            extension,
            "origin 'chrome-extension://abc' cannot be allowed: the explorer lets in pages served over http or https only, and [explorer] cors_origins lists only such origins; call the API from a page served over http or https whose origin is listed there"
        );
    }
}
