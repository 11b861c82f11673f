#!/usr/bin/env bash
# `agent-env plugin new` in every language and kind: each project is generated against this checkout's
# SDKs, passes its own tests (and, in Python, mypy --strict), installs with `plugin add DIR`, passes `plugin verify`, and works as its kind
# is used (a step verified with a step, a store of each kind (secret, object, document) through `store check KIND`, a command run).
# The Python and Go document stores' own tests run the document kit through agent-env (the SDKs have no copy of
# it): they get this checkout's agent-env as AGENT_ENV_BIN, and CI=1 makes them fail rather than skip without it.
# agent-env runs in a temp HOME; cargo builds into a cache outside the checkout, and pip may fetch the build
# backend (setuptools) from the package index, as any Python project build does.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

# Built where the caller's CARGO_TARGET_DIR says (the checkout's target/ by default); the projects below
# build in a cache of their own.
cargo build --quiet -p agent-env
bin="$(cd "${CARGO_TARGET_DIR:-$repo/target}" && pwd)/debug/agent-env"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/plugins"

export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export CARGO_TARGET_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/agent-env-ci/scaffold-target"
export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local
export GOCACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agent-env-ci/scaffold-gocache" GOPATH="$work/gopath"
export PIP_DISABLE_PIP_VERSION_CHECK=1
mypy_cache="${XDG_CACHE_HOME:-$HOME/.cache}/agent-env-ci/scaffold-mypy-cache"

ae() {
  env HOME="$work/home" XDG_STATE_HOME="$work/state" XDG_DATA_HOME="$work/data" \
    XDG_CONFIG_HOME="$work/config" XDG_CACHE_HOME="$work/cache" AGENT_ENV_PLUGIN_DIR="$work/plugins" \
    "$bin" "$@"
}

fail() { echo "scripts/test-scaffold.sh: $*" >&2; exit 1; }

# mypy at the version the Python SDK's tests pin, in their venv (made by scripts/test-python.sh).
mypy="$repo/target/py-venv/bin/mypy"
if [ ! -x "$mypy" ]; then
  bash scripts/test-python.sh --install-only >/dev/null
  "$repo/target/py-venv/bin/pip" install --quiet "$(grep '^mypy==' plugin-sdk-py/tests/requirements-typing.txt)" \
    || fail "cannot install mypy into target/py-venv"
fi

# The project's own tests, as its README says to run them.
own_tests() {
  local lang=$1 dir=$2
  case "$lang" in
    rust) (cd "$dir" && cargo test --quiet >/dev/null 2>"$work/test.log") || { cat "$work/test.log" >&2; fail "$dir: cargo test failed"; } ;;
    python)
      python3 -m venv --system-site-packages "$dir/.venv"
      "$dir/.venv/bin/pip" install --quiet -e "$dir" >/dev/null || fail "$dir: pip install failed"
      (cd "$dir" && AGENT_ENV_BIN="$bin" CI=1 .venv/bin/python -m pytest -q >"$work/test.log" 2>&1) \
        || { cat "$work/test.log" >&2; fail "$dir: pytest failed"; }
      # The SDK says it is typed: a project made with it, its tests included, passes mypy --strict.
      # One cache for every project: the SDK and the standard library are checked once, not once each.
      (cd "$dir" && "$mypy" --strict --cache-dir "$mypy_cache" --python-executable .venv/bin/python src tests >"$work/mypy.log" 2>&1) \
        || { cat "$work/mypy.log" >&2; fail "$dir: mypy --strict failed"; }
      # Starting the plugin imports nothing that only its annotations use: typing alone would add
      # about a third to each start of a Python plugin. (-S: no site-packages .pth file may import it first.)
      local module; module=$(basename "$dir" | tr - _)
      PYTHONPATH="$dir/src:$repo/plugin-sdk-py/src" python3 -S -c \
        "import sys, $module.plugin; sys.exit('typing' in sys.modules)" \
        || fail "$dir: importing $module.plugin imports typing, which only its annotations need"
      rm -rf "$dir/.venv" "$dir/src/"*.egg-info ;;
    go) (cd "$dir" && go mod tidy && go vet ./... && AGENT_ENV_BIN="$bin" CI=1 go test ./... >/dev/null) || fail "$dir: go test failed" ;;
  esac
}

# --store is for a store project only: anywhere else it is a wrong command line (exit 2) that writes nothing.
status=0
ae plugin new agentenv-demo-refused --lang go --store object --dir "$work/refused" >/dev/null 2>"$work/refused.log" || status=$?
[ "$status" = 2 ] && grep -q "add --kind store, or leave --store out" "$work/refused.log" && [ ! -e "$work/refused" ] \
  || { cat "$work/refused.log" >&2; fail "plugin new --store without --kind store: exit $status, not the refusal expected"; }

projects=0
for lang in rust python go; do
  for what in step store object-store document-store cli; do
    case "$what" in
      *-store) kind=store store=${what%-store} flags=(--kind store --store "${what%-store}") ;;
      store) kind=store store=secret flags=(--kind store) ;; # the secret store, --store's default
      *) kind=$what store= flags=(--kind "$what") ;;
    esac
    name="agentenv-demo-$what-$lang"
    dir="$work/src/$name"
    echo "== plugin new $name --lang $lang ${flags[*]}"
    ae plugin new "$name" --lang "$lang" "${flags[@]}" --dir "$dir" --sdk "$repo" >/dev/null \
      || fail "plugin new $name failed"
    own_tests "$lang" "$dir"
    ae plugin add "$dir" --yes >"$work/add.log" 2>&1 || { cat "$work/add.log" >&2; fail "plugin add $dir failed"; }
    # Adding the same project again (a Rust or Go build of the same executable, a pip reinstall of the
    # same Python code) changes nothing. The object and document stores would build and install as the
    # secret store does, so they skip it.
    if [ "$what" = "${what%-store}" ]; then
      ae plugin add "$dir" --yes >"$work/readd.log" 2>&1 || { cat "$work/readd.log" >&2; fail "plugin add $dir again failed"; }
      grep -q "^Nothing changed" "$work/readd.log" || { cat "$work/readd.log" >&2; fail "plugin add $dir again changed something"; }
    fi
    contribution=${name#agentenv-}
    contribution=${contribution//-/_}
    case "$kind" in
      step) ae plugin verify "$name" --step "{\"type\": \"$contribution\", \"id\": \"s\", \"text\": \"one two three\"}" >"$work/verify.log" 2>&1 ;;
      *) ae plugin verify "$name" >"$work/verify.log" 2>&1 ;;
    esac || { cat "$work/verify.log" >&2; fail "plugin verify $name failed"; }
    case "$kind" in
      store)
        class=$(echo "${name#agentenv-}" | sed -E 's/(^|-)([a-z])/\U\2/g')
        mkdir -p "$work/project/.agentenv"
        if [ "$store" = secret ]; then
          printf '{"conformance_present": "value-1", "conformance_present_empty": ""}' >"$work/secrets.json"
          printf '[stores.secret]\nimpl = "%s:%s"\nconfig = { path = "%s" }\n' "$name" "$class" "$work/secrets.json"
        else
          printf '[stores.%s]\nimpl = "%s:%s"\nconfig = { root = "%s" }\n' "$store" "$name" "$class" "$work/store-root"
        fi >"$work/project/.agentenv/config.toml"
        (cd "$work/project" && ae store check "$store" >"$work/check.log" 2>&1) \
          || { cat "$work/check.log" >&2; fail "store check $store against $name failed"; }
        if [ "$store" = secret ]; then
          # A secrets file that is not there is said by config check, not at a run's first secret.
          rm "$work/secrets.json"
          if (cd "$work/project" && ae config check >"$work/check.log" 2>&1); then
            cat "$work/check.log" >&2; fail "config check passed $name with its secrets file missing"
          fi
          grep -q "there is no such file" "$work/check.log" \
            || { cat "$work/check.log" >&2; fail "config check did not say $name's secrets file is missing"; }
        fi
        rm -rf "$work/project" "$work/store-root" ;;
      cli)
        command=${name#agentenv-}
        out=$(ae "$command" one "two three") || fail "agent-env $command failed"
        [ "$out" = "3" ] || fail "agent-env $command one 'two three' printed '$out', not 3" ;;
    esac
    ae plugin remove "$name" --yes >/dev/null 2>&1 || fail "plugin remove $name failed"
    projects=$((projects + 1))
  done
done
echo "plugin new: $projects projects (rust, python, go x step, secret, object and document store, cli) tested, added, verified and used"
