#!/usr/bin/env bash
# The Python SDK's and the Python example plugin's tests, from a fresh machine: makes a venv under
# target/py-venv, installs both packages from their folders with pip, and runs pytest on each.
# Needs python3 (3.9+, with venv and pip). pytest comes from the system Python when it has it.
#
#   scripts/test-python.sh                 install, then test
#   scripts/test-python.sh --install-only  install only: target/py-venv/bin then holds agentenv-grader, and
#                                          target/py-venv/share/agent-env/plugins its manifest (for the
#                                          cross-language suite: put target/py-venv/bin on PATH)
set -euo pipefail
install_only=false
case "${1:-}" in
  --install-only) install_only=true ;;
  "") ;;
  *) echo "usage: $0 [--install-only]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
repo=$(pwd)
venv="$repo/target/py-venv"
python=${PYTHON:-python3}

step() { printf -- '-- %s\n' "$*"; }

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
  step "creating $venv"
  rm -rf "$venv"
  # --system-site-packages: pytest from the system Python, so no download is needed for it.
  "$python" -m venv --system-site-packages "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input)

if ! "$venv/bin/python" -c 'import pytest' 2>/dev/null; then
  step "installing pytest into the venv (the system Python has none)"
  "${pip[@]}" install --quiet pytest
fi

# Offline first: build with the venv's own setuptools. setuptools older than 70.1 needs the `wheel`
# package for that; fetch it once when it is missing (the venv keeps it for the next run).
can_build_offline() {
  "$venv/bin/python" - <<'PY'
import sys
try:
    import setuptools
except ImportError:
    sys.exit(1)
major, minor = (int(p) for p in setuptools.__version__.split(".")[:2])
if (major, minor) >= (70, 1):
    sys.exit(0)
try:
    import wheel  # noqa: F401
except ImportError:
    sys.exit(1)
PY
}
if ! can_build_offline; then
  step "installing wheel into the venv (its setuptools needs it to build)"
  "${pip[@]}" install --quiet wheel || true
fi
install_args=(install --quiet --force-reinstall --no-deps)
if can_build_offline; then
  install_args+=(--no-build-isolation)
else
  step "cannot build offline; pip will fetch a build backend"
fi

step "pip install ./plugin-sdk-py ./examples/python-grader"
"${pip[@]}" "${install_args[@]}" ./plugin-sdk-py
if [ -d examples/python-grader ]; then
  "${pip[@]}" "${install_args[@]}" ./examples/python-grader
fi

if $install_only; then
  step "installed into $venv (agentenv-grader is $venv/bin/agentenv-grader)"
  exit 0
fi

# The tests import the installed packages (pytest puts only the tests folder on sys.path).
export AGENT_ENV_VECTORS_DIR="$repo/protocol/vectors"
export AGENT_ENV_PY_VENV="$venv"
step "pytest plugin-sdk-py/tests"
"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$repo/plugin-sdk-py/tests"
if [ -d examples/python-grader/tests ]; then
  step "pytest examples/python-grader/tests"
  "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$repo/examples/python-grader/tests"
fi
