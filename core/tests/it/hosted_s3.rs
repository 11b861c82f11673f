//! `[stores.object] impl = "S3ObjectStore"` as a user configures it, against a real SeaweedFS S3 gateway
//! started by `scripts/servers/seaweedfs.sh`: `config check` reaches the server before any work and names
//! what to fix, and `store check object` runs the whole kit, grant cases included, through the binary.

use std::path::Path;
use std::process::{Command, Output};

use agent_env_test_support::servers::shared_seaweedfs;
use serde_json::Value;

use crate::support::IsolatedDirs;

pub(crate) struct World {
    dir: tempfile::TempDir,
}

impl World {
    pub(crate) fn with_config(text: &str) -> World {
        let world = World {
            dir: tempfile::tempdir().unwrap(),
        };
        let folder = world.dir.path().join("work/.agentenv");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("config.toml"), text).unwrap();
        world
    }

    pub(crate) fn run(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        self.command(args, vars).output().unwrap()
    }

    /// The command `run` runs, to start it another way.
    pub(crate) fn command(&self, args: &[&str], vars: &[(&str, &str)]) -> Command {
        let base: &Path = self.dir.path();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-env"));
        cmd.args(args).current_dir(base.join("work")).env_clear();
        IsolatedDirs {
            home: base.join("home"),
            xdg_data: base.join("data"),
            xdg_state: base.join("state"),
            xdg_config: base.join("config"),
            plugins: base.join("data/agent-env/plugins"),
        }
        .apply(&mut cmd);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        cmd
    }
}

/// A config selecting the S3 store on the shared server, credentials by `env:` reference.
fn s3_config(bucket: &str, endpoint: &str) -> String {
    format!(
        "[stores.object]\nimpl = \"S3ObjectStore\"\n\n[stores.object.config]\nbucket = \"{bucket}\"\nendpoint = \"{endpoint}\"\naccess_key_id = \"env:TEAM_S3_KEY\"\nsecret_access_key = \"env:TEAM_S3_SECRET\"\n"
    )
}

fn credentials() -> [(&'static str, String); 2] {
    let server = shared_seaweedfs();
    [
        ("TEAM_S3_KEY", server.value("AWS_ACCESS_KEY_ID").to_string()),
        (
            "TEAM_S3_SECRET",
            server.value("AWS_SECRET_ACCESS_KEY").to_string(),
        ),
    ]
}

/// Stores the artifact `team/big` (one file of `size` bytes) and the task `team/load` that loads it
/// into a sandbox, through the hosted stores `world` is configured with.
fn stored_loading_task(world: &World, creds: &[(&'static str, String)], size: usize) {
    let work = world.dir.path().join("work");
    std::fs::create_dir_all(work.join("big")).unwrap();
    std::fs::write(work.join("big/f1.bin"), vec![7u8; size]).unwrap();
    std::fs::write(
        work.join("load.json"),
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
 {"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "team/big",
  "destination_path": "/app/big"}]"#,
    )
    .unwrap();
    for args in [
        &["artifact", "put", "big", "--id", "team/big"][..],
        &["task", "put", "load.json", "--id", "team/load"],
    ] {
        let out = world.run(args, &vars(creds));
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn vars<'a>(pairs: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    pairs.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

pub(crate) fn problems(out: &Output) -> Vec<String> {
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "config check --json printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    json["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["message"].as_str().unwrap().to_string())
        .collect()
}

/// The `code` of each problem `config check --json` printed.
pub(crate) fn problem_codes(out: &Output) -> Vec<String> {
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    json["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn config_check_reaches_the_bucket_and_store_check_runs_every_object_case() {
    let endpoint = shared_seaweedfs().value("S3_ENDPOINT").to_string();
    let world = World::with_config(&s3_config("core", &endpoint));
    let creds = credentials();
    let out = world.run(&["config", "check"], &vars(&creds));
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    let out = world.run(&["store", "check", "object", "--json"], &vars(&creds));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(out.status.success(), "{report:#}");
    let passed = report["cases"]
        .as_array()
        .map(|cases| cases.iter().filter(|c| c["outcome"] == "passed").count());
    assert_eq!(passed, Some(30), "{report:#}");
}

#[test]
fn a_missing_bucket_wrong_credentials_or_a_server_that_is_down_are_reported_before_any_work() {
    let endpoint = shared_seaweedfs().value("S3_ENDPOINT").to_string();
    let creds = credentials();

    let world = World::with_config(&s3_config("no-such-bucket", &endpoint));
    let out = world.run(&["config", "check", "--json"], &vars(&creds));
    assert_eq!(out.status.code(), Some(1));
    let found = problems(&out);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains(
            "S3ObjectStore: the bucket 'no-such-bucket' does not exist at http://127.0.0.1:"
        ),
        "{found:?}"
    );

    let world = World::with_config(&s3_config("core", &endpoint));
    let wrong = [
        ("TEAM_S3_KEY", creds[0].1.clone()),
        ("TEAM_S3_SECRET", "wrong-secret-value".to_string()),
    ];
    let out = world.run(&["config", "check", "--json"], &vars(&wrong));
    assert_eq!(out.status.code(), Some(1));
    let found = problems(&out).join("\n");
    assert!(found.contains("check the credentials"), "{found}");
    assert!(
        !found.contains("wrong-secret-value"),
        "the secret was printed: {found}"
    );

    let world = World::with_config(&s3_config("core", "http://127.0.0.1:9"));
    let out = world.run(&["config", "check", "--json"], &vars(&creds));
    assert_eq!(out.status.code(), Some(1));
    let found = problems(&out).join("\n");
    assert!(
        found.contains("could not reach http://127.0.0.1:9"),
        "{found}"
    );
}

/// Credentials that may read and list the bucket but not write to it fail `config check`, which says
/// so (it proves writing by an upload it calls off), and a put with them says they may not write,
/// not to check them.
#[test]
fn read_only_credentials_are_named_by_config_check_and_by_a_refused_put() {
    let server = shared_seaweedfs();
    let endpoint = server.value("S3_ENDPOINT").to_string();
    let world = World::with_config(&s3_config("core", &endpoint));
    let reader = [
        (
            "TEAM_S3_KEY",
            server.value("S3_READONLY_ACCESS_KEY_ID").to_string(),
        ),
        (
            "TEAM_S3_SECRET",
            server.value("S3_READONLY_SECRET_ACCESS_KEY").to_string(),
        ),
    ];
    let out = world.run(&["config", "check", "--json"], &vars(&reader));
    assert_eq!(out.status.code(), Some(1));
    let found = problems(&out);
    assert_eq!(
        found,
        [format!("S3ObjectStore: these credentials may read the bucket 'core' but not write to it: {endpoint} refused to start an upload (AccessDenied: Access Denied), so every put would fail; give them write access to it (s3:PutObject, and s3:AbortMultipartUpload to call off a failed upload), or set access_key_id and secret_access_key in [stores.object.config] to credentials that may write")]
    );

    let folder = world.dir.path().join("work/greeting");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("hello.txt"), "hello\n").unwrap();
    let out = world.run(
        &["artifact", "put", "greeting", "--id", "team/greeting"],
        &vars(&reader),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("writing hello.txt to the object store: S3ObjectStore: {endpoint} refused to write s3://core/artifacts/")),
        "{stderr}"
    );
    assert!(
        stderr.contains("(AccessDenied: Access Denied): these credentials may not write to the bucket 'core'; give them write access to it"),
        "{stderr}"
    );
    assert!(!stderr.contains("check the credentials"), "{stderr}");
    // Nothing above the error to point at: what to change is in it.
    assert!(
        stderr.contains("; put the folder again once the store's settings let it write\n"),
        "{stderr}"
    );
    assert!(!stderr.contains("see above"), "{stderr}");
}

/// Restarts a paused process when dropped, so a server a test paused is stopped like any other, even
/// when the test fails first.
struct Paused(i32);

impl Paused {
    fn pause(pid: i32) -> Paused {
        // SAFETY: signals the server this test started, by the id its script printed.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
        Paused(pid)
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        // SAFETY: as in `pause`.
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

/// `config check` against a paused S3 server gives up within seconds, saying what it waited for,
/// rather than after the two minutes real transfers may wait.
#[test]
fn config_check_gives_up_on_a_paused_server_after_ten_seconds() {
    // A server of its own: pausing the shared one would stall the other tests.
    let server = agent_env_test_support::servers::seaweedfs(&["paused"]);
    let pid: i32 = server.value("WEED_PID").parse().unwrap();
    let endpoint = server.value("S3_ENDPOINT").to_string();
    let world = World::with_config(&s3_config("paused", &endpoint));
    let creds = [
        ("TEAM_S3_KEY", server.value("AWS_ACCESS_KEY_ID").to_string()),
        (
            "TEAM_S3_SECRET",
            server.value("AWS_SECRET_ACCESS_KEY").to_string(),
        ),
    ];
    let out = world.run(&["config", "check", "--json"], &vars(&creds));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let paused = Paused::pause(pid);
    let out = world.run(&["config", "check", "--json"], &vars(&creds));
    drop(paused);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        problems(&out),
        [format!("S3ObjectStore: {endpoint} did not answer a listing of the bucket 'paused' within 10 s; check that the server is running and not paused or overloaded, and that [stores.object.config] endpoint names an S3 server")]
    );
}

/// Mistakes in the table that are said as a URL parser's error or twice are said once, with what to
/// write: a misspelled bucket, an endpoint without its scheme, virtual-host style with an IP address.
#[test]
fn table_mistakes_are_said_once_with_what_to_write() {
    let check = |table: &str| {
        let world = World::with_config(&format!(
            "[stores.object]\nimpl = \"S3ObjectStore\"\n\n[stores.object.config]\n{table}"
        ));
        let out = world.run(&["config", "check", "--json"], &[]);
        assert_eq!(out.status.code(), Some(1));
        problems(&out)
    };
    let found = check("bukcet = \"team\"\nendpoint = \"http://127.0.0.1:9000\"\n");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("unknown key 'bukcet'")
            && found[0].contains("did you mean 'bucket' for 'bukcet'?"),
        "{found:?}"
    );
    assert_eq!(
        check("bucket = \"team\"\nendpoint = \"127.0.0.1:41665\"\n"),
        ["S3ObjectStore: endpoint must start with http:// or https://, got '127.0.0.1:41665'; write endpoint = \"http://127.0.0.1:41665\" (or https:// if the server speaks TLS)"]
    );
    assert_eq!(
        check("bucket = \"team\"\nendpoint = \"http://127.0.0.1:41665\"\npath_style = false\n"),
        ["S3ObjectStore: path_style = false puts the bucket in the host name (virtual-host style), which needs the endpoint to name a host, but 'http://127.0.0.1:41665' names the IP address 127.0.0.1; set path_style = true for an endpoint that is an IP address or localhost"]
    );
}

/// With no key pair in the config, the store reads the AWS variables: half a pair there is named by
/// `config check` (not sent as unsigned requests the server answers "Access Denied"), and the whole
/// pair reaches the bucket.
#[test]
fn half_a_key_pair_in_the_environment_is_named_before_any_work() {
    let endpoint = shared_seaweedfs().value("S3_ENDPOINT").to_string();
    let [(_, key), (_, secret)] = credentials();
    let world = World::with_config(&format!(
        "[stores.object]\nimpl = \"S3ObjectStore\"\n\n[stores.object.config]\nbucket = \"core\"\nendpoint = \"{endpoint}\"\n"
    ));
    let out = world.run(
        &["config", "check", "--json"],
        &[("AWS_ACCESS_KEY_ID", &key)],
    );
    assert_eq!(out.status.code(), Some(1));
    let found = problems(&out).join("\n");
    assert!(
        found.contains(
            "S3ObjectStore: the environment sets AWS_ACCESS_KEY_ID but not AWS_SECRET_ACCESS_KEY"
        ),
        "{found}"
    );

    let out = world.run(
        &["config", "check"],
        &[
            ("AWS_ACCESS_KEY_ID", &key),
            ("AWS_SECRET_ACCESS_KEY", &secret),
        ],
    );
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Starts `artifact put` of a file of three parts against `server`, waits until a part is on its way,
/// then sends it two Ctrl-Cs: its exit code and stderr.
fn put_stopped_at_once_midway(
    server: &agent_env_test_support::slow_bodies::SlowBodyServer,
) -> (Option<i32>, String) {
    let world = World::with_config(&s3_config("b", &server.endpoint()));
    let creds = [
        ("TEAM_S3_KEY", "key".to_string()),
        ("TEAM_S3_SECRET", "secret".to_string()),
    ];
    let folder = world.dir.path().join("work/big");
    std::fs::create_dir_all(&folder).unwrap();
    // Three parts of zeros that take no disk.
    std::fs::File::create(folder.join("sparse.bin"))
        .unwrap()
        .set_len(3 * agent_env_store_s3::PART_SIZE)
        .unwrap();
    let child = world
        .command(
            &["artifact", "put", "big", "--id", "team/big"],
            &vars(&creds),
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !server.requests().iter().any(|r| r.contains("partNumber=")) {
        assert!(
            std::time::Instant::now() < deadline,
            "no part was sent: {:?}",
            server.requests()
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    for _ in 0..2 {
        // SAFETY: kill signals our own child, which has not been reaped.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        // Past the time within which the same signal again is taken for the first one's echo.
        std::thread::sleep(
            agent_env::run::cancel::SAME_STOP_WITHIN + std::time::Duration::from_millis(100),
        );
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A link that takes an upload's parts slowly but keeps moving: a put is midway for seconds.
fn trickling_server() -> agent_env_test_support::slow_bodies::SlowBodyServer {
    use agent_env_test_support::slow_bodies::{SlowBody, SlowBodyServer};
    SlowBodyServer::start(SlowBody::TricklesUpload {
        chunk: 64 << 10,
        pause: std::time::Duration::from_millis(50),
    })
}

/// A second Ctrl-C stops `artifact put` at once, in the middle of a multipart upload: the upload is
/// called off on the server (aborted, its parts dropped), not left for a bucket's lifecycle rule.
#[test]
fn a_put_stopped_at_once_calls_off_the_upload_under_way() {
    let server = trickling_server();
    let (code, stderr) = put_stopped_at_once_midway(&server);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("Stopped at once: stopped while writing sparse.bin")
            && stderr.contains("; the upload under way was called off"),
        "{stderr}"
    );
    let requests = server.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.starts_with("DELETE /b/") && r.contains("uploadId=")),
        "{requests:?}"
    );
}

/// When the server does not take the abort, the user is told the upload's parts stay, and what to
/// abort by hand.
#[test]
fn a_put_stopped_at_once_whose_abort_is_refused_says_what_stays() {
    let server = trickling_server();
    server.refuse_aborts();
    let (code, stderr) = put_stopped_at_once_midway(&server);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("the upload under way could not be called off")
            && stderr.contains("its parts stay in bucket 'b'")
            && stderr.contains("upload 'stalled-upload' of key '"),
        "{stderr}"
    );
    assert!(!stderr.contains("was called off"), "{stderr}");
}

/// An endpoint or a bucket the config file names by a reference is blamed on where it was read from
/// (the variable to fix), as a PostgreSQL dsn is, and every message names the table as it is written:
/// `[stores.object.config]`.
#[test]
fn an_endpoint_or_bucket_read_through_a_reference_names_the_variable() {
    let creds = [
        ("TEAM_S3_KEY", "key".to_string()),
        ("TEAM_S3_SECRET", "secret".to_string()),
    ];
    let config = |bucket: &str, endpoint: &str| {
        format!(
            "[stores.object]\nimpl = \"S3ObjectStore\"\n\n[stores.object.config]\nbucket = \"{bucket}\"\nendpoint = \"{endpoint}\"\naccess_key_id = \"env:TEAM_S3_KEY\"\nsecret_access_key = \"env:TEAM_S3_SECRET\"\n"
        )
    };
    let refused = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let world = World::with_config(&config("b", "env:S3_ENDPOINT"));
    let mut with_endpoint = vars(&creds);
    with_endpoint.push(("S3_ENDPOINT", &refused));
    let out = world.run(&["config", "check", "--json"], &with_endpoint);
    assert_eq!(out.status.code(), Some(1));
    let found = problems(&out).join("\n");
    assert!(
        found.contains(&format!("S3ObjectStore could not reach {refused}"))
            && found.contains("check that the server is running and that [stores.object.config] endpoint (read from the environment variable S3_ENDPOINT) names it"),
        "{found}"
    );
    assert_eq!(problem_codes(&out), ["store-unreachable"], "{found}");

    // A server that answers every request: the bucket does not exist.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut socket in listener.incoming().flatten() {
            use std::io::{Read, Write};
            let mut request = [0u8; 4096];
            let _ = socket.read(&mut request);
            let body = "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>";
            let _ = socket.write_all(
                format!("HTTP/1.1 404 Not Found\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
                    .as_bytes(),
            );
        }
    });
    let world = World::with_config(&config("env:S3_BUCKET", &endpoint));
    let mut with_bucket = vars(&creds);
    with_bucket.push(("S3_BUCKET", "no-such-bucket"));
    let out = world.run(&["config", "check", "--json"], &with_bucket);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        problems(&out),
        [format!("S3ObjectStore: the bucket 'no-such-bucket' does not exist at {endpoint}; create it, or set [stores.object.config] bucket (read from the environment variable S3_BUCKET) to one that does")]
    );
}

/// An `https://` endpoint whose server speaks plain HTTP is told to use `http://`.
#[test]
fn an_https_endpoint_of_a_plain_http_server_is_told_to_use_http() {
    // A plain HTTP server that answers whatever comes (a TLS hello included) with a 400, as S3
    // servers do.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("https://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut socket in listener.incoming().flatten() {
            use std::io::{Read, Write};
            let mut hello = [0u8; 512];
            let _ = socket.read(&mut hello);
            let _ = socket.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let world = World::with_config(&s3_config("b", &endpoint));
    let creds = [
        ("TEAM_S3_KEY", "key".to_string()),
        ("TEAM_S3_SECRET", "secret".to_string()),
    ];
    let out = world.run(&["config", "check"], &vars(&creds));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(
            "the server answered in plain HTTP, not TLS: write the endpoint with http://"
        ),
        "{said}"
    );
}

/// A signal stops a run whose `load_artifact` step waits on a paused S3 server within moments, as
/// any other run stops (exit 143 for SIGTERM), not once the server answers or the store's timeout
/// (two minutes) passes, after which a service manager would have killed it, sandbox and all.
#[test]
fn a_signal_stops_a_run_whose_artifact_download_stalled() {
    // A server of its own: pausing the shared one would stall the other tests.
    let server = agent_env_test_support::servers::seaweedfs(&["stalls"]);
    let pid: i32 = server.value("WEED_PID").parse().unwrap();
    let world = World::with_config(&s3_config("stalls", server.value("S3_ENDPOINT")));
    let creds = [
        ("TEAM_S3_KEY", server.value("AWS_ACCESS_KEY_ID").to_string()),
        (
            "TEAM_S3_SECRET",
            server.value("AWS_SECRET_ACCESS_KEY").to_string(),
        ),
    ];
    stored_loading_task(&world, &creds, 4 << 20);

    let paused = Paused::pause(pid);
    let child = world
        .command(&["task", "run", "team/load", "--json"], &vars(&creds))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Time to reach the step and wait on the server.
    std::thread::sleep(std::time::Duration::from_secs(3));
    // SAFETY: kill signals our own child, which has not been reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = wait_at_most(child, std::time::Duration::from_secs(20));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{stderr}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(report["status"], "cancelled", "{report:#}");

    // The same folder put again reads the stored objects back first, which waits on the server
    // too: a Ctrl-C stops that read, and the put stops before writing anything.
    let child = world
        .command(
            &["artifact", "put", "big", "--id", "team/big"],
            &vars(&creds),
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = wait_at_most(child, std::time::Duration::from_secs(20));
    drop(paused);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("stopped by a signal with none of its 1 file written whole"),
        "{stderr}"
    );
}

/// `child`'s output, once it exits; it is killed, and the test fails, if that takes longer than
/// `limit` (a paused server the test holds is resumed when the test unwinds).
fn wait_at_most(mut child: std::process::Child, limit: std::time::Duration) -> Output {
    let deadline = std::time::Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "it did not stop within {limit:?} of the signal: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// A download the server stops sending fails `load_artifact` with the store's words first (what
/// stalled, and what to do), then where in the sandbox the file was to go, not as a failure to
/// write a path on the host.
#[test]
fn a_stalled_download_is_said_as_the_stall_it_is() {
    use agent_env_test_support::slow_bodies::{SlowBody, SlowBodyServer};
    let server = SlowBodyServer::start(SlowBody::StallsDownload {
        promised: 1 << 20,
        sent: 1 << 10,
    });
    let endpoint = server.endpoint();
    let world = World::with_config(&format!(
        "{}timeout_seconds = 1\n",
        s3_config("b", &endpoint)
    ));
    let creds = [
        ("TEAM_S3_KEY", "key".to_string()),
        ("TEAM_S3_SECRET", "secret".to_string()),
    ];
    stored_loading_task(&world, &creds, 1 << 20);
    let out = world.run(&["task", "run", "team/load"], &vars(&creds));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "{said}");
    let stalled =
        "into the sandbox at /app/big/f1.bin: S3ObjectStore: reading s3://b/artifacts/file/team/big/";
    assert!(
        said.contains("failed at step 'load': RuntimeError: can't copy s3://b/"),
        "{said}"
    );
    assert!(said.contains(stalled), "{said}");
    assert!(
        said.contains(&format!("/f1.bin from {endpoint} stalled: no data arrived for 1 s; check that the server is running")),
        "{said}"
    );
    assert!(!said.contains("writing /"), "{said}");
}

/// A signal while a file's upload has stalled ends the put as the signal says (exit 130, nothing
/// recorded, what it left), not as the stall's error once the store's timeout ends the upload.
#[test]
fn a_put_signalled_while_its_upload_stalls_ends_as_the_signal_says() {
    use agent_env_test_support::slow_bodies::{SlowBody, SlowBodyServer};
    let server = SlowBodyServer::start(SlowBody::StallsUpload { taken: 64 << 10 });
    let world = World::with_config(&format!(
        "{}timeout_seconds = 2\n",
        s3_config("b", &server.endpoint())
    ));
    let creds = [
        ("TEAM_S3_KEY", "key".to_string()),
        ("TEAM_S3_SECRET", "secret".to_string()),
    ];
    let folder = world.dir.path().join("work/big");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("f1.bin"), vec![7u8; 4 << 20]).unwrap();
    let child = world
        .command(
            &["artifact", "put", "big", "--id", "team/big"],
            &vars(&creds),
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !server.requests().iter().any(|r| r.starts_with("PUT ")) {
        assert!(
            std::time::Instant::now() < deadline,
            "no file was sent: {:?}",
            server.requests()
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // SAFETY: kill signals our own child, which has not been reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains(
            "Stopping once the file being written is written; another Ctrl-C stops at once"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("stopped by a signal with none of its 1 file written whole to the object store under artifacts/file/team"),
        "{stderr}"
    );
    assert!(!stderr.contains("stalled"), "{stderr}");
}
