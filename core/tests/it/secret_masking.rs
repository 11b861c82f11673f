//! Secrets agent-env holds never leave it through text it did not write: a plugin that prints its
//! settings on stderr, logs them and fails quoting them is shown, logged and recorded with each secret
//! as `***` (`plugin show`, `plugin verify --json`, `-v run`, the run log, `run --json`, the stored
//! instance); store-setting errors and `config check` mask them too; a `secret:` reference in
//! `[plugins.<package>]` resolves for `plugin show` as it does for a run; and a sandbox command sees
//! only the environment a plugin would.

use serde_json::Value;

use crate::support::run::Sandboxed;

/// The value behind `secret:API_TOKEN` (the local secret store's `values`).
const STORE_SECRET: &str = "sk-store-secret-4242";
/// The value behind `env:LEAK_PASSWORD`, under a secret-like key.
const ENV_SECRET: &str = "env-password-0707";
/// A URI password inside a non-secret setting.
const URI_PASSWORD: &str = "uri-pw-9191";
/// A value under a key nothing marks as secret: shown as it is.
const PLAIN: &str = "plain-note-5555";

/// A wire-level step plugin that writes its `initialize` line (its settings) to stderr, logs the token
/// it was given through `$/log`, and fails its step quoting the token.
fn install_leaky(s: &Sandboxed) {
    let script = s.script(
        "leaky.sh",
        r#"#!/bin/sh
IFS= read -r init
printf 'init: %s\n' "$init" >&2
token=missing
case "$init" in *sk-store-secret-4242*) token=sk-store-secret-4242 ;; esac
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"plugin":{"name":"agentenv-leaky","version":"1"},"contributions":[{"group":"task_steps","name":"leak_step","type":"leak_step","class":"LeakStep","methods":["execute","from_dict"]}]}}'
while IFS= read -r line; do
  rest=${line#*\"id\":}
  id=${rest%%[!0-9]*}
  [ -n "$id" ] || continue
  case "$line" in
    *'"execute"'*)
      printf '{"jsonrpc":"2.0","method":"$/log","params":{"level":"warning","message":"logging the token %s","call_id":%s}}\n' "$token" "$id"
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32020,"message":"step failed","data":{"kind":"step-failed","error_type":"ValueError","message":"rejected with token %s"}}}\n' "$id" "$token" ;;
    *) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
  esac
done
"#,
    );
    s.install_manifest(
        "leaky",
        &format!(
            "[plugin]\nname = \"agentenv-leaky\"\nversion = \"1\"\nexec = [\"/bin/sh\", \"{}\"]\nprotocol = [1, 1]\n\n[provides.task_steps]\nleak_step = \"LeakStep\"\n",
            script.display()
        ),
    );
    s.write(
        ".agentenv/config.toml",
        &format!(
            r#"[stores.secret]
impl = "LocalSecretStore"
config = {{ values = {{ API_TOKEN = "{STORE_SECRET}" }} }}

[plugins.agentenv-leaky]
api_token = "secret:API_TOKEN"
password = "env:LEAK_PASSWORD"
dsn = "postgres://me:{URI_PASSWORD}@127.0.0.1:1/db"
note = "{PLAIN}"
"#
        ),
    );
    s.write(
        "leakb/tasks/t.json",
        r#"[{"id": "leak", "type": "leak_step"}]"#,
    );
}

/// Fails naming the secret when `text` holds any of them.
fn assert_masked(what: &str, text: &str) {
    for secret in [STORE_SECRET, ENV_SECRET, URI_PASSWORD] {
        assert!(!text.contains(secret), "{what} shows {secret}:\n{text}");
    }
}

fn run_with_secret_env(s: &Sandboxed, args: &[&str]) -> agent_env_test_support::Ran {
    let mut cmd = s.command(args);
    cmd.env("LEAK_PASSWORD", ENV_SECRET);
    agent_env_test_support::Ran::from(cmd.output().expect("run agent-env"))
}

#[test]
fn a_plugins_stderr_is_shown_with_its_secrets_masked_and_its_secret_settings_resolve() {
    let s = Sandboxed::new();
    install_leaky(&s);
    let show = run_with_secret_env(&s, &["plugin", "show", "agentenv-leaky"]);
    assert_eq!(show.code, 0, "{}{}", show.stdout, show.stderr);
    let both = format!("{}{}", show.stdout, show.stderr);
    assert_masked("plugin show", &both);
    // The secret: reference resolved (the plugin saw the token), and its stderr is shown masked.
    assert!(both.contains(r#""api_token":"***""#), "{both}");
    assert!(both.contains(r#""password":"***""#), "{both}");
    assert!(both.contains("postgres://me:***@127.0.0.1:1/db"), "{both}");
    assert!(both.contains(PLAIN), "a plain setting is shown: {both}");

    let json = run_with_secret_env(&s, &["plugin", "show", "agentenv-leaky", "--json"]);
    assert_masked("plugin show --json", &json.stdout);
    let doc: Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert!(doc.to_string().contains("api_token"), "{doc}");

    let verify = run_with_secret_env(&s, &["plugin", "verify", "agentenv-leaky", "--json"]);
    assert_masked("plugin verify --json", &verify.stdout);
    assert_masked("plugin verify --json's stderr", &verify.stderr);
}

#[test]
fn a_run_shows_logs_and_records_a_plugins_secrets_masked() {
    let s = Sandboxed::new();
    install_leaky(&s);
    let run = run_with_secret_env(&s, &["-v", "run", "./leakb"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let both = format!("{}{}", run.stdout, run.stderr);
    assert_masked("-v run", &both);
    assert!(
        both.contains("ValueError: rejected with token ***"),
        "the plugin got the token and its error is masked: {both}"
    );
    assert!(both.contains("logging the token ***"), "{both}");

    let logs: Vec<_> = std::fs::read_dir(s.state().join("logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let log = std::fs::read_to_string(&logs[0]).unwrap();
    assert_masked("the run log", &log);
    assert!(log.contains("logging the token ***"), "{log}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&logs[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "only its owner reads the run log");

    let instances = s.docs("task_instances");
    let stored = serde_json::to_string(&instances).unwrap();
    assert_masked("the stored instance", &stored);
    assert!(stored.contains("rejected with token ***"), "{stored}");

    let json = run_with_secret_env(&s, &["run", "./leakb", "--json"]);
    assert_masked("run --json", &json.stdout);
    assert!(
        json.stdout.contains("rejected with token ***"),
        "{}",
        json.stdout
    );
}

#[test]
fn a_store_setting_error_masks_a_secret_value() {
    let s = Sandboxed::new();
    s.write(
        ".agentenv/config.toml",
        &format!(
            r#"[stores.secret]
impl = "LocalSecretStore"
config = {{ values = {{ GRANTS = "{STORE_SECRET}", PASTED = "pasted-secret-6262" }} }}

[stores.object]
impl = "LocalFilesystemObjectStore"
config = {{ grants = "secret:GRANTS", grant_lifetime_seconds = "pasted-secret-6262" }}

[stores.document]
impl = "SQLiteDocumentStore"
config = {{ path = "postgres://me:{URI_PASSWORD}@127.0.0.1:1/db/x.db", bogus = 1 }}
"#
        ),
    );
    let check = s.run(&["config", "check"]);
    assert_eq!(check.code, 1, "{}{}", check.stdout, check.stderr);
    let both = format!("{}{}", check.stdout, check.stderr);
    assert_masked("config check", &both);
    assert!(both.contains("grants must be one of"), "{both}");
    assert!(both.contains("got '***'"), "{both}");
    // A secret store's literal value is a secret wherever else it is written.
    assert!(!both.contains("pasted-secret-6262"), "{both}");
    assert!(both.contains("grant_lifetime_seconds"), "{both}");
}

/// A bundle folder `<home>/<folder>` of one task: a local sandbox `box`, then a verification `check`
/// of `criteria` (JSON objects, comma-separated) in it.
fn write_command_task(s: &Sandboxed, folder: &str, criteria: &str) {
    s.write(
        &format!("{folder}/tasks/t.json"),
        &format!(
            r#"[{{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box", "sandbox_mode": "vm", "sandbox_type": "local"}},
                {{"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "check",
                  "criteria": [{criteria}]}}]"#
        ),
    );
}

#[test]
fn a_sandbox_command_sees_a_plugins_environment_less_agent_envs_own() {
    let s = Sandboxed::new();
    write_command_task(
        &s,
        "envb",
        r#"{"type": "bash_cmd_succeeds", "criterion": "no-token", "bash_cmd": "test -z \"$MY_SERVICE_TOKEN\""},
           {"type": "bash_cmd_succeeds", "criterion": "has-path", "bash_cmd": "test -n \"$PATH\" && test -n \"$HOME\""},
           {"type": "bash_cmd_succeeds", "criterion": "direct", "bash_cmd": "printenv MY_SERVICE_TOKEN"},
           {"type": "bash_cmd_succeeds", "criterion": "no-agent-env", "bash_cmd": "test -z \"$AGENT_ENV_PLUGIN_DIR$AGENT_ENV_TEST_STORE_URI\""}"#,
    );
    // Each criterion's score (1 passed, 0 not), in order.
    let scores = |extra: Option<&str>| -> Vec<f64> {
        let mut cmd = s.command(&["run", "./envb"]);
        cmd.env("MY_SERVICE_TOKEN", "tok-should-not-pass");
        // A credential kept under agent-env's prefix for a config's `env:` reference.
        cmd.env(
            "AGENT_ENV_TEST_STORE_URI",
            "postgres://me:pw-should-not-pass@127.0.0.1/db",
        );
        if let Some(list) = extra {
            cmd.env("AGENT_ENV_SANDBOX_ENV", list);
        }
        let ran = agent_env_test_support::Ran::from(cmd.output().unwrap());
        let instances = s.docs("task_instances");
        let doc = instances
            .last()
            .unwrap_or_else(|| panic!("{}{}", ran.stdout, ran.stderr));
        doc["context"]["metadata"]["verifications"]["check"]["results"]
            .as_array()
            .unwrap_or_else(|| panic!("{doc}"))
            .iter()
            .map(|row| row["score"].as_f64().unwrap())
            .collect()
    };
    // Through bash: no token, PATH and HOME; started directly (plain words): no token either; no
    // AGENT_ENV_* variable.
    assert_eq!(scores(None), vec![1.0, 1.0, 0.0, 1.0]);
    // AGENT_ENV_SANDBOX_ENV lets them through, to both.
    assert_eq!(scores(Some("MY_SERVICE_*")), vec![0.0, 1.0, 1.0, 1.0]);
    assert_eq!(
        scores(Some("MY_SERVICE_*,AGENT_ENV_*")),
        vec![0.0, 1.0, 1.0, 0.0]
    );
}

#[test]
fn a_failed_command_names_the_variables_it_expands_that_were_withheld() {
    let s = Sandboxed::new();
    write_command_task(
        &s,
        "needs",
        r#"{"type": "bash_cmd_succeeds", "criterion": "uses-token", "bash_cmd": "test -n \"$MY_SERVICE_TOKEN\" && test -n \"${PATH}\" && test -n \"$NEVER_SET_ANYWHERE\""}"#,
    );
    let mut cmd = s.command(&["run", "./needs"]);
    cmd.env("MY_SERVICE_TOKEN", "tok-should-not-pass");
    let ran = agent_env_test_support::Ran::from(cmd.output().unwrap());
    let out = format!("{}{}", ran.stdout, ran.stderr);
    assert!(
        out.contains("criterion 'uses-token' (bash_cmd_succeeds) did not pass: exit=1; stderr= ($MY_SERVICE_TOKEN is set where agent-env runs but not passed to a task's command; AGENT_ENV_SANDBOX_ENV=MY_SERVICE_TOKEN passes it)"),
        "{out}"
    );
    // PATH is passed, and a variable set nowhere is not agent-env's doing.
    assert!(
        !out.contains("$PATH") && !out.contains("$NEVER_SET"),
        "{out}"
    );
    assert!(!out.contains("tok-should-not-pass"), "{out}");
    // The instance keeps it with the row, for get-instance and the explorer.
    let instance = s.docs("task_instances").pop().unwrap();
    let row = &instance["context"]["metadata"]["verifications"];
    assert!(
        row.to_string()
            .contains("AGENT_ENV_SANDBOX_ENV=MY_SERVICE_TOKEN passes it"),
        "{row}"
    );
}

/// A dsn's password with characters a URL must percent-encode (`p@ss:w/rd%41#é!x`, written
/// `p%40ss%3Aw%2Frd%2541%23%C3%A9%21x`) is masked in both forms: a task's command that prints the
/// password the server is sent (the decoded one) shows `***`, as it does for the text of the dsn.
#[test]
fn a_percent_encoded_dsn_password_is_masked_decoded_as_well() {
    const DECODED: &str = "p@ss:w/rd%41#é!x";
    const ENCODED: &str = "p%40ss%3Aw%2Frd%2541%23%C3%A9%21x";
    let role = format!("special_{}", std::process::id());
    crate::hosted_postgres::psql(&format!(
        "CREATE ROLE {role} LOGIN PASSWORD '{DECODED}'; CREATE SCHEMA {role} AUTHORIZATION {role}"
    ));
    let s = Sandboxed::new();
    s.write(
        ".agentenv/config.toml",
        &format!(
            "[stores.document]\nimpl = \"PostgresDocumentStore\"\n\n[stores.document.config]\ndsn = \"env:SP_DSN\"\nschema = \"{role}\"\n"
        ),
    );
    write_command_task(
        &s,
        "printsb",
        &format!(
            r#"{{"type": "bash_cmd_succeeds", "criterion": "prints", "bash_cmd": "printf '%s and %s' '{DECODED}' '{ENCODED}' >&2; exit 1"}}"#
        ),
    );
    let mut cmd = s.command(&["run", "./printsb"]);
    cmd.env("SP_DSN", crate::hosted_postgres::dsn_as(&role, ENCODED));
    let ran = agent_env_test_support::Ran::from(cmd.output().unwrap());
    let out = format!("{}{}", ran.stdout, ran.stderr);
    assert!(
        out.contains(
            "criterion 'prints' (bash_cmd_succeeds) did not pass: exit=1; stderr=*** and ***"
        ),
        "{out}"
    );
    assert!(!out.contains(DECODED) && !out.contains(ENCODED), "{out}");
    // The dsn is the user's own: the server lets it in with the decoded password.
    let mut cmd = s.command(&["config", "check"]);
    cmd.env("SP_DSN", crate::hosted_postgres::dsn_as(&role, ENCODED));
    let check = agent_env_test_support::Ran::from(cmd.output().unwrap());
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
}

/// Credentials written out in plugin settings under keys nothing marks as secret, which `config show`
/// masks by what they hold: the secret part of each, as `config show` hides it.
const HELD_SECRETS: [&str; 5] = [
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "AKIAIOSFODNN7EXAMPLE",
    "querysecret123456",
    "argvpassword123",
    "argvtoken123456",
];
const KV_PASSWORD: &str = "kvpassword123";

/// A wire-level step plugin that echoes its settings: its `initialize` line on stderr, and each of
/// [`HELD_SECRETS`] it was given in a `$/log` line, its step's error and its metadata.
fn install_echoing(s: &Sandboxed) {
    let script = s.script(
        "echoing.sh",
        r#"#!/bin/sh
IFS= read -r init
printf 'init: %s\n' "$init" >&2
seen=""
for secret in ghp_abcdefghijklmnopqrstuvwxyz0123456789 AKIAIOSFODNN7EXAMPLE querysecret123456 argvpassword123 argvtoken123456 kvpassword123; do
  case "$init" in *"$secret"*) seen="$seen $secret" ;; esac
done
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"plugin":{"name":"agentenv-echoing","version":"1"},"contributions":[{"group":"task_steps","name":"echo_step","type":"echo_step","class":"EchoStep","methods":["execute","from_dict"]}]}}'
while IFS= read -r line; do
  rest=${line#*\"id\":}
  id=${rest%%[!0-9]*}
  [ -n "$id" ] || continue
  case "$line" in
    *'"execute"'*)
      printf '{"jsonrpc":"2.0","method":"$/log","params":{"level":"warning","message":"my settings:%s","call_id":%s}}\n' "$seen" "$id"
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32020,"message":"step failed","data":{"kind":"step-failed","error_type":"ValueError","message":"rejected:%s","metadata":{"settings":"%s"}}}}\n' "$id" "$seen" "$seen" ;;
    *) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
  esac
done
"#,
    );
    s.install_manifest(
        "echoing",
        &format!(
            "[plugin]\nname = \"agentenv-echoing\"\nversion = \"1\"\nexec = [\"/bin/sh\", \"{}\"]\nprotocol = [1, 1]\n\n[provides.task_steps]\necho_step = \"EchoStep\"\n",
            script.display()
        ),
    );
    s.write(
        ".agentenv/config.toml",
        &format!(
            r#"[plugins.agentenv-echoing]
n_pat = "{}"
n_aws = "{}"
endpoint = "https://api.example.com/v1?api_key={}&region=eu"
argv = ["--password", "{}", "--token={}"]
conn = "host=localhost user=u password={KV_PASSWORD} dbname=x"
"#,
            HELD_SECRETS[0], HELD_SECRETS[1], HELD_SECRETS[2], HELD_SECRETS[3], HELD_SECRETS[4],
        ),
    );
    s.write(
        "echob/tasks/t.json",
        r#"[{"id": "echo", "type": "echo_step"}]"#,
    );
}

/// Fails naming the credential when `text` holds any of them.
fn assert_held_masked(what: &str, text: &str) {
    for secret in HELD_SECRETS.iter().chain([&KV_PASSWORD]) {
        assert!(!text.contains(secret), "{what} shows {secret}:\n{text}");
    }
}

#[test]
fn credentials_config_show_masks_in_plugin_settings_are_masked_when_a_plugin_echoes_them() {
    let s = Sandboxed::new();
    install_echoing(&s);
    // config show hides each, keeping the rest of its setting.
    let shown = s.run(&["config", "show"]);
    assert_held_masked("config show", &shown.both());

    let show = s.run(&["plugin", "show", "agentenv-echoing"]);
    assert_eq!(show.code, 0, "{}", show.both());
    assert_held_masked("plugin show", &show.both());
    // Just the secret part is masked: the rest of each setting is still there to read.
    assert!(
        show.both()
            .contains("https://api.example.com/v1?api_key=***&region=eu"),
        "{}",
        show.both()
    );
    assert!(
        show.both()
            .contains("host=localhost user=u password=*** dbname=x"),
        "{}",
        show.both()
    );
    assert!(
        show.both()
            .contains(r#"["--password","***","--token=***"]"#),
        "{}",
        show.both()
    );
    let json = s.run(&["plugin", "show", "agentenv-echoing", "--json"]);
    assert_held_masked("plugin show --json", &json.both());

    let run = s.run(&["-v", "run", "./echob"]);
    assert_eq!(run.code, 1, "{}", run.both());
    assert_held_masked("-v run", &run.both());
    assert!(
        run.both().contains("my settings: *** *** *** *** *** ***"),
        "the plugin got each and its log line is masked: {}",
        run.both()
    );
    let json = s.run(&["run", "./echob", "--json"]);
    assert_held_masked("run --json", &json.both());
    for log in std::fs::read_dir(s.state().join("logs")).unwrap() {
        let text = std::fs::read_to_string(log.unwrap().path()).unwrap();
        assert_held_masked("the run log", &text);
    }
    let stored = serde_json::to_string(&s.docs("task_instances")).unwrap();
    assert_held_masked("the stored instance", &stored);
    assert!(stored.contains("rejected: *** ***"), "{stored}");
}
