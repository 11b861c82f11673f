#!/usr/bin/env bash
# The protocol's JSON Schemas (protocol/schema/) against the protocol's test vectors, the schema examples,
# the manifests the repository ships and what the built agent-env prints for the plugin report: protocol/schema/tests/test_schema.py, run with pytest and the
# jsonschema validator in a venv under target/schema-venv (made once; reinstalled only when
# protocol/schema/tests/requirements.txt changes). The same examples are held to the Rust types by
# `cargo test -p agent-env-protocol`.
# Needs python3 (with venv and pip); pip fetches jsonschema and pytest from PyPI the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
venv="$repo/target/schema-venv"
python=${PYTHON:-python3}
requirements="$repo/protocol/schema/tests/requirements.txt"

fail() { printf 'scripts/test-schema.sh: %s\n' "$*" >&2; exit 1; }

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
  command -v "$python" >/dev/null || fail "$python is not on PATH; install Python 3.9+ with venv and pip"
  rm -rf "$venv"
  "$python" -m venv "$venv" || fail "cannot make a venv with $python (Debian: apt-get install python3-venv)"
fi
stamp="$venv/.requirements"
sum=$(cksum <"$requirements")
if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
  "$venv/bin/python" -m pip --disable-pip-version-check --no-input install --quiet -r "$requirements" \
    || fail "cannot install ${requirements#"$repo/"} into ${venv#"$repo/"}"
  echo "$sum" >"$stamp"
fi
# report.schema.json is checked against what the built binary prints (test_report.py).
# test_sdk_output.py starts a plugin of each SDK: the Rust fixture, the Python SDK's fixture, the Go example.
cargo build --quiet -p agent-env -p agent-env-fixture-plugins || fail "cargo build failed"
scripts/test-go.sh --build-only >/dev/null || fail "cannot build the Go example plugin (scripts/test-go.sh --build-only)"
"$venv/bin/python" -m pytest -q -p no:cacheprovider protocol/schema/tests
