#!/usr/bin/env bash
# The explorer's UI in a real browser: installs Debian's chromium and chromium-driver when missing,
# starts `agent-env up` on a free port in a temp HOME, and drives headless Chromium through it with
# chromedriver (scripts/browser/ui_check.py: Home, run `hello` from the Bundles page and watch it
# pass live, Back to pages the browser restores from its cache, the instance, the artifact, the task
# run again from its page, the lists' pagers, the plugin report, the config, the grader example's
# explorer page reached from the navigation, scoring a text, the Run page's link to the run's log,
# Home's Next page by cursor while a run records, a bundle's task not run yet, the file artifacts
# folded under their artifact, and the pages at a phone's width); then
# runs of `agent-env run` in the same world (scripts/browser/run_state_check.py: one killed mid-run,
# shown interrupted with its warning; one under way, its run group's counts "so far" and then final;
# one whose step fails; the killed run's instance once a later run marked it failed, its end not known;
# a list past its end, a list one page holds saying how much, a page size the list does not take, an
# id whose '/' the address left as it is, a page number that is none, the focus after a Run button
# that fails); then tasks and an artifact stored in that world (scripts/browser/list_check.py:
# a very long task id wraps in its cell and leaves every column on screen, a binary file's size in
# words and its "cannot be shown here" with a Download link, a list's filter and page kept in the
# address through a reload and Back; scripts/browser/group_check.py: a group of runs started from a
# Task page, its count's limit the API's, wrong counts and seed values refused before they are sent, the
# group's page with its runs, scores and their spread, live until its runs end, its runs a page at a time,
# an outcome it does not take noted, one per seed value, one cancelled from its page after its question
# and a run cancelled from the Run page, each leaving the focus on the heading, and an unknown group). Then an explorer of the check's own in that world, stopped and started
# again under open pages (scripts/browser/contact_check.py: a run waiting for a free slot, the notice
# of lost contact, a run of an explorer that has since stopped). Then a second explorer,
# in a world whose configured document store can't be read as it starts
# (scripts/browser/store_notice_check.py: the pages show the notice that the store is left out, and
# drop it, without a reload, once the store is back). Then a third explorer, whose document store
# stops answering under it (scripts/browser/store_outage_check.py: a page opened meanwhile says the
# store did not answer, asks again by itself, and shows what it holds once it answers). Builds into
# $CARGO_TARGET_DIR when it is set
# (else target/). Screenshots land in target/browser/. Fails, never skips, when the browser cannot be
# installed or started.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

fail() { echo "test-browser: $*" >&2; exit 1; }

install_browser() {
  command -v apt-get >/dev/null || fail "chromium and chromium-driver are missing and apt-get is not available to install them"
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || fail "chromium and chromium-driver are missing; installing them needs root or sudo"
    sudo="sudo"
  fi
  echo "installing chromium and chromium-driver with apt-get"
  $sudo apt-get update -qq || fail "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium chromium-driver \
    || fail "apt-get could not install chromium and chromium-driver"
}

chromium=$(command -v chromium || true)
driver=$(command -v chromedriver || true)
if [ -z "$chromium" ] || [ -z "$driver" ]; then
  install_browser
  chromium=$(command -v chromium) || fail "chromium is not on PATH after installing it"
  driver=$(command -v chromedriver) || fail "chromedriver is not on PATH after installing chromium-driver"
fi
"$chromium" --headless=new --no-sandbox --disable-gpu --version >/dev/null 2>&1 \
  || "$chromium" --version >/dev/null || fail "$chromium does not start"

echo "building agent-env and agent-env-explorer"
cargo build --quiet -p agent-env -p agent-env-explorer
target_dir=${CARGO_TARGET_DIR:-target}
case "$target_dir" in /*) ;; *) target_dir="$root/$target_dir" ;; esac
bin="$target_dir/debug"

# The grader example (Python) serves an explorer page; installed into the test venv, found on PATH.
echo "installing the grader example plugin"
bash scripts/test-python.sh --install-only >/dev/null || fail "could not install the grader example (scripts/test-python.sh --install-only)"
grader_bin="$root/target/py-venv/bin"
[ -x "$grader_bin/agentenv-grader" ] || fail "scripts/test-python.sh --install-only left no $grader_bin/agentenv-grader"

work=$(mktemp -d)
explorer_pid=""
driver_pid=""
cleanup() {
  [ -n "$driver_pid" ] && kill "$driver_pid" 2>/dev/null || true
  if [ -n "$explorer_pid" ]; then
    kill -INT "$explorer_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$explorer_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$explorer_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# A temp world: nothing of the real HOME is read or written.
mkdir -p "$work/home" "$work/data" "$work/state" "$work/config" "$work/plugins/agentenv-broken"
cat > "$work/plugins/agentenv-broken/agent-env-plugin.toml" <<'TOML'
[plugin]
name = "agentenv-broken"
version = "0.1.0"
exec = ["./not-there"]
protocol = [1, 1]

[provides.task_steps]
broken_step = "BrokenStep"
TOML
for var in $(env | sed -n 's/^\(AGENT_ENV_[A-Za-z0-9_]*\|XDG_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$var"; done
export HOME="$work/home" XDG_DATA_HOME="$work/data" XDG_STATE_HOME="$work/state" XDG_CONFIG_HOME="$work/config"
export AGENT_ENV_PLUGIN_DIR="$work/plugins"
export PATH="$grader_bin:$PATH"

# Enters the world under $1 (its home, data, state, config and plugins folders), in the shell that
# calls it: call it in a subshell.
enter_world() {
  export HOME="$1/home" XDG_DATA_HOME="$1/data" XDG_STATE_HOME="$1/state" \
    XDG_CONFIG_HOME="$1/config" AGENT_ENV_PLUGIN_DIR="$1/plugins"
  cd "$1/home"
}

# `agent-env up --port 0` in the world under $1; sets explorer_pid and url.
start_explorer() {
  local world=$1
  (enter_world "$world" && exec "$bin/agent-env" up --port 0) >"$world/explorer.out" 2>"$world/explorer.err" &
  explorer_pid=$!
  url=""
  for _ in $(seq 1 300); do
    url=$(grep -o 'http://127.0.0.1:[0-9]*' "$world/explorer.out" 2>/dev/null | head -1 || true)
    [ -n "$url" ] && break
    kill -0 "$explorer_pid" 2>/dev/null || fail "agent-env up exited: $(cat "$world/explorer.out" "$world/explorer.err")"
    sleep 0.1
  done
  [ -n "$url" ] || fail "agent-env up printed no URL: $(cat "$world/explorer.out" "$world/explorer.err")"
  echo "explorer at $url"
}

# Ctrl-C to the explorer of the world under $1: it stops, exits 0 and says so.
stop_explorer() {
  local world=$1
  kill -INT "$explorer_pid"
  for _ in $(seq 1 300); do kill -0 "$explorer_pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$explorer_pid" 2>/dev/null; then fail "agent-env up did not stop on Ctrl-C"; fi
  wait "$explorer_pid" || fail "agent-env up exited non-zero on Ctrl-C: $(cat "$world/explorer.out" "$world/explorer.err")"
  explorer_pid=""
  grep -q "Stopped." "$world/explorer.out" || fail "agent-env up did not say it stopped"
}

start_explorer "$work"

driver_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$driver" --port="$driver_port" >"$work/driver.log" 2>&1 &
driver_pid=$!
for _ in $(seq 1 200); do
  python3 - "$driver_port" <<'PY' && break
import json, sys, urllib.request
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/status", timeout=1) as r:
        sys.exit(0 if json.loads(r.read())["value"]["ready"] else 1)
except Exception:
    sys.exit(1)
PY
  kill -0 "$driver_pid" 2>/dev/null || fail "chromedriver exited: $(cat "$work/driver.log")"
  sleep 0.1
done

shots="$root/target/browser"
rm -rf "$shots"
if ! python3 scripts/browser/ui_check.py --explorer "$url" --driver "http://127.0.0.1:$driver_port" \
    --chromium "$chromium" --screenshots "$shots"; then
  echo "--- explorer output"; cat "$work/explorer.out" "$work/explorer.err"
  echo "--- chromedriver log (tail)"; tail -20 "$work/driver.log"
  fail "the UI check failed"
fi
if ! python3 scripts/browser/run_state_check.py --explorer "$url" --driver "http://127.0.0.1:$driver_port" \
    --chromium "$chromium" --screenshots "$shots" --agent-env "$bin/agent-env" --home "$work/home" \
    --work "$work/run-state"; then
  echo "--- explorer output"; cat "$work/explorer.out" "$work/explorer.err"
  echo "--- chromedriver log (tail)"; tail -20 "$work/driver.log"
  fail "the run state check failed"
fi
if ! python3 scripts/browser/list_check.py --explorer "$url" --driver "http://127.0.0.1:$driver_port" \
    --chromium "$chromium" --screenshots "$shots" --agent-env "$bin/agent-env" --home "$work/home" \
    --work "$work/lists"; then
  echo "--- explorer output"; cat "$work/explorer.out" "$work/explorer.err"
  echo "--- chromedriver log (tail)"; tail -20 "$work/driver.log"
  fail "the list check failed"
fi
if ! python3 scripts/browser/group_check.py --explorer "$url" --driver "http://127.0.0.1:$driver_port" \
    --chromium "$chromium" --screenshots "$shots" --agent-env "$bin/agent-env" --home "$work/home" \
    --work "$work/groups"; then
  echo "--- explorer output"; cat "$work/explorer.out" "$work/explorer.err"
  echo "--- chromedriver log (tail)"; tail -20 "$work/driver.log"
  fail "the run group check failed"
fi
stop_explorer "$work"

# The same world, served by an explorer the check starts itself at an address of its own, and stops and
# starts again while its pages are open.
if ! python3 scripts/browser/contact_check.py --driver "http://127.0.0.1:$driver_port" \
    --chromium "$chromium" --screenshots "$shots" --agent-env "$bin/agent-env" --home "$work/home" \
    --work "$work/contact"; then
  echo "--- chromedriver log (tail)"; tail -20 "$work/driver.log"
  fail "the contact check failed"
fi

# A second world: a task stored in a SQLite document store, and a run of `hello` (recorded on this
# machine); then the store's database is moved away and a folder put in its place, so the explorer
# can't read the store as it starts.
store_world="$work/store-world"
retry=1
mkdir -p "$store_world/home/.agentenv" "$store_world/data" "$store_world/state" "$store_world/config" \
  "$store_world/plugins"
cat > "$store_world/home/.agentenv/config.toml" <<TOML
[explorer]
store_retry_seconds = $retry

[stores.document]
impl = "LocalSqliteDocumentStore"

[stores.document.config]
path = "$store_world/shared/documents.db"
TOML
cat > "$store_world/stored.json" <<'JSON'
[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
 {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
  "criteria": [{"type": "bash_cmd_succeeds", "criterion": "ok", "bash_cmd": "true"}]}]
JSON
(enter_world "$store_world" && "$bin/agent-env" task put --id team/stored "$store_world/stored.json" \
    && "$bin/agent-env" run hello) \
  >"$store_world/put.out" 2>&1 || fail "agent-env task put or run hello failed: $(cat "$store_world/put.out")"
mv "$store_world/shared" "$store_world/shared.away"
mkdir -p "$store_world/shared/documents.db"

start_explorer "$store_world"
if ! python3 scripts/browser/store_notice_check.py --explorer "$url" --driver "http://127.0.0.1:$driver_port" \
    --chromium "$chromium" --screenshots "$shots" --store "$store_world/shared" --away "$store_world/shared.away" \
    --retry-seconds "$retry" --task team/stored; then
  echo "--- explorer output"; cat "$store_world/explorer.out" "$store_world/explorer.err"
  echo "--- chromedriver log (tail)"; tail -20 "$work/driver.log"
  fail "the store notice check failed"
fi
stop_explorer "$store_world"

# A third world: a document store plugin (a shell script) that holds one stored task and refuses
# every read while the file $outage_world/documents-down exists; the explorer starts while it
# answers, and the check makes it stop answering under the running explorer, then answer again.
outage_world="$work/outage-world"
mkdir -p "$outage_world/home/.agentenv" "$outage_world/data" "$outage_world/state" "$outage_world/config" \
  "$outage_world/plugins/shelldocs"
printf '#!/bin/sh\nDOWN=%s\n' "'$outage_world/documents-down'" > "$outage_world/shell-documents.sh"
cat >> "$outage_world/shell-documents.sh" <<'SH'
task='{"id":"team/stored","version":1,"name":"stored","created_at_utc":"2024-01-01T00:00:00+00:00","steps":[]}'
answer() { printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$1"; }
while IFS= read -r line; do
  rest=${line#*\"id\":}
  id=${rest%%[!0-9]*}
  [ -n "$id" ] || continue
  # Whether the request is about the stored task: the tasks collection, and a filter naming it or none.
  held=no
  case "$line" in
    *'"collection":"tasks"'*)
      case "$line" in
        *'team/stored'*) held=yes ;;
        *'"value"'*) ;;
        *) held=yes ;;
      esac ;;
  esac
  case "$line" in
    *'"method":"initialize"'*) answer '{"protocol":1,"plugin":{"name":"agentenv-shelldocs","version":"1"},"contributions":[],"stores":[{"class":"ShellDocuments","kind":"document"}]}' ;;
    *'"method":"store.open"'*) answer '{"handle":"h1"}' ;;
    *'"method":"store.document.'*)
      if [ -e "$DOWN" ]; then
        printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"the database server is away"}}\n' "$id"
        continue
      fi
      case "$line:$held" in
        *'"method":"store.document.count"'*:yes) answer '{"count":1}' ;;
        *'"method":"store.document.count"'*) answer '{"count":0}' ;;
        *'"method":"store.document.query"'*:yes) answer "{\"docs\":[$task]}" ;;
        *'"method":"store.document.query"'*) answer '{"docs":[]}' ;;
        *'"method":"store.document.find_one"'*:yes) answer "{\"doc\":$task}" ;;
        *'"method":"store.document.find_one"'*) answer '{"doc":null}' ;;
        *) answer 'null' ;;
      esac ;;
    *) answer 'null' ;;
  esac
done
SH
cat > "$outage_world/plugins/shelldocs/agent-env-plugin.toml" <<TOML
[plugin]
name = "agentenv-shelldocs"
version = "1"
exec = ["/bin/sh", "$outage_world/shell-documents.sh"]
protocol = [1, 1]

[provides.stores]
ShellDocuments = "document"
TOML
cat > "$outage_world/home/.agentenv/config.toml" <<TOML
[explorer]
store_retry_seconds = $retry

[stores.document]
impl = "agentenv-shelldocs:ShellDocuments"
TOML
start_explorer "$outage_world"
if ! python3 scripts/browser/store_outage_check.py --explorer "$url" --driver "http://127.0.0.1:$driver_port" \
    --chromium "$chromium" --screenshots "$shots" --down "$outage_world/documents-down" --task team/stored; then
  echo "--- explorer output"; cat "$outage_world/explorer.out" "$outage_world/explorer.err"
  echo "--- chromedriver log (tail)"; tail -20 "$work/driver.log"
  fail "the store outage check failed"
fi
stop_explorer "$outage_world"
echo "test-browser: passed"
