//! Black-box: `plugin add` from the registries a team runs, on loopback only: the credentials in a
//! spec's URL masked in everything shown, a package index that fails (5xx) or is no index (404 at
//! its own address), pip told to use no index (`PIP_NO_INDEX`), an index of several that pip could
//! not reach, a module Go cannot verify against the checksum database, and a Go command's folder
//! added without `--installer go`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::plugins::Sandbox;

/// What a command printed, stdout then stderr.
fn both(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The folders of the real PATH, when it has `tool`.
fn dir_of(tool: &str) -> Option<Vec<PathBuf>> {
    which::which(tool).ok()?;
    Some(std::env::split_paths(&std::env::var_os("PATH")?).collect())
}

/// A sandbox with python3 on `PATH` whose pip does not retry.
fn pip_sandbox() -> Sandbox {
    let mut sb = Sandbox::new();
    sb.path.extend(dir_of("python3").expect("python3 on PATH"));
    sb.set("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .set("PIP_RETRIES", "0");
    sb
}

/// A loopback port nothing listens on.
fn dead_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A wheel of `dep-needer`, which requires the Python SDK by name, written into `folder`.
fn sdk_needing_wheel(folder: &Path) -> PathBuf {
    const MAKE: &str = r#"
import sys, zipfile
d = "dep_needer-0.1.0.dist-info"
files = {
    "dep_needer/__init__.py": "",
    d + "/METADATA": "Metadata-Version: 2.1\nName: dep-needer\nVersion: 0.1.0\nRequires-Dist: agent-env-plugin-sdk>=0.1.0\n",
    d + "/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
files[d + "/RECORD"] = "".join(p + ",,\n" for p in files) + d + "/RECORD,,\n"
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for path, text in files.items():
        z.writestr(path, text)
"#;
    std::fs::create_dir_all(folder).unwrap();
    let wheel = folder.join("dep_needer-0.1.0-py3-none-any.whl");
    let made = Command::new("python3")
        .args(["-c", MAKE])
        .arg(&wheel)
        .status()
        .unwrap();
    assert!(made.success());
    wheel
}

/// An HTTP server on loopback answering every request with a status and no body: `default`, or
/// the one given for its exact path; stopped when dropped.
struct StatusServer {
    server: std::process::Child,
    port: u16,
}

impl StatusServer {
    const SERVER: &'static str = r#"
import http.server, sys
default = int(sys.argv[1])
special = dict(arg.split("=", 1) for arg in sys.argv[2:])
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(int(special.get(self.path, default)))
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

    fn start(default: u16, special: &[(&str, u16)]) -> StatusServer {
        let mut server = Command::new("python3")
            .args(["-c", Self::SERVER, &default.to_string()])
            .args(
                special
                    .iter()
                    .map(|(path, status)| format!("{path}={status}")),
            )
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(server.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        StatusServer {
            server,
            port: line.trim().parse().unwrap(),
        }
    }
}

impl Drop for StatusServer {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// The credentials in a spec's URL (`NAME @ URL`, a bare URL, `git+https://TOKEN@…`) are masked
/// however short: in `--json`'s `requested`, a dry run's too, and in pip's own `Collecting` line.
#[test]
fn credentials_in_a_specs_url_are_masked_in_json_and_in_pips_lines() {
    let sb = pip_sandbox();
    let port = dead_port();
    let named = format!("x @ http://bob:pw@127.0.0.1:{port}/x/x-1.0-py3-none-any.whl");
    let bare = format!("http://bob:pw@127.0.0.1:{port}/x/y-1.0-py3-none-any.whl");
    let git = format!("git+https://tok3n-value@127.0.0.1:{port}/z.git");
    let out = sb.run(&["plugin", "add", &named, &bare, &git, "--dry-run", "--json"]);
    let said = both(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["requested"],
        serde_json::json!([
            format!("x @ http://bob:***@127.0.0.1:{port}/x/x-1.0-py3-none-any.whl"),
            format!("http://bob:***@127.0.0.1:{port}/x/y-1.0-py3-none-any.whl"),
            format!("git+https://***@127.0.0.1:{port}/z.git"),
        ]),
        "{said}"
    );
    assert!(
        !said.contains("bob:pw@") && !said.contains("tok3n-value"),
        "{said}"
    );

    // pip repeats the spec as it collects it: masked too, a short password and a long one.
    for (password, args) in [("pw", vec!["--yes", "--json"]), ("s3cr3t", vec!["--yes"])] {
        let spec = format!("x @ http://alice:{password}@127.0.0.1:{port}/x/x-1.0-py3-none-any.whl");
        let mut command = vec!["plugin", "add", spec.as_str()];
        command.extend(args);
        let out = sb.run(&command);
        let said = both(&out);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(
            said.contains(&format!("Collecting x@ http://alice:***@127.0.0.1:{port}/")),
            "{said}"
        );
        assert!(!said.contains(&format!("alice:{password}@")), "{said}");
    }
}

/// An index that answers a server error (5xx) is said to have, not to lack the SDK; a URL that is
/// no index (404 at its own address, its `/simple` left out) is said to be one.
#[test]
fn an_index_failing_with_a_server_error_or_not_an_index_is_said_so() {
    let sb = pip_sandbox();
    let wheel = sdk_needing_wheel(&sb.dir().join("dist"));
    let sdk_down = StatusServer::start(404, &[("/simple/agent-env-plugin-sdk/", 503)]);
    let all_down = StatusServer::start(500, &[]);
    let nothing = StatusServer::start(404, &[]);
    let cases = [
        (
            format!("http://u:pw@127.0.0.1:{}/simple/", sdk_down.port),
            format!(
                "hint: http://u:***@127.0.0.1:{}/simple/ answered with an error (HTTP 503): it may be down; try again or check the server",
                sdk_down.port
            ),
        ),
        (
            format!("http://127.0.0.1:{}/simple/", all_down.port),
            format!(
                "hint: http://127.0.0.1:{}/simple/ answered with an error (HTTP 500): it may be down",
                all_down.port
            ),
        ),
        (
            format!("http://127.0.0.1:{}/", nothing.port),
            format!(
                "hint: http://127.0.0.1:{}/ is not a package index (it answers 404 Not Found at its own address): the URL may lack its /simple path",
                nothing.port
            ),
        ),
    ];
    for (url, hint) in cases {
        let out = sb.run(&[
            "plugin",
            "add",
            wheel.to_str().unwrap(),
            "--index-url",
            &url,
            "--yes",
        ]);
        let said = both(&out);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(said.contains(&hint), "{hint}\n{said}");
        assert!(!said.contains("does not hold it"), "{said}");
    }
}

/// `PIP_NO_INDEX` set (pip's true values): the plan says pip uses no index and ignores
/// `--index-url`, and the hint speaks of no index and of the SDK's wheel, not of PyPI.
#[test]
fn pip_told_to_use_no_index_is_said_to_in_the_plan_and_the_hint() {
    let mut sb = pip_sandbox();
    let wheel = sdk_needing_wheel(&sb.dir().join("dist"));
    let index = format!("http://127.0.0.1:{}/simple/", dead_port());
    let dry_run = [
        "plugin",
        "add",
        wheel.to_str().unwrap(),
        "--index-url",
        &index,
        "--dry-run",
    ];
    sb.set("PIP_NO_INDEX", "0");
    let used = sb.stdout(&dry_run, 0);
    assert!(!used.contains("pip uses no index"), "{used}");
    sb.env.retain(|(k, _)| k != "PIP_NO_INDEX");
    sb.set("PIP_NO_INDEX", "Yes");
    let plan = sb.stdout(&dry_run, 0);
    assert_eq!(plan.matches("pip uses no index").count(), 1, "{plan}");
    let reinstall = sb.stdout(&[dry_run.as_slice(), &["--reinstall"]].concat(), 0);
    assert_eq!(
        reinstall.matches("pip uses no index").count(),
        1,
        "{reinstall}"
    );
    assert!(
        plan.contains("  pip uses no index: PIP_NO_INDEX is set, so it installs only the files and folders given (and those in PIP_FIND_LINKS); --index-url is ignored while it is set; unset PIP_NO_INDEX to use an index\n"),
        "{plan}"
    );

    let out = sb.run(&["plugin", "add", wheel.to_str().unwrap(), "--yes"]);
    let said = both(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("hint: dep-needer needs the Python SDK (agent-env-plugin-sdk), and pip looked in no index (PIP_NO_INDEX is set): install the SDK's wheel with it, `agent-env plugin add PATH/TO/agent_env_plugin_sdk-VERSION-py3-none-any.whl "),
        "{said}"
    );
    assert!(
        said.contains("or unset PIP_NO_INDEX") && !said.contains("PyPI"),
        "{said}"
    );
}

/// Of an index and an extra index, only the one pip could not reach is named, a token alone in its
/// URL masked as `***@`.
#[test]
fn of_several_indexes_only_the_one_pip_could_not_reach_is_named() {
    let mut sb = pip_sandbox();
    // pip says it could not connect only while it retries, without saying where.
    sb.env.retain(|(k, _)| k != "PIP_RETRIES");
    sb.set("PIP_RETRIES", "1");
    let wheel = sdk_needing_wheel(&sb.dir().join("dist"));
    let up = StatusServer::start(404, &[("/simple/", 200)]);
    let down = dead_port();
    let out = sb.run(&[
        "plugin",
        "add",
        wheel.to_str().unwrap(),
        "--index-url",
        &format!("http://127.0.0.1:{}/simple/", up.port),
        "--extra-index-url",
        &format!("http://tok@127.0.0.1:{down}/simple/"),
        "--yes",
    ]);
    let said = both(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "hint: pip could not reach http://***@127.0.0.1:{down}/simple/ (connection refused): check the address, or that it is up"
        )),
        "{said}"
    );
}

/// A module of the team's own that Go cannot verify against the checksum database is named, with
/// the GONOSUMDB that leaves it out, where the SDK was named whatever failed.
#[test]
fn a_module_go_cannot_verify_is_named_with_the_gonosumdb_that_leaves_it_out() {
    let Some(go) = dir_of("go") else {
        eprintln!("skipped: no go");
        return;
    };
    let mut sb = Sandbox::new();
    sb.path.extend(go);
    // A module proxy of one module (file://), and a checksum database that does not answer.
    let versions = sb.dir().join("proxy/example.com/team-lib/@v");
    std::fs::create_dir_all(&versions).unwrap();
    std::fs::write(versions.join("list"), "v0.1.0\n").unwrap();
    std::fs::write(versions.join("v0.1.0.info"), "{\"Version\":\"v0.1.0\"}\n").unwrap();
    let go_mod = "module example.com/team-lib\n\ngo 1.22\n";
    std::fs::write(versions.join("v0.1.0.mod"), go_mod).unwrap();
    let zip = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as z:\n    z.writestr('example.com/team-lib@v0.1.0/go.mod', sys.argv[2])\n    z.writestr('example.com/team-lib@v0.1.0/lib.go', 'package lib\\n')\n",
        ])
        .arg(versions.join("v0.1.0.zip"))
        .arg(go_mod)
        .status()
        .unwrap();
    assert!(zip.success());
    let module = sb.dir().join("team-plugin");
    std::fs::create_dir_all(&module).unwrap();
    std::fs::write(
        module.join("go.mod"),
        "module example.com/team-plugin\n\ngo 1.22\n\nrequire example.com/team-lib v0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        module.join("main.go"),
        "package main\n\nimport _ \"example.com/team-lib\"\n\nfunc main() {}\n",
    )
    .unwrap();
    let proxy = format!("file://{}", sb.dir().join("proxy").display());
    // A checksum database that does not answer: not reached, which GONOSUMDB would not mend.
    let dead = dead_port();
    sb.set("GOPROXY", &proxy)
        .set("GOFLAGS", "-mod=mod")
        .set("GONOSUMDB", "corp.example/*")
        .set(
            "GOSUMDB",
            &format!("sum.golang.org http://127.0.0.1:{dead}"),
        );
    let out = sb.run(&["plugin", "add", module.to_str().unwrap(), "--yes"]);
    let said = both(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!("hint: Go could not reach the checksum database 127.0.0.1:{dead} to verify example.com/team-lib (connection refused)"))
            && said.contains("or set GOSUMDB to your company's checksum database mirror"),
        "{said}"
    );
    assert!(
        !said.contains("add its path pattern to GONOSUMDB"),
        "{said}"
    );
    // A checksum database that answers it does not know the module: leave it out, keeping the
    // GONOSUMDB entries already set.
    let database = StatusServer::start(404, &[]);
    sb.set(
        "GOSUMDB",
        &format!("sum.golang.org http://127.0.0.1:{}", database.port),
    );
    let out = sb.run(&["plugin", "add", module.to_str().unwrap(), "--yes"]);
    let said = both(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("hint: Go could not verify example.com/team-lib against the checksum database")
            && said.contains("add its path pattern to GONOSUMDB, a comma-separated list (GONOSUMDB=corp.example/*,example.com/team-lib;"),
        "{said}"
    );
    assert!(!said.contains("knows nothing of the SDK"), "{said}");
}

/// The plan shows GOPRIVATE and GONOPROXY when set, beside GOPROXY; a command's folder inside a Go
/// module, added without `--installer go`, is refused with that suggestion.
#[test]
fn a_go_plan_shows_goprivate_and_a_command_folder_is_pointed_to_installer_go() {
    let Some(go) = dir_of("go") else {
        eprintln!("skipped: no go");
        return;
    };
    let mut sb = Sandbox::new();
    sb.path.extend(go);
    sb.set("GOPRIVATE", "example.com/team/*")
        .set("GONOPROXY", "example.com/direct/*");
    let module = sb.dir().join("mod");
    std::fs::create_dir_all(module.join("cmd/tool")).unwrap();
    std::fs::write(
        module.join("go.mod"),
        "module example.com/team/mod\n\ngo 1.22\n",
    )
    .unwrap();
    std::fs::write(
        module.join("cmd/tool/main.go"),
        "package main\n\nfunc main() {}\n",
    )
    .unwrap();
    let plan = sb.stdout(&["plugin", "add", module.to_str().unwrap(), "--dry-run"], 0);
    assert!(
        plan.contains(" && 'GOPRIVATE=example.com/team/*' 'GONOPROXY=example.com/direct/*' GOBIN="),
        "{plan}"
    );
    let command = module.join("cmd/tool");
    let out = sb.run(&["plugin", "add", command.to_str().unwrap(), "--dry-run"]);
    let said = both(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("so it is no plugin source; it holds Go code: if it is a command's folder inside a Go module, add it with --installer go"),
        "{said}"
    );
}

/// An index whose root answers only with its trailing `/` (`…/simple/`, as PEP 503 spells it),
/// named without it, is not said to be no package index.
#[test]
fn an_index_named_without_its_trailing_slash_is_not_called_no_index() {
    let sb = pip_sandbox();
    let wheel = sdk_needing_wheel(&sb.dir().join("dist"));
    let index = StatusServer::start(404, &[("/simple/", 200)]);
    let out = sb.run(&[
        "plugin",
        "add",
        wheel.to_str().unwrap(),
        "--index-url",
        &format!("http://127.0.0.1:{}/simple", index.port),
        "--yes",
    ]);
    let said = both(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(!said.contains("is not a package index"), "{said}");
}

/// A folder of Go files with no go.mod in it or any folder above is refused saying so, with or
/// without `--installer go`, and is not pointed to `--installer go`.
#[test]
fn a_folder_of_go_files_without_a_go_mod_is_said_to_lack_one() {
    let sb = Sandbox::new();
    let folder = sb.dir().join("loose");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("main.go"), "package main\n\nfunc main() {}\n").unwrap();
    assert!(
        folder.ancestors().all(|dir| !dir.join("go.mod").exists()),
        "a go.mod above the temporary folder"
    );
    for forced in [false, true] {
        let mut args = vec!["plugin", "add", folder.to_str().unwrap(), "--dry-run"];
        if forced {
            args.extend(["--installer", "go"]);
        }
        let out = sb.run(&args);
        let said = both(&out);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(
            said.contains("it holds Go code, but no go.mod was found in the folder or any folder above it (a Go module needs one: run `go mod init MODULE-PATH` in the module's top folder)"),
            "{said}"
        );
        assert!(!said.contains("add it with --installer go"), "{said}");
    }
}
