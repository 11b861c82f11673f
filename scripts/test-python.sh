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

# Build with the venv's own setuptools (no build isolation, so no download on each run). The packages
# declare their licence the PEP 639 way (`license = "Apache-2.0"`, `license-files`), which needs
# setuptools 77; fetch it into the venv once when it is older (the venv keeps it for the next run).
if ! "$venv/bin/python" - <<'PY'
import sys
try:
    import setuptools
except ImportError:
    sys.exit(1)
sys.exit(0 if tuple(int(p) for p in setuptools.__version__.split(".")[:2]) >= (77, 0) else 1)
PY
then
  step "installing setuptools>=77 into the venv (to build the packages)"
  "${pip[@]}" install --quiet "setuptools>=77"
fi
install_args=(install --quiet --force-reinstall --no-deps --no-build-isolation)

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
