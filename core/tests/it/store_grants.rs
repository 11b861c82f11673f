//! The local object store's transfer grants: served by a loopback HTTPS server it starts on the first
//! grant, under a per-user CA, with the original's refusals.

use std::collections::BTreeMap;
use std::time::Duration;

use agent_env::environment::Environment;
use agent_env::stores::kits;
use agent_env::stores::{LocalFilesystemObjectStore, ObjectStore};
use serde_json::{json, Value};

/// A store built from a config table as a user configures it, in a temp state root.
fn store(dir: &std::path::Path, extra: Value) -> LocalFilesystemObjectStore {
    let env = Environment::from_vars(
        [
            ("HOME", dir.join("home").into_os_string()),
            ("XDG_STATE_HOME", dir.join("state").into_os_string()),
        ],
        dir,
    );
    let mut table = json!({"root": dir.join("objects").display().to_string()});
    if let (Some(t), Some(e)) = (table.as_object_mut(), extra.as_object()) {
        t.extend(e.clone());
    }
    LocalFilesystemObjectStore::from_config(
        "LocalFilesystemObjectStore",
        table.as_object().unwrap(),
        &env,
    )
    .unwrap()
}

fn agent(store: &LocalFilesystemObjectStore) -> ureq::Agent {
    let pem = store.grant_trust_pem().expect("a grant CA");
    let cert = ureq::tls::Certificate::from_pem(pem.as_bytes()).unwrap();
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .tls_config(
            ureq::tls::TlsConfig::builder()
                .root_certs(ureq::tls::RootCerts::new_with_certs(&[cert]))
                .build(),
        )
        .build()
        .into()
}

fn call(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String) {
    let mut builder = ureq::http::Request::builder().method(method).uri(url);
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    let request = builder
        .header("Content-Length", body.len().to_string())
        .body(body.to_vec())
        .unwrap();
    let mut response = agent.run(request).unwrap();
    let status = response.status().as_u16();
    (
        status,
        response.body_mut().read_to_string().unwrap_or_default(),
    )
}

#[test]
fn the_object_kit_with_its_grant_cases_passes_over_https() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), json!({}));
    assert!(store.supports_transfer_grants());
    let report = kits::run(
        &kits::object::cases_for(true),
        &store as &dyn ObjectStore,
        "",
    );
    assert!(report.all_passed(), "{}", report.render());
    assert_eq!(
        report.count(|o| matches!(o, kits::CaseOutcome::Passed)),
        30,
        "{}",
        report.render()
    );
    // The CA lives under the state root: private key 0600, public certificate beside it.
    let tls = dir.path().join("state/agent-env/tls");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(tls.join("ca.key.pem"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let ca = std::fs::read_to_string(tls.join("trust/agent-env/ca.pem")).unwrap();
    assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"), "{ca}");
    // The bundle: the machine's public roots, then the CA.
    let bundle = std::fs::read_to_string(tls.join("trust/agent-env/ca-bundle.pem")).unwrap();
    assert!(bundle.ends_with(&ca), "the bundle does not end with the CA");
    // Every folder and file made there is the user's alone, whatever the umask.
    for (made, private) in [
        ("trust", 0o700),
        ("trust/agent-env", 0o700),
        ("trust/agent-env/ca.pem", 0o600),
        ("trust/agent-env/ca-bundle.pem", 0o600),
        ("ca.json", 0o600),
    ] {
        let mode = std::fs::metadata(tls.join(made))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, private, "{made}");
    }
}

#[test]
fn grants_off_issue_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), json!({"grants": "off"}));
    assert!(!store.supports_transfer_grants());
    let url = store.put("a.txt", b"x", "text/plain", false).unwrap();
    let err = store.issue_read_grant(&url, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "LocalFilesystemObjectStore cannot issue remote object-transfer grants"
    );
}

#[test]
fn the_grant_server_refuses_with_the_original_sentences() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), json!({}));
    let agent = agent(&store);
    let url = store
        .put("docs/a.json", b"{}", "application/json", false)
        .unwrap();

    let read = store
        .issue_read_grant(&url, Some(Duration::from_secs(60)))
        .unwrap();
    assert!(read.url.starts_with("https://localhost:"), "{}", read.url);
    assert_eq!(
        call(&agent, "GET", &read.url, &[], b""),
        (200, "{}".to_string())
    );
    assert_eq!(
        call(&agent, "PUT", &read.url, &[], b"x"),
        (403, "The grant does not allow this request.".to_string())
    );
    let forged = format!("{}x", read.url);
    assert_eq!(
        call(&agent, "GET", &forged, &[], b""),
        (403, "The grant is invalid or has expired.".to_string())
    );
    let absent = store.object_url("docs/absent.json").unwrap();
    let missing = store.issue_read_grant(&absent, None).unwrap();
    assert_eq!(
        call(&agent, "GET", &missing.url, &[], b""),
        (404, "No object exists at this grant's key.".to_string())
    );

    let target = store.object_url("docs/b.json").unwrap();
    let write = store
        .issue_write_grant(&target, "application/json", 8, None)
        .unwrap();
    assert_eq!(
        write.headers,
        BTreeMap::from([("Content-Type".to_string(), "application/json".to_string())])
    );
    assert_eq!(
        call(
            &agent,
            "PUT",
            &write.url,
            &[("Content-Type", "text/plain")],
            b"{}"
        ),
        (
            403,
            "The upload must declare Content-Type application/json.".to_string()
        )
    );
    assert_eq!(
        call(
            &agent,
            "PUT",
            &write.url,
            &[("Content-Type", "application/json")],
            b"123456789"
        ),
        (
            400,
            "The upload is larger than the grant allows.".to_string()
        )
    );
    assert!(!store.exists("docs/b.json").unwrap());
    assert_eq!(
        call(
            &agent,
            "PUT",
            &write.url,
            &[("Content-Type", "application/json")],
            b"[1]"
        )
        .0,
        200
    );
    assert_eq!(store.read("docs/b.json").unwrap(), b"[1]");

    let policy = store
        .issue_upload_policy(
            &store.object_url("up/").unwrap(),
            8,
            Duration::from_secs(600),
        )
        .unwrap();
    let form = |key: &str| {
        format!("--B\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\n{key}\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\nok\r\n--B--\r\n")
    };
    let multipart = [("Content-Type", "multipart/form-data; boundary=B")];
    assert_eq!(
        call(
            &agent,
            "POST",
            &policy.write.url,
            &multipart,
            form("up/../x").as_bytes()
        ),
        (
            403,
            "The upload key is not a normalized relative path.".to_string()
        )
    );
    assert_eq!(
        call(
            &agent,
            "POST",
            &policy.write.url,
            &multipart,
            form("elsewhere/x").as_bytes()
        ),
        (
            403,
            "The upload key is outside the grant's prefix.".to_string()
        )
    );
    assert_eq!(
        call(
            &agent,
            "POST",
            &policy.write.url,
            &[("Content-Type", "text/plain")],
            b"x"
        ),
        (400, "The upload must be multipart/form-data.".to_string())
    );
    assert_eq!(
        call(
            &agent,
            "POST",
            &policy.write.url,
            &multipart,
            form("up/x").as_bytes()
        )
        .0,
        204
    );
    assert_eq!(store.read("up/x").unwrap(), b"ok");

    assert!(store.issue_read_grant(&url, Some(Duration::ZERO)).is_err());
    assert!(store.issue_read_grant("file:///etc/passwd", None).is_err());
}

/// A grant the kit cannot reach (its URL names an address the server does not listen on) fails the
/// grant cases with messages that name the request but not the grant: the signed token in the local
/// store's grant path is shown as `***`.
#[test]
fn a_failed_grant_case_shows_the_grant_url_without_its_token() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), json!({"grant_advertise_host": "127.0.0.2"}));
    let report = kits::run(
        &kits::object::cases_for(true),
        &store as &dyn ObjectStore,
        "",
    );
    let failures = report.failures().join("\n");
    assert!(
        failures.contains("FAILED read_grant_fetches_the_object: GET https://127.0.0.2:"),
        "{}",
        report.render()
    );
    assert!(failures.contains("/v1/grants/*** failed: "), "{failures}");
    assert!(!failures.contains("/v1/grants/v1."), "{failures}");
    // The token of a grant like the ones the cases used is nowhere in the messages.
    let url = store.put("t.txt", b"x", "text/plain", false).unwrap();
    let grant = store.issue_read_grant(&url, None).unwrap();
    let token = grant.url.rsplit('/').next().unwrap();
    let signature = token.rsplit('.').next().unwrap();
    assert!(signature.len() > 20, "{}", grant.url);
    assert!(!failures.contains(signature), "{failures}");
}
