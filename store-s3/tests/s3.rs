//! S3ObjectStore against a real SeaweedFS S3 gateway started by `scripts/servers/seaweedfs.sh`.

// Tests stop at the first thing that is not as expected: unwrapping is how they say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use agent_env_store::kits;
use agent_env_store::{ObjectStore, StoreError};
use agent_env_store_s3::{S3ObjectStore, S3Settings};
use agent_env_test_support::deadline::returns_within;
use agent_env_test_support::servers::{shared_seaweedfs, silent_server, ScriptServer};
use agent_env_test_support::slow_bodies::{SlowBody, SlowBodyServer};
use serde_json::{json, Value};

fn server() -> &'static ScriptServer {
    shared_seaweedfs()
}

fn settings(bucket: &str, extra: Value) -> S3Settings {
    let server = server();
    let mut table = json!({
        "bucket": bucket,
        "endpoint": server.value("S3_ENDPOINT"),
        "access_key_id": server.value("AWS_ACCESS_KEY_ID"),
        "secret_access_key": server.value("AWS_SECRET_ACCESS_KEY"),
    });
    if let (Some(t), Some(e)) = (table.as_object_mut(), extra.as_object()) {
        t.extend(e.clone());
    }
    S3Settings::from_table(table.as_object().unwrap(), &|_| None).unwrap()
}

fn store(bucket: &str) -> S3ObjectStore {
    S3ObjectStore::new(settings(bucket, json!({}))).unwrap()
}

fn unique(prefix: &str) -> String {
    format!(
        "{prefix}-{}-{}/",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

#[test]
fn the_object_kit_passes_against_a_real_s3_server() {
    let store = store("kit");
    let kit = kits::object::cases_for(store.supports_transfer_grants());
    let report = kits::run(&kit, &store as &dyn ObjectStore, &unique("kit"));
    assert!(report.all_passed(), "{}", report.render());
    // The 27 cases and the 3 grant cases, none skipped.
    assert_eq!(
        report.count(|o| matches!(o, kits::CaseOutcome::Passed)),
        30,
        "{}",
        report.render()
    );
}

#[test]
fn a_write_never_replaces_an_object_and_one_of_eight_racing_writers_wins() {
    let store = Arc::new(store("race"));
    let key = format!("{}one", unique("race"));
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(&store);
            let key = key.clone();
            std::thread::spawn(move || {
                store.put(&key, format!("writer {i}").as_bytes(), "text/plain", false)
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let won: Vec<_> = results.iter().filter(|r| r.is_ok()).collect();
    assert_eq!(won.len(), 1, "{results:?}");
    for lost in results.iter().filter(|r| r.is_err()) {
        assert!(
            matches!(lost, Err(StoreError::AlreadyExists(_))),
            "{lost:?}"
        );
    }
    let stored = String::from_utf8(store.read(&key).unwrap()).unwrap();
    assert!(stored.starts_with("writer "), "{stored}");
}

#[test]
fn a_multipart_file_round_trips_and_is_write_once() {
    let store = store("big");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.bin");
    let len = agent_env_store_s3::PART_SIZE as usize * 2 + 12_345;
    let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let key = format!("{}big.bin", unique("big"));
    let url = store.put_file(&key, &path, "application/x-test").unwrap();
    let meta = store.get_object_metadata(&key).unwrap().unwrap();
    assert_eq!(meta.size, Some(len as u64));
    assert_eq!(meta.content_type.as_deref(), Some("application/x-test"));
    let out = dir.path().join("out/big.bin");
    store.download_to_file(&url, &out).unwrap();
    assert!(
        std::fs::read(&out).unwrap() == data,
        "the downloaded bytes differ"
    );
    let again = store.put_file(&key, &path, "application/x-test");
    assert!(
        matches!(again, Err(StoreError::AlreadyExists(_))),
        "{again:?}"
    );
}

#[test]
fn a_missing_bucket_and_wrong_credentials_are_config_errors_naming_what_to_fix() {
    let missing = S3ObjectStore::new(settings("no-such-bucket", json!({}))).unwrap();
    let err = missing.check_connection().unwrap_err();
    assert!(matches!(err, StoreError::Config(_)), "{err:?}");
    assert!(
        err.to_string()
            .contains("the bucket 'no-such-bucket' does not exist at http://127.0.0.1:"),
        "{err}"
    );

    let wrong = S3ObjectStore::new(settings(
        "kit",
        json!({"secret_access_key": "not-the-secret"}),
    ))
    .unwrap();
    let err = wrong.check_connection().unwrap_err();
    assert!(matches!(err, StoreError::Config(_)), "{err:?}");
    assert!(err.to_string().contains("check the credentials"), "{err}");
    assert!(!err.to_string().contains("not-the-secret"), "{err}");

    let down =
        S3ObjectStore::new(settings("kit", json!({"endpoint": "http://127.0.0.1:9"}))).unwrap();
    let err = down.check_connection().unwrap_err();
    assert!(
        err.to_string()
            .contains("could not reach http://127.0.0.1:9"),
        "{err}"
    );
    assert!(
        err.to_string().contains("check that the server is running"),
        "{err}"
    );
}

/// A store on the shared server signing with the identity that may only read and list.
fn read_only(bucket: &str) -> S3ObjectStore {
    let server = server();
    S3ObjectStore::new(settings(
        bucket,
        json!({
            "access_key_id": server.value("S3_READONLY_ACCESS_KEY_ID"),
            "secret_access_key": server.value("S3_READONLY_SECRET_ACCESS_KEY"),
        }),
    ))
    .unwrap()
}

/// Credentials that may list the bucket but not write to it fail the check, which says so, instead
/// of passing it and failing the first put.
#[test]
fn read_only_credentials_fail_the_check_which_says_they_may_not_write() {
    let endpoint = server().value("S3_ENDPOINT");
    let err = read_only("kit").check_connection().unwrap_err();
    assert!(matches!(err, StoreError::Config(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("S3ObjectStore: these credentials may read the bucket 'kit' but not write to it: {endpoint} refused to start an upload (AccessDenied: Access Denied), so every put would fail; give them write access to it (s3:PutObject, and s3:AbortMultipartUpload to call off a failed upload), or set access_key_id and secret_access_key in [stores.object.config] to credentials that may write")
    );
}

/// A write the server refuses for want of access says the credentials may not write to the bucket,
/// and what to grant, not to check them.
#[test]
fn a_write_refused_for_want_of_access_says_the_credentials_may_not_write() {
    let endpoint = server().value("S3_ENDPOINT");
    let reader = read_only("kit");
    let key = format!("{}denied.txt", unique("denied"));
    let err = reader.put(&key, b"x", "text/plain", false).unwrap_err();
    assert!(matches!(err, StoreError::Config(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("S3ObjectStore: {endpoint} refused to write s3://kit/{key} (AccessDenied: Access Denied): these credentials may not write to the bucket 'kit'; give them write access to it (s3:PutObject, and s3:AbortMultipartUpload to call off a failed upload), or set access_key_id and secret_access_key in [stores.object.config] to credentials that may write")
    );
    // Nothing was written, and the credentials that may write see no object there.
    assert!(!store("kit").exists(&key).unwrap());
}

/// The multipart uploads of `bucket` under way under `prefix`, as the server lists them (signed by
/// curl, which the server script needs too).
fn uploads_under(bucket: &str, prefix: &str) -> String {
    let server = server();
    let out = std::process::Command::new("curl")
        .args([
            "-s",
            "--fail",
            "--aws-sigv4",
            "aws:amz:us-east-1:s3",
            "--user",
            &format!(
                "{}:{}",
                server.value("AWS_ACCESS_KEY_ID"),
                server.value("AWS_SECRET_ACCESS_KEY")
            ),
            &format!(
                "{}/{bucket}?prefix={}&uploads=",
                server.value("S3_ENDPOINT"),
                prefix.replace('/', "%2F")
            ),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let listing = String::from_utf8(out.stdout).unwrap();
    assert!(listing.contains("<ListMultipartUploadsResult"), "{listing}");
    listing
}

/// The check proves the credentials may write by an upload it calls off: it leaves neither an
/// object nor an upload under way.
#[test]
fn the_check_proves_writing_and_leaves_no_object_and_no_upload() {
    let store = store("race");
    store.check_connection().unwrap();
    assert_eq!(
        store.list("agent-env-check/").unwrap(),
        Vec::<String>::new()
    );
    let uploads = uploads_under("race", "agent-env-check/");
    assert!(!uploads.contains("<Upload>"), "{uploads}");
}

/// A loopback stand-in for an S3 server whose credentials may write but not abort: it lists an
/// empty bucket, starts uploads, and refuses their abort with AccessDenied. Returns its endpoint and
/// the requests it took (method and target).
fn refusing_aborts() -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for socket in listener.incoming().flatten() {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                let mut writer = socket.try_clone().unwrap();
                let mut reader = BufReader::new(socket);
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut words = line.split_whitespace();
                    let (method, target) = (
                        words.next().unwrap_or("").to_string(),
                        words.next().unwrap_or("").to_string(),
                    );
                    let mut length = 0u64;
                    loop {
                        let mut header = String::new();
                        reader.read_line(&mut header).unwrap();
                        if header.trim().is_empty() {
                            break;
                        }
                        if let Some((name, value)) = header.split_once(':') {
                            if name.eq_ignore_ascii_case("content-length") {
                                length = value.trim().parse().unwrap();
                            }
                        }
                    }
                    std::io::copy(&mut reader.by_ref().take(length), &mut std::io::sink()).unwrap();
                    log.lock()
                        .unwrap()
                        .push(format!("{method} {}", target.split('&').next().unwrap()));
                    let (status, xml) = match method.as_str() {
                        "GET" => ("200 OK", "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>b</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>"),
                        "POST" => ("200 OK", "<InitiateMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Bucket>b</Bucket><Key>k</Key><UploadId>kept-upload</UploadId></InitiateMultipartUploadResult>"),
                        _ => ("403 Forbidden", "<Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>"),
                    };
                    let answer = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: application/xml\r\nContent-Length: {}\r\n\r\n{xml}",
                        xml.len()
                    );
                    if writer.write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (endpoint, seen)
}

/// Credentials that may start an upload but not call it off fail the check, which names the upload
/// it had to leave: every failed upload would leave its parts in the bucket.
#[test]
fn a_check_whose_abort_is_refused_says_so_and_names_the_upload_it_left() {
    let (endpoint, seen) = refusing_aborts();
    let table = json!({"bucket": "b", "endpoint": endpoint, "access_key_id": "k",
        "secret_access_key": "s", "timeout_seconds": 5});
    let store =
        S3ObjectStore::new(S3Settings::from_table(table.as_object().unwrap(), &|_| None).unwrap())
            .unwrap();
    let err = store.check_connection().unwrap_err();
    assert!(matches!(err, StoreError::Config(_)), "{err:?}");
    let said = err.to_string();
    assert!(
        said.starts_with(&format!("S3ObjectStore: these credentials may write to the bucket 'b', but {endpoint} refused to call off an upload they started (AccessDenied: Access Denied), so an upload that fails would leave its parts in the bucket; let them abort multipart uploads (s3:AbortMultipartUpload on the bucket's objects); the check's own upload of agent-env-check/")),
        "{said}"
    );
    assert!(
        said.ends_with(" (upload id kept-upload) stays unfinished, holding no data, until the bucket's lifecycle rules remove it or it is aborted by hand"),
        "{said}"
    );
    let methods: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.split(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(methods, ["GET", "POST", "DELETE"]);
}

/// A loopback server answering every request with `status` (such as `503 Service Unavailable`) and
/// no body, as a proxy in front of a stopped S3 server does. Returns its endpoint.
fn answering_every_request(status: &'static str) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for socket in listener.incoming().flatten() {
            let mut writer = socket.try_clone().unwrap();
            let mut reader = BufReader::new(socket);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
            }
            let answer =
                format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            let _ = writer.write_all(answer.as_bytes());
        }
    });
    endpoint
}

/// A server answering 503 to everything fails the check with what to do about it, as one that
/// refuses the connection or does not answer does; it is an outage (store-unreachable), not a
/// mistake in the settings.
#[test]
fn a_server_answering_503_fails_the_check_saying_what_to_do() {
    let endpoint = answering_every_request("503 Service Unavailable");
    let table = json!({"bucket": "b", "endpoint": endpoint, "access_key_id": "k",
        "secret_access_key": "s", "timeout_seconds": 5});
    let store =
        S3ObjectStore::new(S3Settings::from_table(table.as_object().unwrap(), &|_| None).unwrap())
            .unwrap();
    let err = store.check_connection().unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("S3ObjectStore: {endpoint} failed to list s3://b after 4 attempts (HTTP 503): the server is unavailable or overloaded (S3 says so to slow its callers down); try again in a moment, and if it goes on, check that it is running and what its logs say, and that [stores.object.config] endpoint names an S3 server")
    );
}

/// The child half of the kill test, which starts it with `--ignored`: uploads a large (sparse) file
/// until it is killed. Not a test of its own.
#[test]
#[ignore = "the child process of an_upload_killed_midway_leaves_no_object"]
fn child_uploads_until_killed() {
    let key = std::env::var("AGENT_ENV_S3_KILL_CHILD_KEY").expect("started by the kill test");
    let path = std::path::PathBuf::from(std::env::var("AGENT_ENV_S3_KILL_CHILD_FILE").unwrap());
    let table: serde_json::Map<String, Value> =
        serde_json::from_str(&std::env::var("AGENT_ENV_S3_KILL_CHILD_TABLE").unwrap()).unwrap();
    let store = S3ObjectStore::new(S3Settings::from_table(&table, &|_| None).unwrap()).unwrap();
    println!("uploading");
    let _ = store.put_file(&key, &path, "application/octet-stream");
}

#[test]
fn an_upload_killed_midway_leaves_no_object() {
    use std::io::{BufRead, BufReader};
    let server = server();
    let store = store("big");
    let dir = tempfile::tempdir().unwrap();
    // 2 GiB of zeros that take no disk: the upload runs for seconds, long enough to be killed midway.
    let path = dir.path().join("sparse.bin");
    std::fs::File::create(&path)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let key = format!("{}killed.bin", unique("killed"));
    let table = json!({
        "bucket": "big",
        "endpoint": server.value("S3_ENDPOINT"),
        "access_key_id": server.value("AWS_ACCESS_KEY_ID"),
        "secret_access_key": server.value("AWS_SECRET_ACCESS_KEY"),
    });
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_uploads_until_killed",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("AGENT_ENV_S3_KILL_CHILD_KEY", &key)
        .env("AGENT_ENV_S3_KILL_CHILD_FILE", &path)
        .env("AGENT_ENV_S3_KILL_CHILD_TABLE", table.to_string())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|l| l.map(|l| l.contains("uploading")).unwrap_or(false)),
        "the child never started uploading"
    );
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the upload finished before it could be killed"
    );
    // SAFETY: kill sends SIGKILL to our own child, which has not been reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    assert!(
        !store.exists(&key).unwrap(),
        "a killed upload left an object at {key}"
    );
    assert!(store.list(&key).unwrap().is_empty());
    // The key is still free: a whole upload lands there afterwards.
    store.put(&key, b"whole", "text/plain", false).unwrap();
    assert_eq!(store.read(&key).unwrap(), b"whole");
}

/// A server that accepts the connection and then says nothing fails the call within timeout_seconds,
/// with a sentence naming it, instead of hanging the command.
#[test]
fn a_server_that_never_answers_fails_within_the_timeout() {
    let (port, held) = silent_server(std::time::Duration::from_secs(5));
    let table = json!({
        "bucket": "b",
        "endpoint": format!("http://127.0.0.1:{port}"),
        "access_key_id": "k",
        "secret_access_key": "s",
        "timeout_seconds": 1,
    });
    let silent =
        S3ObjectStore::new(S3Settings::from_table(table.as_object().unwrap(), &|_| None).unwrap())
            .unwrap();
    let err = silent.check_connection().unwrap_err().to_string();
    assert_eq!(
        err,
        format!("S3ObjectStore: http://127.0.0.1:{port} did not answer a listing of the bucket 'b' within 1 s; check that the server is running and not paused or overloaded, and that [stores.object.config] endpoint names an S3 server")
    );
    held.join().unwrap();
    // Any other call waits timeout_seconds too, and says which setting that is.
    let (port, held) = silent_server(std::time::Duration::from_secs(5));
    let table = json!({
        "bucket": "b",
        "endpoint": format!("http://127.0.0.1:{port}"),
        "access_key_id": "k",
        "secret_access_key": "s",
        "timeout_seconds": 1,
    });
    let silent =
        S3ObjectStore::new(S3Settings::from_table(table.as_object().unwrap(), &|_| None).unwrap())
            .unwrap();
    let err = silent.list("").unwrap_err().to_string();
    assert_eq!(
        err,
        format!("S3ObjectStore: http://127.0.0.1:{port} did not answer within 1 s; check that the server is running and not paused or overloaded, and that [stores.object.config] endpoint names an S3 server (timeout_seconds sets how long to wait)")
    );
    held.join().unwrap();
}

/// The check gives up on a server that says nothing after 10 s, not after timeout_seconds (120 s
/// unless set), which is for real transfers.
#[test]
fn the_check_waits_for_a_silent_server_ten_seconds_not_timeout_seconds() {
    let (port, held) = silent_server(std::time::Duration::from_secs(15));
    let table = json!({
        "bucket": "b",
        "endpoint": format!("http://127.0.0.1:{port}"),
        "access_key_id": "k",
        "secret_access_key": "s",
    });
    let settings = S3Settings::from_table(table.as_object().unwrap(), &|_| None).unwrap();
    assert_eq!(settings.timeout, std::time::Duration::from_secs(120));
    let silent = S3ObjectStore::new(settings).unwrap();
    let err = returns_within(HUNG, "a check of a silent server", move || {
        silent.check_connection()
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("S3ObjectStore: http://127.0.0.1:{port} did not answer a listing of the bucket 'b' within 10 s; check that the server is running and not paused or overloaded, and that [stores.object.config] endpoint names an S3 server")
    );
    held.join().unwrap();
}

/// A store on a loopback server that is slow mid-body, waiting `timeout_seconds = 1`.
fn store_on(server: &SlowBodyServer) -> Arc<S3ObjectStore> {
    store_waiting(server, 1)
}

fn store_waiting(server: &SlowBodyServer, timeout_seconds: u64) -> Arc<S3ObjectStore> {
    let table = json!({
        "bucket": "b",
        "endpoint": server.endpoint(),
        "access_key_id": "k",
        "secret_access_key": "s",
        "timeout_seconds": timeout_seconds,
    });
    let settings = S3Settings::from_table(table.as_object().unwrap(), &|_| None).unwrap();
    Arc::new(S3ObjectStore::new(settings).unwrap())
}

/// How long a call against a slow server may take before the test counts it as hung: far above
/// the 1 s it waits for a byte, so only a call with no bound on the body's transfer reaches it.
const HUNG: std::time::Duration = std::time::Duration::from_secs(30);

/// A download that stops midway: the answer promises 1 MiB and sends 64 KiB.
fn mid_download() -> SlowBodyServer {
    SlowBodyServer::start(SlowBody::StallsDownload {
        promised: 1 << 20,
        sent: 64 << 10,
    })
}

fn download_stalled(server: &SlowBodyServer, key: &str) -> String {
    format!(
        "S3ObjectStore: reading s3://b/{key} from {} stalled: no data arrived for 1 s; check that the server is running and not paused or overloaded and that the network to it is up, or, for a link that slow, raise timeout_seconds in [stores.object.config]",
        server.endpoint()
    )
}

/// A read whose answer stops midway fails once no byte has arrived for timeout_seconds, naming the
/// object and what to do, instead of hanging the command.
#[test]
fn a_read_that_stalls_midway_fails_within_the_timeout() {
    let server = mid_download();
    let store = store_on(&server);
    let err = returns_within(HUNG, "a stalled get", move || {
        store.get("s3://b/stalls/get.bin")
    })
    .unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
    assert_eq!(err.to_string(), download_stalled(&server, "stalls/get.bin"));
}

#[test]
fn a_download_to_a_file_that_stalls_midway_fails_within_the_timeout() {
    let server = mid_download();
    let store = store_on(&server);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("out.bin");
    let err = returns_within(HUNG, "a stalled download_to_file", {
        let dest = dest.clone();
        move || store.download_to_file("s3://b/stalls/file.bin", &dest)
    })
    .unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        download_stalled(&server, "stalls/file.bin")
    );
    // Half an object is not left looking like the whole of it.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn an_opened_object_that_stalls_midway_fails_its_read_within_the_timeout() {
    use std::io::Read;
    let server = mid_download();
    let store = store_on(&server);
    let err = returns_within(HUNG, "reading a stalled open", move || {
        let mut reader = store.open("s3://b/stalls/open.bin").unwrap();
        reader.read_to_end(&mut Vec::new())
    })
    .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut, "{err:?}");
    assert_eq!(
        err.to_string(),
        download_stalled(&server, "stalls/open.bin")
    );
}

fn upload_stalled(server: &SlowBodyServer, what: &str) -> String {
    format!(
        "S3ObjectStore: writing {what} to {} stalled: the server took no data for 1 s; check that the server is running and not paused or overloaded and that the network to it is up, or, for a link that slow, raise timeout_seconds in [stores.object.config]",
        server.endpoint()
    )
}

/// A write the server stops taking midway (one PUT: bytes, or a file of one part) fails once no
/// byte has gone out for timeout_seconds. The body is larger than the socket buffers, so the sender
/// blocks in the middle of it.
#[test]
fn a_write_the_server_stops_taking_fails_within_the_timeout() {
    let server = SlowBodyServer::start(SlowBody::StallsUpload { taken: 256 << 10 });
    let store = store_on(&server);
    let data = vec![7u8; agent_env_store_s3::PART_SIZE as usize];
    let err = returns_within(HUNG, "a stalled put", {
        let store = Arc::clone(&store);
        move || store.put("stalls/put.bin", &data, "application/octet-stream", false)
    })
    .unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        upload_stalled(&server, "s3://b/stalls/put.bin")
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one-part.bin");
    std::fs::File::create(&path)
        .unwrap()
        .set_len(agent_env_store_s3::PART_SIZE)
        .unwrap();
    let err = returns_within(HUNG, "a stalled put_file", move || {
        store.put_file("stalls/one-part.bin", &path, "application/octet-stream")
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        upload_stalled(&server, "s3://b/stalls/one-part.bin")
    );
}

/// `put_file` of `stalls/parts.bin`, three whole parts of zeros (no disk), to `server`, which stops
/// taking them: the error it fails with. Each part is larger than the socket buffers, so a part cannot
/// go out whole and meet the bound on the answer instead.
fn put_three_parts(server: &SlowBodyServer) -> StoreError {
    let store = store_on(server);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parts.bin");
    std::fs::File::create(&path)
        .unwrap()
        .set_len(agent_env_store_s3::PART_SIZE * 3)
        .unwrap();
    returns_within(HUNG, "a stalled multipart put_file", move || {
        store.put_file("stalls/parts.bin", &path, "application/octet-stream")
    })
    .unwrap_err()
}

/// A multipart upload whose parts the server stops taking fails within the timeout, naming a part,
/// and is aborted.
#[test]
fn a_multipart_upload_the_server_stops_taking_fails_within_the_timeout() {
    let server = SlowBodyServer::start(SlowBody::StallsUpload { taken: 256 << 10 });
    let err = put_three_parts(&server);
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
    let said = err.to_string();
    let part = ["1", "2", "3"]
        .into_iter()
        .find(|n| said == upload_stalled(&server, &format!("part {n} of s3://b/stalls/parts.bin")));
    assert!(part.is_some(), "{said}");
    // Started (without a chunked body, which S3 refuses), three parts sent, then aborted.
    let requests = server.requests();
    let methods: Vec<&str> = requests
        .iter()
        .filter_map(|r| r.split(' ').next())
        .collect();
    assert_eq!(
        methods,
        ["HEAD", "POST", "PUT", "PUT", "PUT", "DELETE"],
        "{requests:?}"
    );
}

/// A failed multipart upload whose abort the server refuses says its parts stay in the bucket.
#[test]
fn a_failed_upload_whose_abort_is_refused_says_its_parts_stay() {
    let server = SlowBodyServer::start(SlowBody::StallsUpload { taken: 256 << 10 });
    server.refuse_aborts();
    let err = put_three_parts(&server);
    let said = err.to_string();
    assert!(
        said.ends_with("; the unfinished multipart upload of stalls/parts.bin (upload id stalled-upload) could not be called off, so its parts stay in the bucket until its lifecycle rules remove them"),
        "{said}"
    );
}

/// A download on a slow link that keeps moving is not cut off: timeout_seconds bounds each wait for
/// the next bytes, not the whole body, which here takes more than twice as long.
#[test]
fn a_slow_download_that_keeps_moving_outlasts_the_timeout() {
    let server = SlowBodyServer::start(SlowBody::TricklesDownload {
        chunk: 16 << 10,
        chunks: 10,
        pause: std::time::Duration::from_millis(250),
    });
    let store = store_on(&server);
    let started = std::time::Instant::now();
    let body =
        returns_within(HUNG, "a slow get", move || store.get("s3://b/slow/get.bin")).unwrap();
    assert_eq!(body.len(), 160 << 10);
    assert!(started.elapsed() >= std::time::Duration::from_secs(2));
}

/// An upload the server takes slowly, but steadily, is not cut off either. The server reads 10 MB/s,
/// fast enough to drain the sender's socket buffer (up to 4 MiB, all still in flight when the sender
/// starts waiting for the answer) well within the timeout, and the whole body takes twice as long.
#[test]
fn a_slow_upload_that_keeps_moving_outlasts_the_timeout() {
    let server = SlowBodyServer::start(SlowBody::TricklesUpload {
        chunk: 1 << 20,
        pause: std::time::Duration::from_millis(100),
    });
    let store = store_waiting(&server, 2);
    let data = vec![7u8; 40 << 20];
    let started = std::time::Instant::now();
    let url = returns_within(HUNG, "a slow put", move || {
        store.put("slow/put.bin", &data, "application/octet-stream", false)
    })
    .unwrap();
    assert_eq!(url, "s3://b/slow/put.bin");
    assert!(started.elapsed() >= std::time::Duration::from_secs(4));
}

/// A write grant creates its object once: the URL, used again before it expires, cannot replace what
/// it wrote.
#[test]
fn a_write_grant_creates_its_object_once() {
    let store = store("race");
    let key = format!("{}once.txt", unique("grant"));
    let url = store.object_url(&key).unwrap();
    let grant = store
        .issue_write_grant(&url, "text/plain", 100, None)
        .unwrap();
    assert_eq!(
        grant.headers.get("If-None-Match").map(String::as_str),
        Some("*")
    );
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let put = |body: &'static str| {
        let mut request = ureq::http::Request::builder().method("PUT").uri(&grant.url);
        for (name, value) in &grant.headers {
            request = request.header(name, value);
        }
        agent
            .run(request.body(body).unwrap())
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(put("first"), 200);
    assert_eq!(put("second"), 412, "the grant replaced its object");
    assert_eq!(store.read(&key).unwrap(), b"first");
}

/// What the loopback stand-in of [`flaky_s3`] does with a request.
enum Reply {
    /// Answers with this status line (`503 Slow Down`), these extra header lines and this body.
    Status(&'static str, &'static str, String),
    /// Takes the whole request and resets the connection without answering.
    Reset,
    /// Answers as a working S3 server: stores a PUT's body, serves it to a GET.
    Works,
    /// Answers with this status line and these extra header lines, promises a body of `promised`
    /// bytes, sends `body` (fewer) and closes the connection, as a server cut off midway does.
    Cut {
        status: &'static str,
        headers: String,
        body: String,
        promised: usize,
    },
}

/// One request the stand-in took: `METHOD /path` (the query left off), and its body.
type Taken = Arc<std::sync::Mutex<Vec<(String, Vec<u8>)>>>;

/// A loopback stand-in for an S3 server whose replies `reply` picks from the request (`METHOD
/// /path`), its whole target (the query too) and how many requests came before it. Returns its
/// endpoint and the requests it took.
fn flaky_s3(reply: impl Fn(&str, &str, usize) -> Reply + Send + Sync + 'static) -> (String, Taken) {
    flaky_s3_seeing(move |seen| reply(&seen.request, &seen.target, seen.before))
}

/// One request as the stand-in of [`flaky_s3_seeing`] shows it to the reply.
struct Seen {
    /// `METHOD /path`.
    request: String,
    /// The whole target, the query too.
    target: String,
    /// Its header lines, each name in lower case.
    headers: Vec<(String, String)>,
    /// How many requests came before it.
    before: usize,
}

impl Seen {
    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }
}

/// [`flaky_s3`], its replies picked from the whole request, headers too.
fn flaky_s3_seeing(reply: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> (String, Taken) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let taken: Taken = Arc::default();
    let log = Arc::clone(&taken);
    let reply = Arc::new(reply);
    std::thread::spawn(move || {
        for socket in listener.incoming().flatten() {
            let (log, reply) = (Arc::clone(&log), Arc::clone(&reply));
            std::thread::spawn(move || {
                let mut writer = socket.try_clone().unwrap();
                let mut reader = BufReader::new(socket);
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut words = line.split_whitespace();
                    let method = words.next().unwrap_or("").to_string();
                    let target = words.next().unwrap_or("").to_string();
                    let path = target.split('?').next().unwrap_or("");
                    let request = format!("{method} {path}");
                    let mut length = 0u64;
                    let mut headers = Vec::new();
                    loop {
                        let mut header = String::new();
                        if reader.read_line(&mut header).unwrap_or(0) == 0 {
                            return;
                        }
                        if header.trim().is_empty() {
                            break;
                        }
                        if let Some((name, value)) = header.split_once(':') {
                            if name.eq_ignore_ascii_case("content-length") {
                                length = value.trim().parse().unwrap();
                            }
                            headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
                        }
                    }
                    let mut body = Vec::new();
                    if reader.by_ref().take(length).read_to_end(&mut body).is_err() {
                        return;
                    }
                    let before = {
                        let mut log = log.lock().unwrap();
                        log.push((request.clone(), body));
                        log.len() - 1
                    };
                    let seen = Seen {
                        request: request.clone(),
                        target: target.clone(),
                        headers,
                        before,
                    };
                    let answer = match reply(&seen) {
                        Reply::Status(status, headers, xml) => format!(
                            "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\n\r\n{xml}",
                            xml.len()
                        ),
                        Reply::Reset => {
                            reset(writer);
                            return;
                        }
                        Reply::Cut {
                            status,
                            headers,
                            body,
                            promised,
                        } => {
                            let _ = writer.write_all(
                                format!(
                                    "HTTP/1.1 {status}\r\n{headers}Content-Length: {promised}\r\n\r\n{body}"
                                )
                                .as_bytes(),
                            );
                            return;
                        }
                        Reply::Works if method == "PUT" => {
                            "HTTP/1.1 200 OK\r\nETag: \"stored\"\r\nContent-Length: 0\r\n\r\n"
                                .to_string()
                        }
                        Reply::Works if method == "POST" => {
                            // The start of a multipart upload (no body), or its completion.
                            let xml = if length == 0 {
                                "<InitiateMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Bucket>b</Bucket><Key>k</Key><UploadId>flaky-upload</UploadId></InitiateMultipartUploadResult>"
                            } else {
                                "<CompleteMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><ETag>\"whole\"</ETag></CompleteMultipartUploadResult>"
                            };
                            format!(
                                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{xml}",
                                xml.len()
                            )
                        }
                        Reply::Works => {
                            let log = log.lock().unwrap();
                            let put = format!("PUT {path}");
                            let stored = log.iter().rev().find(|(r, _)| *r == put);
                            match stored {
                                Some((_, data)) => format!(
                                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{}",
                                    data.len(),
                                    String::from_utf8_lossy(data)
                                ),
                                None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
                                    .to_string(),
                            }
                        }
                    };
                    if writer.write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (endpoint, taken)
}

/// Closes `socket` with a reset (RST) rather than an orderly close, as a server that crashed does.
fn reset(socket: std::net::TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: the option is set on a socket this function owns, with a value of the size given.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&raw const linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    drop(socket);
}

/// S3's answer to a caller it slows down.
fn slow_down() -> Reply {
    Reply::Status(
        "503 Slow Down",
        "Content-Type: application/xml\r\n",
        "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
            .to_string(),
    )
}

/// A store of the bucket `b` on a loopback stand-in at `endpoint`.
fn store_at(endpoint: &str) -> S3ObjectStore {
    let table = json!({"bucket": "b", "endpoint": endpoint, "access_key_id": "k",
        "secret_access_key": "s", "timeout_seconds": 5});
    S3ObjectStore::new(S3Settings::from_table(table.as_object().unwrap(), &|_| None).unwrap())
        .unwrap()
}

/// The requests the stand-in took, without their bodies.
fn requests(taken: &Taken) -> Vec<String> {
    taken
        .lock()
        .unwrap()
        .iter()
        .map(|(r, _)| r.clone())
        .collect()
}

/// A server that is briefly overloaded (503 SlowDown to the first two tries of each request) costs
/// a put and a get a few retries, not the call.
#[test]
fn a_put_and_a_get_answered_slow_down_succeed_when_sent_again() {
    let (endpoint, taken) = flaky_s3(|_, _, before| match before % 3 {
        0 | 1 => slow_down(),
        _ => Reply::Works,
    });
    let store = store_at(&endpoint);
    let url = store
        .put("slow/down.txt", b"kept", "text/plain", false)
        .unwrap();
    assert_eq!(url, "s3://b/slow/down.txt");
    assert_eq!(store.get(&url).unwrap(), b"kept");
    assert_eq!(
        requests(&taken),
        [
            "PUT /b/slow/down.txt",
            "PUT /b/slow/down.txt",
            "PUT /b/slow/down.txt"
        ]
        .into_iter()
        .chain(["GET /b/slow/down.txt"; 3])
        .collect::<Vec<_>>()
    );
}

/// A connection reset before the answer is sent again, and a file's body, already read once, is
/// sent again whole.
#[test]
fn a_write_whose_connection_was_reset_is_sent_again_whole() {
    let (endpoint, taken) = flaky_s3(|_, _, before| {
        if before % 2 == 0 {
            Reply::Reset
        } else {
            Reply::Works
        }
    });
    let store = store_at(&endpoint);
    store
        .put("reset/bytes.txt", b"bytes", "text/plain", false)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("file.bin");
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    store
        .put_file("reset/file.bin", &path, "application/octet-stream")
        .unwrap();
    let taken = taken.lock().unwrap();
    let sent: Vec<(&str, usize)> = taken.iter().map(|(r, b)| (r.as_str(), b.len())).collect();
    assert_eq!(
        sent,
        [
            ("PUT /b/reset/bytes.txt", 5),
            ("PUT /b/reset/bytes.txt", 5),
            ("PUT /b/reset/file.bin", data.len()),
            ("PUT /b/reset/file.bin", data.len()),
        ]
    );
    assert!(taken[3].1 == data, "the file was not sent again whole");
}

/// A refusal is not sent again: it would be refused again.
#[test]
fn a_refused_request_is_not_sent_again() {
    let (endpoint, taken) = flaky_s3(|_, _, _| {
        Reply::Status(
            "403 Forbidden",
            "",
            "<Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>".to_string(),
        )
    });
    let store = store_at(&endpoint);
    let err = store
        .put("denied.txt", b"x", "text/plain", false)
        .unwrap_err();
    assert!(matches!(err, StoreError::Config(_)), "{err:?}");
    assert!(
        err.to_string()
            .starts_with(&format!("S3ObjectStore: {endpoint} refused to write s3://b/denied.txt (AccessDenied: Access Denied): ")),
        "{err}"
    );
    let err = store.get("s3://b/denied.txt").unwrap_err();
    assert!(matches!(err, StoreError::Config(_)), "{err:?}");
    assert_eq!(requests(&taken), ["PUT /b/denied.txt", "GET /b/denied.txt"]);
}

/// A server that stays overloaded is given up on after four attempts, and the error says so, in the
/// words a single failure has.
#[test]
fn a_server_that_stays_overloaded_is_given_up_on_after_four_attempts() {
    let (endpoint, taken) = flaky_s3(|_, _, _| slow_down());
    let store = store_at(&endpoint);
    let started = std::time::Instant::now();
    let err = store
        .put("busy.txt", b"x", "text/plain", false)
        .unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("S3ObjectStore: {endpoint} failed to write s3://b/busy.txt after 4 attempts (SlowDown: Please reduce your request rate): the server is unavailable or overloaded (S3 says so to slow its callers down); try again in a moment, and if it goes on, check that it is running and what its logs say, and that [stores.object.config] endpoint names an S3 server")
    );
    assert_eq!(requests(&taken), ["PUT /b/busy.txt"; 4]);
    // Three pauses of 50 to 100, 100 to 200 and 200 to 400 ms.
    let took = started.elapsed();
    assert!(
        took >= std::time::Duration::from_millis(350) && took < std::time::Duration::from_secs(5),
        "{took:?}"
    );
}

/// A server that says when to come back (Retry-After) is not asked again sooner.
#[test]
fn a_retry_waits_as_long_as_retry_after_says() {
    let (endpoint, taken) = flaky_s3(|_, _, before| {
        if before == 0 {
            Reply::Status(
                "503 Service Unavailable",
                "Retry-After: 1\r\n",
                String::new(),
            )
        } else {
            Reply::Works
        }
    });
    let store = store_at(&endpoint);
    let started = std::time::Instant::now();
    store.put("later.txt", b"x", "text/plain", false).unwrap();
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));
    assert_eq!(requests(&taken), ["PUT /b/later.txt"; 2]);
}

/// A server that throttles with 429 (as some S3-compatible servers do, where S3 answers 503) is told
/// what to do when it goes on, as a 503 is; and when its Retry-After set the pauses between attempts,
/// the error says how long they were in all, so that a slow failure is not a mystery.
#[test]
fn a_throttling_or_overloaded_server_that_asked_for_pauses_is_told_what_to_do_and_how_long_was_waited(
) {
    for (status, said, advice) in [
        (
            "429 Too Many Requests",
            "SlowDown: Please reduce your request rate",
            "the server is slowing its callers down (too many requests); try again in a moment, and if it goes on, send it fewer requests at once (fewer runs or uploads at the same time) or ask whoever runs it to raise its rate limit",
        ),
        (
            "503 Service Unavailable",
            "HTTP 503",
            "the server is unavailable or overloaded (S3 says so to slow its callers down); try again in a moment, and if it goes on, check that it is running and what its logs say, and that [stores.object.config] endpoint names an S3 server",
        ),
    ] {
        let body = if status.starts_with("429") {
            "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
        } else {
            ""
        };
        let (endpoint, taken) = flaky_s3(move |_, _, _| {
            Reply::Status(status, "Retry-After: 1\r\n", body.to_string())
        });
        let store = store_at(&endpoint);
        let err = store.get("s3://b/busy.txt").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("S3ObjectStore: {endpoint} failed to read s3://b/busy.txt after 4 attempts ({said}): {advice}; between attempts it waited 3 s in all, as the server's Retry-After asked (up to 5 s a pause)"),
            "{status}"
        );
        assert_eq!(requests(&taken), ["GET /b/busy.txt"; 4], "{status}");
    }
}

/// Each step of a multipart upload (its start, every part, its completion) answered SlowDown the
/// first time is sent again, and the upload completes.
#[test]
fn every_step_of_a_multipart_upload_is_sent_again_after_slow_down() {
    let first_times = std::sync::Mutex::new(std::collections::HashSet::new());
    let (endpoint, taken) = flaky_s3(move |request, target, _| {
        let first = first_times.lock().unwrap().insert(target.to_string());
        if first && !request.starts_with("HEAD") {
            slow_down()
        } else {
            Reply::Works
        }
    });
    let store = store_at(&endpoint);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two-parts.bin");
    let len = agent_env_store_s3::PART_SIZE as usize + 1000;
    std::fs::write(&path, vec![9u8; len]).unwrap();
    store
        .put_file("multi/two-parts.bin", &path, "application/octet-stream")
        .unwrap();
    let taken = taken.lock().unwrap();
    let mut sent: Vec<(&str, usize)> = taken.iter().map(|(r, b)| (r.as_str(), b.len())).collect();
    sent.sort();
    // The part list that completes the upload.
    let completion = sent[3].1;
    assert!(completion > 0, "{sent:?}");
    assert_eq!(
        sent,
        [
            ("HEAD /b/multi/two-parts.bin", 0),
            ("POST /b/multi/two-parts.bin", 0),
            ("POST /b/multi/two-parts.bin", 0),
            ("POST /b/multi/two-parts.bin", completion),
            ("POST /b/multi/two-parts.bin", completion),
            ("PUT /b/multi/two-parts.bin", 1000),
            ("PUT /b/multi/two-parts.bin", 1000),
            ("PUT /b/multi/two-parts.bin", len - 1000),
            ("PUT /b/multi/two-parts.bin", len - 1000),
        ]
    );
}

/// A completion the server carried out but failed to answer is sent again, finds its upload gone
/// and its object there, and counts as done rather than as an object not found.
#[test]
fn a_completion_carried_out_but_not_answered_counts_as_done_when_sent_again() {
    let completions = std::sync::atomic::AtomicUsize::new(0);
    let (endpoint, taken) = flaky_s3(move |request, target, _| {
        if !(request.starts_with("POST") && target.contains("uploadId=")) {
            return Reply::Works;
        }
        let xml = |code: &str, message: &str| {
            format!("<Error><Code>{code}</Code><Message>{message}</Message></Error>")
        };
        match completions.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
            0 => Reply::Status(
                "500 Internal Server Error",
                "",
                xml("InternalError", "We encountered an internal error."),
            ),
            _ => Reply::Status(
                "404 Not Found",
                "",
                xml("NoSuchUpload", "The specified upload does not exist."),
            ),
        }
    });
    let store = store_at(&endpoint);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two-parts.bin");
    std::fs::write(
        &path,
        vec![3u8; agent_env_store_s3::PART_SIZE as usize + 10],
    )
    .unwrap();
    let url = store
        .put_file("multi/lost-answer.bin", &path, "application/octet-stream")
        .unwrap();
    assert_eq!(url, "s3://b/multi/lost-answer.bin");
    let mut methods: Vec<String> = requests(&taken)
        .into_iter()
        .map(|r| r.split(' ').next().unwrap().to_string())
        .collect();
    methods.sort();
    // The first look, the start, two parts, two completions, and the look that found the object.
    assert_eq!(
        methods,
        ["HEAD", "HEAD", "POST", "POST", "POST", "PUT", "PUT"]
    );
}

/// S3's error document for `code`, as a completion's 200 may carry it.
fn error_xml(code: &str, message: &str) -> String {
    format!("<Error><Code>{code}</Code><Message>{message}</Message></Error>")
}

/// A completion answered `200 OK` whose body is this error document.
fn failed_after_answering(code: &str, message: &str) -> Reply {
    Reply::Status(
        "200 OK",
        "Content-Type: application/xml\r\n",
        error_xml(code, message),
    )
}

/// Puts a file of two parts at `key` on the stand-in at `endpoint`.
fn put_two_parts(endpoint: &str, key: &str) -> Result<String, StoreError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two-parts.bin");
    std::fs::write(
        &path,
        vec![5u8; agent_env_store_s3::PART_SIZE as usize + 10],
    )
    .unwrap();
    store_at(endpoint).put_file(key, &path, "application/octet-stream")
}

/// The completions (POSTs naming an upload) among the requests the stand-in took.
fn completions(taken: &Taken) -> usize {
    requests(taken)
        .iter()
        .filter(|r| r.starts_with("POST"))
        .count()
        - 1
}

/// A completion answered 200 whose body is S3's InternalError or SlowDown (S3 sends the status before
/// the work ends) is sent again, as a 500 or a 503 is, and the upload completes.
#[test]
fn a_completion_answered_200_with_an_error_inside_is_sent_again() {
    for code in ["InternalError", "SlowDown"] {
        let sent = std::sync::atomic::AtomicUsize::new(0);
        let (endpoint, taken) = flaky_s3(move |request, target, _| {
            let completion = request.starts_with("POST") && target.contains("uploadId=");
            if completion && sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                failed_after_answering(code, "We encountered an internal error.")
            } else {
                Reply::Works
            }
        });
        let url = put_two_parts(&endpoint, "multi/inside.bin").unwrap();
        assert_eq!(url, "s3://b/multi/inside.bin", "{code}");
        assert_eq!(completions(&taken), 2, "{code}");
    }
}

/// A completion answered 200 with an InternalError inside every time is given up on after four
/// attempts, told as a server failing on its side, and its upload is called off.
#[test]
fn a_completion_failing_inside_its_200_every_time_is_given_up_on_after_four_attempts() {
    let (endpoint, taken) = flaky_s3(|request, target, _| {
        if request.starts_with("POST") && target.contains("uploadId=") {
            failed_after_answering("InternalError", "We encountered an internal error.")
        } else {
            Reply::Works
        }
    });
    let err = put_two_parts(&endpoint, "multi/never.bin").unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("S3ObjectStore: {endpoint} failed to complete the upload of s3://b/multi/never.bin after 4 attempts (InternalError: We encountered an internal error): the server failed on its side; try again, and if it goes on, check what its logs say, and that [stores.object.config] endpoint names an S3 server")
    );
    assert_eq!(completions(&taken), 4);
    assert!(
        requests(&taken).contains(&"DELETE /b/multi/never.bin".to_string()),
        "the upload was not called off: {:?}",
        requests(&taken)
    );
}

/// A completion whose 200 carried an InternalError, but which the server carried out, finds its
/// upload gone and its object there when sent again, and counts as done.
#[test]
fn a_completion_failing_inside_its_200_but_carried_out_counts_as_done_when_sent_again() {
    let sent = std::sync::atomic::AtomicUsize::new(0);
    let (endpoint, taken) = flaky_s3(move |request, target, _| {
        if !(request.starts_with("POST") && target.contains("uploadId=")) {
            return Reply::Works;
        }
        match sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
            0 => failed_after_answering("InternalError", "We encountered an internal error."),
            _ => Reply::Status(
                "404 Not Found",
                "",
                error_xml("NoSuchUpload", "The specified upload does not exist."),
            ),
        }
    });
    let url = put_two_parts(&endpoint, "multi/done-inside.bin").unwrap();
    assert_eq!(url, "s3://b/multi/done-inside.bin");
    assert_eq!(completions(&taken), 2);
}

/// A write-once write that finds its key taken only when sent again says an earlier attempt of its
/// own may have written it.
#[test]
fn a_write_finding_its_key_taken_when_sent_again_says_it_may_be_its_own() {
    let (endpoint, _) = flaky_s3(|_, _, before| {
        if before == 0 {
            Reply::Reset
        } else {
            Reply::Status(
                "412 Precondition Failed",
                "",
                "<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>".to_string(),
            )
        }
    });
    let err = store_at(&endpoint)
        .put("taken.txt", b"x", "text/plain", false)
        .unwrap_err();
    assert!(matches!(err, StoreError::AlreadyExists(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "Object already exists at s3://b/taken.txt: found by attempt 2 of this write, so an earlier attempt the server failed to answer may have written it."
    );
}

/// How the stand-in of [`serving`] answers one GET of its object.
#[derive(Clone, Copy)]
enum Serve {
    /// As S3 does (the range asked for, else the whole object), its body cut after this many bytes.
    CutAfter(usize),
    /// As S3 does, the body whole.
    Whole,
    /// The whole object with this ETag, answered 200 whatever the Range and If-Match (a server that
    /// ignores both).
    IgnoringRange(&'static str),
    /// 412 Precondition Failed: the object's ETag is no longer the one If-Match names.
    Changed,
    /// 206 with the whole object, from its first byte, whatever range was asked for.
    FromTheStart,
    /// 503 SlowDown.
    SlowDown,
}

/// The ETag of the object [`serving`] serves.
const ETAG: &str = "\"v1\"";

/// 1000 bytes of letters, each place's own.
fn the_object() -> String {
    (0..1000u32)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect()
}

/// What the GETs a stand-in took asked for: their Range and If-Match.
type Asked = Arc<std::sync::Mutex<Vec<(Option<String>, Option<String>)>>>;

/// A stand-in serving [`the_object`] at every key, its GETs answered as `script` says in turn (the
/// rest whole). Returns its endpoint and what each GET asked for.
fn serving(script: Vec<Serve>) -> (String, Asked) {
    let asked: Asked = Arc::default();
    let log = Arc::clone(&asked);
    let object = the_object();
    let (endpoint, _) = flaky_s3_seeing(move |seen| {
        let (range, if_match) = (seen.header("range"), seen.header("if-match"));
        let serve = {
            let mut log = log.lock().unwrap();
            log.push((range.clone(), if_match));
            script.get(log.len() - 1).copied().unwrap_or(Serve::Whole)
        };
        let from: Option<usize> = range
            .as_deref()
            .and_then(|r| r.strip_prefix("bytes=")?.strip_suffix('-')?.parse().ok());
        let answer = |status, etag: &str, from: Option<usize>, cut: Option<usize>| {
            let rest = &object[from.unwrap_or(0)..];
            let content_range = from.map_or(String::new(), |start| {
                format!(
                    "Content-Range: bytes {start}-{}/{}\r\n",
                    object.len() - 1,
                    object.len()
                )
            });
            Reply::Cut {
                status,
                headers: format!("ETag: {etag}\r\nConnection: close\r\n{content_range}"),
                body: rest[..cut.unwrap_or(rest.len()).min(rest.len())].to_string(),
                promised: rest.len(),
            }
        };
        let status = if from.is_some() {
            "206 Partial Content"
        } else {
            "200 OK"
        };
        match serve {
            Serve::CutAfter(bytes) => answer(status, ETAG, from, Some(bytes)),
            Serve::Whole => answer(status, ETAG, from, None),
            Serve::IgnoringRange(etag) => answer("200 OK", etag, None, None),
            Serve::FromTheStart => answer("206 Partial Content", ETAG, Some(0), None),
            Serve::Changed => Reply::Status(
                "412 Precondition Failed",
                "",
                error_xml(
                    "PreconditionFailed",
                    "At least one of the pre-conditions you specified did not hold",
                ),
            ),
            Serve::SlowDown => slow_down(),
        }
    });
    (endpoint, asked)
}

/// The ways to read an object: `get`, `download_to_file` and `open`.
const WAYS: [&str; 3] = ["get", "download_to_file", "open"];

/// Reads `url` from the stand-in at `endpoint` the way `way` (one of [`WAYS`]) names: the bytes it
/// read, or its error's words.
fn read_one_way(endpoint: &str, url: &str, way: &str) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let store = store_at(endpoint);
    match way {
        "get" => store.get(url).map_err(|e| e.to_string()),
        "download_to_file" => {
            let dir = tempfile::tempdir().unwrap();
            let dest = dir.path().join("out.bin");
            match store.download_to_file(url, &dest) {
                Ok(()) => Ok(std::fs::read(&dest).unwrap()),
                Err(err) => {
                    // Half an object is not left looking like the whole of it.
                    assert!(!dest.exists(), "a failed download left {}", dest.display());
                    Err(err.to_string())
                }
            }
        }
        _ => {
            let mut read = Vec::new();
            match store.open(url).unwrap().read_to_end(&mut read) {
                Ok(_) => Ok(read),
                Err(err) => Err(err.to_string()),
            }
        }
    }
}

/// A download whose connection is cut midway goes on from where it was cut, asking for the rest
/// of the same object (Range and If-Match), and reads the object whole, however it is read.
#[test]
fn a_download_cut_midway_goes_on_from_where_it_was_cut() {
    for way in WAYS {
        let (endpoint, asked) = serving(vec![Serve::CutAfter(300), Serve::CutAfter(200)]);
        let read = read_one_way(&endpoint, "s3://b/cut/twice.bin", way);
        assert_eq!(read.as_deref(), Ok(the_object().as_bytes()), "{way}");
        let asked = asked.lock().unwrap();
        let etag = Some(ETAG.to_string());
        assert_eq!(
            *asked,
            [
                (None, None),
                (Some("bytes=300-".to_string()), etag.clone()),
                (Some("bytes=500-".to_string()), etag),
            ],
            "{way}"
        );
    }
}

/// A server that ignores the range answers the whole object again: its first bytes, which had
/// arrived, are read past rather than appended twice.
#[test]
fn a_resumed_download_the_server_answers_whole_is_read_past_what_had_arrived() {
    let (endpoint, _) = serving(vec![Serve::CutAfter(300), Serve::IgnoringRange(ETAG)]);
    let store = store_at(&endpoint);
    assert_eq!(
        store.get("s3://b/cut/ignored.bin").unwrap(),
        the_object().as_bytes()
    );
}

/// An object replaced while it was being read (412 to If-Match, or a whole answer of another ETag
/// from a server that ignores both headers) is not stitched onto the bytes that had arrived: the read
/// fails saying so and to read it again.
#[test]
fn a_download_of_an_object_replaced_midway_fails_saying_to_read_it_again() {
    for then in [Serve::Changed, Serve::IgnoringRange("\"v2\"")] {
        let (endpoint, _) = serving(vec![Serve::CutAfter(300), then]);
        let err = store_at(&endpoint)
            .get("s3://b/cut/replaced.bin")
            .unwrap_err();
        assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!("S3ObjectStore: s3://b/cut/replaced.bin was replaced on {endpoint} while it was being read: the read was cut with 300 of 1000 bytes arrived, and the object there now is another; read it again")
        );
    }
}

/// Only the rest is taken as the rest: a part that starts elsewhere fails the read rather than being
/// stitched on.
#[test]
fn a_resumed_download_answered_with_another_part_fails_rather_than_stitch_it_on() {
    let (endpoint, _) = serving(vec![Serve::CutAfter(300), Serve::FromTheStart]);
    let err = store_at(&endpoint)
        .get("s3://b/cut/elsewhere.bin")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("S3ObjectStore: {endpoint} answered a request for the rest of s3://b/cut/elsewhere.bin from byte 300 with another part of it (Content-Range: bytes 0-999/1000); read it again")
    );
}

/// A download cut every time is given up on after four attempts in all, however it is read, and the
/// error says how many were made and how much had arrived.
#[test]
fn a_download_cut_every_time_is_given_up_on_after_four_attempts_saying_how_much_arrived() {
    for way in WAYS {
        let (endpoint, asked) = serving(vec![Serve::CutAfter(100); 4]);
        let read = read_one_way(&endpoint, "s3://b/cut/always.bin", way);
        assert_eq!(
            read.unwrap_err(),
            format!("S3ObjectStore: reading s3://b/cut/always.bin from {endpoint} was cut off after 4 attempts, with 400 of 1000 bytes arrived (Peer disconnected); check that the server is running and not overloaded and that the network to it is up, then read it again"),
            "{way}"
        );
        assert_eq!(asked.lock().unwrap().len(), 4, "{way}");
    }
}

/// Asking for the rest counts against the same four attempts as the cuts do: a server that then
/// stays overloaded fails the read as it would fail a request, saying how much had arrived.
#[test]
fn a_resumed_download_answered_slow_down_gives_up_within_the_same_four_attempts() {
    let (endpoint, asked) = serving(vec![
        Serve::CutAfter(100),
        Serve::SlowDown,
        Serve::CutAfter(50),
        Serve::SlowDown,
    ]);
    let err = store_at(&endpoint).get("s3://b/cut/busy.bin").unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("S3ObjectStore: {endpoint} failed to read s3://b/cut/busy.bin after 4 attempts (SlowDown: Please reduce your request rate): the server is unavailable or overloaded (S3 says so to slow its callers down); try again in a moment, and if it goes on, check that it is running and what its logs say, and that [stores.object.config] endpoint names an S3 server; 150 of 1000 bytes had arrived when the read was cut")
    );
    assert_eq!(asked.lock().unwrap().len(), 4);
}
