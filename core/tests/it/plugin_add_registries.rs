//! Black-box: `plugin add` from the registries a team runs, on loopback only: the credentials in a
//! spec's URL masked in everything shown.

use std::path::PathBuf;

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
