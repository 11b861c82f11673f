//! The package index URLs `plugin add` hands pip (`--index-url`, `--extra-index-url`): the
//! credentials one carries remembered as secret (and masked by their place, whatever their length,
//! wherever the plan shows the URL), and one pip cannot read refused before anything changes.

use crate::cli::Failure;

/// Remembers as secret what an index URL carries before its host: the password of `user:password@`,
/// or the whole of `token@` (a token as the user name, as many private indexes take it).
pub(super) fn remember_index_credentials(url: &str) {
    crate::redaction::remember_setting(url, false, false);
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        match userinfo.split_once(':') {
            Some((_, password)) => crate::redaction::remember(password),
            None => crate::redaction::remember(userinfo),
        }
    }
}

/// An index URL pip can read (`http://`, `https://` or `file://`): anything else is refused before
/// anything changes (pip only warns, then fails on what it could not find).
pub(super) fn check_index_url(flag: &str, url: &str) -> Result<(), Failure> {
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("http" | "https" | "file") => Ok(()),
        _ => Err(Failure::new(format!(
            "{flag} '{}' is not an index pip can read: give its whole URL, starting with https://, http:// or file:// (such as https://pypi.example.internal/simple)",
            shown(url)
        ))
        .with_code(2)),
    }
}

/// `url` as a message shows it: the credentials before its host masked however short, a URL written
/// without its scheme (`user:token@host/simple`) too.
fn shown(url: &str) -> String {
    if url.contains("://") {
        return crate::redaction::mask_url_credentials(url).into_owned();
    }
    let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
    match url[..authority_end].rsplit_once('@') {
        Some((userinfo, _)) => {
            let keep = userinfo.find(':').map_or(0, |colon| colon + 1);
            format!(
                "{}{}{}",
                &url[..keep],
                crate::redaction::MASK,
                &url[userinfo.len()..]
            )
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_urls_credentials_are_masked_however_short() {
        assert_eq!(
            shown("u:pw1@127.0.0.1:9/simple"),
            "u:***@127.0.0.1:9/simple"
        );
        assert_eq!(shown("tok@127.0.0.1:9/simple"), "***@127.0.0.1:9/simple");
        assert_eq!(shown("ftp://u:pw1@host/simple"), "ftp://u:***@host/simple");
        assert_eq!(shown("127.0.0.1:9/simple"), "127.0.0.1:9/simple");
    }
}
