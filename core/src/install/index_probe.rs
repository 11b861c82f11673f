//! Asking a package index why pip found nothing there. pip, run with `--no-input`, says of an
//! index that refused it (401, 403), that failed with a server error (5xx) or that is not an index
//! at all (a URL without its `/simple` path) only that it found no version of the project, the
//! words it uses for an index that lacks the project (and of one it could not reach, once it stops
//! retrying; while it retries it does not say which index it could not reach); so after such a
//! failure `plugin add` asks each index it gave pip for that project's page itself, with the
//! credentials in the index's URL, and tells them apart. One request per index (two when the page
//! is not there: the index's own address, which an index answers), after the install failed, to an
//! index the user named: on the command line, or in the `PIP_INDEX_URL` and `PIP_EXTRA_INDEX_URL`
//! variables pip read (a CI job's usual way to name its registry). An index named only in a pip
//! configuration file is not asked: pip's own words are all there is of it.

use std::time::Duration;

use base64::Engine;

use super::plan::PipOptions;
use super::sdk_advice::IndexTrouble;
use crate::redaction::{mask_url_credentials, percent_decoded, userinfo_range};

/// How long the question may take, answer included.
const WAIT: Duration = Duration::from_secs(10);

/// The trouble of each of the indexes pip used (its index, then each extra index, in that order)
/// that does not answer a request for `project`'s page as an index does: not reached, refusing it,
/// failing with a server error, or not there at all; empty when each answers (with the page or
/// without it). `variable` reads the environment pip ran in.
pub fn troubles(
    pip: &PipOptions,
    variable: &dyn Fn(&str) -> Option<String>,
    project: &str,
) -> Vec<IndexTrouble> {
    indexes_used(pip, variable)
        .iter()
        .filter_map(|index| trouble(index, project))
        .collect()
}

/// The indexes pip used, as it picks them: `--index-url`, else `PIP_INDEX_URL`; then the extra
/// indexes of `PIP_EXTRA_INDEX_URL` (separated by white space) and of each `--extra-index-url`,
/// which pip adds to them.
fn indexes_used(pip: &PipOptions, variable: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let listed = |name: &str| -> Vec<String> {
        variable(name)
            .map(|value| value.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default()
    };
    let index = match &pip.index_url {
        Some(url) => vec![url.clone()],
        None => listed("PIP_INDEX_URL").into_iter().take(1).collect(),
    };
    index
        .into_iter()
        .chain(listed("PIP_EXTRA_INDEX_URL"))
        .chain(pip.extra_index_urls.iter().cloned())
        .collect()
}

/// What keeps `index` from answering a request for `project`'s page, when something does.
fn trouble(index: &str, project: &str) -> Option<IndexTrouble> {
    let scheme = index.split_once("://")?.0.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let (bare, credentials) = without_credentials(index);
    let page = format!("{}/{}/", bare.trim_end_matches('/'), normalized(project));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(WAIT))
        .build()
        .into();
    let get = |url: &str| {
        let mut request = agent.get(url);
        if let Some((user, password)) = &credentials {
            let token =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            request = request.header("Authorization", format!("Basic {token}"));
        }
        request.call().map(|response| response.status().as_u16())
    };
    let shown = mask_url_credentials(index).into_owned();
    let status = match get(&page) {
        Ok(status) => status,
        Err(error) => {
            return unreached_because(&error)
                .map(|why| IndexTrouble::Unreached { index: shown, why })
        }
    };
    match status {
        401 | 403 => Some(IndexTrouble::Refused {
            index: shown,
            status,
            with_credentials: credentials.is_some(),
        }),
        500..=599 => Some(IndexTrouble::ServerError {
            index: shown,
            status,
        }),
        // The page is not there: an index lacking the project answers at its own address; a URL
        // that is no index (its `/simple` path left out) does not.
        // A PEP 503 root ends in `/`; an index may answer only there.
        404 => {
            matches!(get(&with_trailing_slash(&bare)), Ok(404)).then(|| IndexTrouble::NotAnIndex {
                lacks_simple: !bare.trim_end_matches('/').ends_with("/simple"),
                index: shown,
            })
        }
        _ => None,
    }
}

/// `url` ending in `/`, as an index's root does (`…/simple` asked as `…/simple/`).
fn with_trailing_slash(url: &str) -> String {
    match url.ends_with('/') {
        true => url.to_string(),
        false => format!("{url}/"),
    }
}

/// Why a request did not reach the index, when the error says it did not (a TLS or protocol fault
/// is left to pip's own words).
fn unreached_because(error: &ureq::Error) -> Option<&'static str> {
    match error {
        ureq::Error::HostNotFound => Some("its host name is not known"),
        ureq::Error::Timeout(_) => Some("it did not answer in time"),
        ureq::Error::ConnectionFailed => Some("the connection failed"),
        ureq::Error::Io(io) => match io.kind() {
            std::io::ErrorKind::ConnectionRefused => Some("connection refused"),
            std::io::ErrorKind::TimedOut => Some("it did not answer in time"),
            std::io::ErrorKind::HostUnreachable | std::io::ErrorKind::NetworkUnreachable => {
                Some("no route to it")
            }
            _ => None,
        },
        _ => None,
    }
}

/// `index` without its userinfo, and the user name and password that userinfo gives (decoded; a
/// token alone is the user name, with an empty password, as pip sends it).
fn without_credentials(index: &str) -> (String, Option<(String, String)>) {
    let Some((start, end)) = userinfo_range(index) else {
        return (index.to_string(), None);
    };
    let userinfo = &index[start..end];
    let bare = format!("{}{}", &index[..start], &index[end + 1..]);
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let decoded = |part: &str| percent_decoded(part).unwrap_or_else(|| part.to_string());
    (bare, Some((decoded(user), decoded(password))))
}

/// A project's name as an index's pages are named (PEP 503): lower case, each run of `-`, `_` and
/// `.` one `-`.
fn normalized(project: &str) -> String {
    let mut out = String::with_capacity(project.len());
    for c in project.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_url_is_split_from_its_credentials() {
        assert_eq!(
            without_credentials("https://u:p%40ss@h/simple/"),
            (
                "https://h/simple/".to_string(),
                Some(("u".to_string(), "p@ss".to_string()))
            )
        );
        assert_eq!(
            without_credentials("https://tok@h/simple"),
            (
                "https://h/simple".to_string(),
                Some(("tok".to_string(), String::new()))
            )
        );
        assert_eq!(
            without_credentials("http://h:9/simple"),
            ("http://h:9/simple".to_string(), None)
        );
        assert_eq!(normalized("Agent_Env..Plugin-SDK"), "agent-env-plugin-sdk");
    }

    #[test]
    fn an_index_that_is_not_reached_is_said_so_and_one_not_over_http_is_not_asked() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let pip = PipOptions {
            index_url: Some("file:///nowhere/simple".into()),
            extra_index_urls: vec![format!("http://u:pw@127.0.0.1:{port}/simple/")],
            reinstall: false,
            no_index: false,
        };
        assert_eq!(
            troubles(&pip, &|_| None, "setuptools"),
            [IndexTrouble::Unreached {
                index: format!("http://u:***@127.0.0.1:{port}/simple/"),
                why: "connection refused"
            }]
        );
        let not_http = PipOptions {
            extra_index_urls: Vec::new(),
            ..pip
        };
        assert_eq!(troubles(&not_http, &|_| None, "setuptools"), []);
    }

    #[test]
    fn the_indexes_pip_read_from_its_variables_are_asked_as_it_orders_them() {
        let environment = |name: &str| match name {
            "PIP_INDEX_URL" => Some("https://env-index/simple".to_string()),
            "PIP_EXTRA_INDEX_URL" => {
                Some(" https://extra-a/simple\thttps://extra-b/simple ".to_string())
            }
            _ => None,
        };
        let none_given = PipOptions {
            index_url: None,
            extra_index_urls: vec!["https://flag-extra/simple".into()],
            reinstall: false,
            no_index: false,
        };
        assert_eq!(
            indexes_used(&none_given, &environment),
            [
                "https://env-index/simple",
                "https://extra-a/simple",
                "https://extra-b/simple",
                "https://flag-extra/simple"
            ]
        );
        let flag_given = PipOptions {
            index_url: Some("https://flag-index/simple".into()),
            ..none_given
        };
        assert_eq!(
            indexes_used(&flag_given, &|_| None),
            ["https://flag-index/simple", "https://flag-extra/simple"]
        );
        assert_eq!(
            indexes_used(&flag_given, &environment)[0],
            "https://flag-index/simple"
        );
    }

    #[test]
    fn an_index_named_only_in_pips_variable_is_asked_too() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let environment = move |name: &str| {
            (name == "PIP_INDEX_URL").then(|| format!("http://127.0.0.1:{port}/simple"))
        };
        assert_eq!(
            troubles(&PipOptions::default(), &environment, "agent-env-plugin-sdk"),
            [IndexTrouble::Unreached {
                index: format!("http://127.0.0.1:{port}/simple"),
                why: "connection refused"
            }]
        );
    }
}
