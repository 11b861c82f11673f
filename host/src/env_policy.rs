//! Which of agent-env's environment variables a plugin child gets.
//!
//! A plugin is trusted code the user installed, but it need not see every secret the user's shell
//! holds (`OPENAI_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`…). A child gets:
//!
//! - the variables a program needs to run on this machine ([`PASS_THROUGH`]: `PATH`, `HOME`, the
//!   locale, temp and XDG folders, proxies and CA bundles, the Python, Go and Rust toolchain
//!   variables) and every `AGENT_ENV_*` variable but the store selections ([`STORE_SELECTIONS`],
//!   which may hold a password: a plugin reaches the stores through the host);
//! - what its manifest asks for (`[plugin] env = ["OPENAI_API_KEY", "AWS_*"]`), never a store
//!   selection, whatever the manifest names;
//! - what the user adds for every plugin with `AGENT_ENV_PLUGIN_ENV` (a comma-separated list of names
//!   or prefixes ending in `*`; a store selection only when the user names it whole);
//! - the protocol's own variables, set by the spawner;
//! - `PYTHONSAFEPATH=1` when its `exec` starts a Python module (`["/venv/bin/python", "-m", "mod"]`,
//!   [`starts_a_python_module`]): Python puts the folder it runs in first on `sys.path` for `-m`, and a
//!   plugin runs in agent-env's working folder, so a `mod.py` there would be imported in the plugin's
//!   place (Python 3.11 and later honour it; 3.9 and 3.10 ignore it).
//!
//! A command a task runs in a local sandbox gets the same less agent-env's own `AGENT_ENV_*`
//! variables (they locate agent-env's config, plugins and stores, a credential the user keeps under
//! that prefix for a config's `env:` reference would go with them, and what the task runs is the
//! agent's work, not a plugin the user installed), with `AGENT_ENV_SANDBOX_ENV` in place of the plugin
//! list ([`sandbox_env`]).
//!
//! Secrets a plugin needs are better passed as settings (`[plugins.<package>]` with `env:` or
//! `secret:` references), which name exactly one value.

use std::ffi::{OsStr, OsString};

/// What every plugin and every task's command gets (exact names); `LC_*` and `XDG_*` are matched as
/// prefixes, and a plugin also gets every `AGENT_ENV_*`.
pub const PASS_THROUGH: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TMPDIR",
    "LD_LIBRARY_PATH",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOMODCACHE",
    "GOFLAGS",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "DISPLAY",
    "WAYLAND_DISPLAY",
];

/// Prefixes every plugin and every task's command gets.
pub const PASS_THROUGH_PREFIXES: &[&str] = &["LC_", "XDG_"];

/// agent-env's own variables: every plugin gets them (but [`STORE_SELECTIONS`]), a task's command
/// only when listed.
pub const AGENT_ENV_PREFIX: &str = "AGENT_ENV_";

/// agent-env's variables that choose its stores: a connection string there may carry a password
/// (`postgres://u:pw@…`, `s3://key:secret@…`), and a plugin reaches the stores through the host's
/// `host.store.*` calls, never by them, so a plugin gets one only when the user names it whole in
/// [`EXTRA_VAR`]: no manifest's `env` lets one through, by name or by prefix (`AGENT_*`).
pub const STORE_SELECTIONS: &[&str] = &[
    "AGENT_ENV_OBJECT_STORE",
    "AGENT_ENV_DOCUMENT_STORE",
    "AGENT_ENV_IMAGE_STORE",
    "AGENT_ENV_SECRET_STORE",
];

/// Who a filtered environment is for: the two differ in `AGENT_ENV_*`, in the variable that adds
/// to the list, and in whether a manifest declares more.
#[derive(Clone, Copy)]
enum Child {
    Plugin,
    SandboxCommand,
}

/// The variable with which a user lets every plugin see more of the environment.
pub const EXTRA_VAR: &str = "AGENT_ENV_PLUGIN_ENV";

/// A name or a prefix ending in `*`, as a manifest's `env` or [`EXTRA_VAR`] gives it.
fn matches_pattern(name: &str, pattern: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

/// Whether a plugin child declared with `declared` (its manifest's `env`) and the user's `extra`
/// patterns gets the variable `name`.
pub fn allowed(name: &str, declared: &[String], extra: &[String]) -> bool {
    allowed_for(Child::Plugin, name, declared, extra)
}

fn allowed_for(child: Child, name: &str, declared: &[String], extra: &[String]) -> bool {
    if matches!(child, Child::Plugin) && STORE_SELECTIONS.contains(&name) {
        return extra.iter().any(|p| p.trim() == name);
    }
    PASS_THROUGH.contains(&name)
        || PASS_THROUGH_PREFIXES.iter().any(|p| name.starts_with(p))
        || (matches!(child, Child::Plugin) && name.starts_with(AGENT_ENV_PREFIX))
        || declared
            .iter()
            .chain(extra)
            .any(|p| matches_pattern(name, p.trim()))
}

/// The patterns of [`EXTRA_VAR`]'s value.
pub fn extra_patterns(value: Option<&OsStr>) -> Vec<String> {
    value
        .and_then(OsStr::to_str)
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The variable with which a user lets the commands a task runs in a local sandbox
/// (`bash_cmd_succeeds`) see more of the environment.
pub const SANDBOX_EXTRA_VAR: &str = "AGENT_ENV_SANDBOX_ENV";

/// The environment a child gets from `parent` (agent-env's own).
pub fn child_env(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    declared: &[String],
) -> Vec<(OsString, OsString)> {
    filtered_env(parent, Child::Plugin, declared)
}

/// The variable that keeps Python (3.11 and later) from putting the folder it runs in first on
/// `sys.path` for `python -m mod`.
pub const PYTHON_SAFE_PATH_VAR: &str = "PYTHONSAFEPATH";

/// The environment a plugin child started with `argv` (its resolved `exec`) gets from `parent`:
/// [`child_env`], and [`PYTHON_SAFE_PATH_VAR`] set to `1` when `argv` starts a Python module
/// ([`starts_a_python_module`]), so a module of that name in the folder agent-env runs in is not
/// imported in the plugin's place. The plugin's own Python subprocesses inherit it.
pub fn plugin_env(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    declared: &[String],
    argv: &[String],
) -> Vec<(OsString, OsString)> {
    let mut env = child_env(parent, declared);
    if starts_a_python_module(argv) {
        env.retain(|(key, _)| key != PYTHON_SAFE_PATH_VAR);
        env.push((PYTHON_SAFE_PATH_VAR.into(), "1".into()));
    }
    env
}

/// Whether `argv` runs a Python interpreter (its first element's file name starts with `python`)
/// with `-m MODULE` (or `-mMODULE`) among its options, before a script or `-c` ends them.
pub fn starts_a_python_module(argv: &[String]) -> bool {
    let Some((program, args)) = argv.split_first() else {
        return false;
    };
    let is_python = std::path::Path::new(program)
        .file_name()
        .and_then(OsStr::to_str)
        .is_some_and(|name| name.starts_with("python"));
    if !is_python {
        return false;
    }
    // Options that take the next argument as their value.
    const WITH_VALUE: [&str; 3] = ["-X", "-W", "--check-hash-based-pycs"];
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-m" => return args.next().is_some_and(|module| !module.is_empty()),
            option if option.starts_with("-m") => return true,
            option if WITH_VALUE.contains(&option) => {
                args.next();
            }
            "-c" | "-" | "--" => return false,
            option if option.starts_with('-') => {}
            _script => return false,
        }
    }
    false
}

/// The environment a command run in a local sandbox gets from `parent`: what every plugin gets
/// except agent-env's own `AGENT_ENV_*` variables, and what the user adds with
/// [`SANDBOX_EXTRA_VAR`] (`AGENT_ENV_*` included, when listed).
pub fn sandbox_env(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    filtered_env(parent, Child::SandboxCommand, &[])
}

fn filtered_env(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    child: Child,
    declared: &[String],
) -> Vec<(OsString, OsString)> {
    let extra_var = match child {
        Child::Plugin => EXTRA_VAR,
        Child::SandboxCommand => SANDBOX_EXTRA_VAR,
    };
    let parent: Vec<(OsString, OsString)> = parent.into_iter().collect();
    let extra = extra_patterns(
        parent
            .iter()
            .find(|(k, _)| k == extra_var)
            .map(|(_, v)| v.as_os_str()),
    );
    parent
        .into_iter()
        .filter(|(k, _)| {
            k.to_str()
                .is_some_and(|k| allowed_for(child, k, declared, &extra))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<String> {
        env.iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn secrets_are_withheld_unless_declared_or_added() {
        let parent = vars(&[
            ("PATH", "/bin"),
            ("HOME", "/h"),
            ("LC_ALL", "C"),
            ("XDG_STATE_HOME", "/s"),
            ("AGENT_ENV_PLUGIN_DIR", "/p"),
            ("OPENAI_API_KEY", "sk"),
            ("AWS_SECRET_ACCESS_KEY", "a"),
            ("AWS_REGION", "eu"),
            ("GITHUB_TOKEN", "g"),
        ]);
        assert_eq!(
            names(&child_env(parent.clone(), &[])),
            [
                "PATH",
                "HOME",
                "LC_ALL",
                "XDG_STATE_HOME",
                "AGENT_ENV_PLUGIN_DIR"
            ]
        );
        let declared = vec!["OPENAI_API_KEY".to_string(), "AWS_*".to_string()];
        assert_eq!(
            names(&child_env(parent.clone(), &declared))[5..],
            ["OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"]
        );
        let mut with_extra = parent;
        with_extra.push(("AGENT_ENV_PLUGIN_ENV".into(), " GITHUB_TOKEN , ".into()));
        let env = names(&child_env(with_extra, &[]));
        assert!(env.contains(&"GITHUB_TOKEN".to_string()), "{env:?}");
        assert!(!env.contains(&"OPENAI_API_KEY".to_string()), "{env:?}");
    }

    #[test]
    fn a_sandbox_command_gets_no_agent_env_variable_unless_listed() {
        let parent = vars(&[
            ("PATH", "/bin"),
            ("XDG_STATE_HOME", "/s"),
            ("AGENT_ENV_TEAM_PG_DSN", "postgres://me:pw@db/x"),
            ("AGENT_ENV_PLUGIN_DIR", "/p"),
        ]);
        assert_eq!(
            names(&sandbox_env(parent.clone())),
            ["PATH", "XDG_STATE_HOME"]
        );
        assert_eq!(names(&child_env(parent.clone(), &[])).len(), 4);
        let mut listed = parent;
        listed.push((
            "AGENT_ENV_SANDBOX_ENV".into(),
            "AGENT_ENV_PLUGIN_DIR".into(),
        ));
        assert_eq!(
            names(&sandbox_env(listed)),
            ["PATH", "XDG_STATE_HOME", "AGENT_ENV_PLUGIN_DIR"]
        );
    }

    #[test]
    fn a_plugin_gets_no_store_selection_whatever_its_manifest_asks() {
        let parent = vars(&[
            ("PATH", "/bin"),
            ("AGENT_ENV_DOCUMENT_STORE", "postgres://me:pw@db/x"),
            ("AGENT_ENV_OBJECT_STORE", "s3://key:secret@h/b"),
            ("AGENT_ENV_CONFIG", "/c/config.toml"),
        ]);
        assert_eq!(
            names(&child_env(parent.clone(), &[])),
            ["PATH", "AGENT_ENV_CONFIG"]
        );
        for asked in ["AGENT_ENV_DOCUMENT_STORE", "A*", "AGENT_ENV_*", "*"] {
            let declared = vec![asked.to_string()];
            let env = names(&child_env(parent.clone(), &declared));
            assert!(
                !env.iter().any(|n| n.ends_with("_STORE")),
                "{asked}: {env:?}"
            );
        }
        // The user may let one through by its whole name, never by a prefix.
        let mut listed = parent;
        listed.push(("AGENT_ENV_PLUGIN_ENV".into(), "AGENT_*".into()));
        let env = names(&child_env(listed.clone(), &[]));
        assert!(!env.iter().any(|n| n.ends_with("_STORE")), "{env:?}");
        listed.push((
            "AGENT_ENV_PLUGIN_ENV".into(),
            "AGENT_ENV_DOCUMENT_STORE".into(),
        ));
        listed.remove(listed.len() - 2);
        let env = names(&child_env(listed, &[]));
        assert!(
            env.contains(&"AGENT_ENV_DOCUMENT_STORE".to_string()),
            "{env:?}"
        );
        assert!(
            !env.contains(&"AGENT_ENV_OBJECT_STORE".to_string()),
            "{env:?}"
        );
    }

    fn argv(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_python_module_start_is_told_from_a_script_and_other_programs() {
        for started in [
            &["/venv/bin/python", "-m", "qamod"][..],
            &["python3", "-u", "-m", "qamod", "--flag"],
            &["/usr/bin/python3.11", "-X", "utf8", "-mqamod"],
        ] {
            assert!(starts_a_python_module(&argv(started)), "{started:?}");
        }
        for not in [
            &["/venv/bin/python", "plugin.py", "-m", "x"][..],
            &["python3", "-c", "import x", "-m", "x"],
            &["/usr/bin/env", "python3", "-m", "x"],
            &["/opt/bin/run", "-m", "x"],
            &["python3", "-m"],
            &[],
        ] {
            assert!(!starts_a_python_module(&argv(not)), "{not:?}");
        }
    }

    #[test]
    fn a_python_module_plugin_gets_python_safe_path() {
        let parent = vars(&[("PATH", "/bin"), ("PYTHONSAFEPATH", "")]);
        let env = plugin_env(
            parent.clone(),
            &["PYTHON*".to_string()],
            &argv(&["python3", "-m", "m"]),
        );
        assert_eq!(
            env.iter()
                .filter(|(k, _)| k == PYTHON_SAFE_PATH_VAR)
                .map(|(_, v)| v.to_string_lossy().into_owned())
                .collect::<Vec<_>>(),
            ["1"]
        );
        let script = plugin_env(parent, &[], &argv(&["python3", "plugin.py"]));
        assert_eq!(names(&script), ["PATH"]);
    }

    #[test]
    fn a_prefix_pattern_needs_its_star() {
        assert!(matches_pattern("AWS_REGION", "AWS_*"));
        assert!(!matches_pattern("AWS_REGION", "AWS_"));
        assert!(matches_pattern("AWS_", "AWS_*"));
    }
}
