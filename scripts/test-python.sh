#!/usr/bin/env bash
# The Python SDK's and the Python example plugin's tests, from a fresh machine:
#  1. a venv under target/py-venv with both packages installed from their folders with pip, the tests'
#     requirements (plugin-sdk-py/tests/requirements*.txt: pytest, and the pinned type checkers mypy and
#     pyright), then pytest on each package's tests;
#  2. the SDK's own tests again under every other Python version the SDK claims (the "Programming Language ::
#     Python :: 3.x" classifiers of plugin-sdk-py/pyproject.toml), one venv each under target/py-matrix/,
#     so that its shortcuts into CPython-private modules (_json, _thread) are held to each of them. The oldest
#     and the newest claimed versions must be found (scripts/find-pythons.sh: python3.X on PATH, pyenv, or
#     uv); a version between them that is missing is reported and skipped.
# Needs python3 (3.9+, with venv and pip). pytest comes from the system Python when it has it. Each venv
# and what is installed in it is kept, and reinstalled only when a requirements file changes.
# With $CI set, a test tool that cannot be installed is a failure, never a skip.
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
sdk_tests="$repo/plugin-sdk-py/tests"

step() { printf -- '-- %s\n' "$*"; }
fail() { printf 'scripts/test-python.sh: %s\n' "$*" >&2; exit 1; }

# make_venv DIR PYTHON [venv options]: makes the venv DIR once (again when its interpreter is gone).
make_venv() {
  local dir=$1 interpreter=$2
  shift 2
  if [ ! -x "$dir/bin/python" ] || ! "$dir/bin/python" -c 'import sys' 2>/dev/null; then
    step "creating $dir ($("$interpreter" -V 2>&1))"
    rm -rf "$dir"
    "$interpreter" -m venv "$@" "$dir"
  fi
}

pip_in() {
  local dir=$1
  shift
  "$dir/bin/python" -m pip --disable-pip-version-check --no-input "$@"
}

# requirements DIR FILE...: pip install -r each FILE into the venv DIR, skipped when the files are the same
# as at the last install there (a stamp in the venv holds their checksum).
requirements() {
  local dir=$1
  shift
  local stamp sum args=()
  stamp="$dir/.requirements-$(basename "$1" .txt)"
  sum=$(cat "$@" | cksum)
  [ "$(cat "$stamp" 2>/dev/null)" = "$sum" ] && return 0
  for file in "$@"; do args+=(-r "$file"); done
  step "pip install ${args[*]#"$repo/"} (into ${dir#"$repo/"})"
  pip_in "$dir" install --quiet "${args[@]}" || return 1
  echo "$sum" >"$stamp"
}

# install_packages DIR FOLDER...: (re)installs the packages from their folders into the venv DIR, built
# offline by the venv's own setuptools. setuptools older than 70.1 needs the `wheel` package for that, and
# Python 3.12+ venvs have no setuptools: fetch what is missing once (the venv keeps it for the next run).
install_packages() {
  local dir=$1
  shift
  if ! "$dir/bin/python" - <<'PY'; then
import sys
try:
    import setuptools
except ImportError:
    sys.exit(1)
if tuple(int(p) for p in setuptools.__version__.split(".")[:2]) < (70, 1):
    try:
        import wheel  # noqa: F401
    except ImportError:
        sys.exit(1)
PY
    step "installing setuptools into ${dir#"$repo/"} (to build the packages offline)"
    pip_in "$dir" install --quiet "setuptools>=70.1"
  fi
  step "pip install ${*} (into ${dir#"$repo/"})"
  for folder in "$@"; do
    pip_in "$dir" install --quiet --force-reinstall --no-deps --no-build-isolation "$folder"
  done
}

# The tests import the installed packages (pytest puts only the tests folder on sys.path).
export AGENT_ENV_VECTORS_DIR="$repo/protocol/vectors"

# ---------------------------------------------------------------- the main venv

# --system-site-packages: pytest from the system Python, so no download is needed for it.
make_venv "$venv" "$python" --system-site-packages
requirements "$venv" "$sdk_tests/requirements.txt"
packages=(./plugin-sdk-py)
if [ -d examples/python-grader ]; then packages+=(./examples/python-grader); fi
install_packages "$venv" "${packages[@]}"

if $install_only; then
  step "installed into $venv (agentenv-grader is $venv/bin/agentenv-grader)"
  exit 0
fi

if ! requirements "$venv" "$sdk_tests/requirements-typing.txt"; then
  [ -n "${CI:-}" ] && fail "cannot install the type checkers (plugin-sdk-py/tests/requirements-typing.txt)"
  step "warning: no type checkers; test_typing.py will skip (in CI it fails)"
fi

# Every other Python version the SDK claims, found before anything runs (it fails when the oldest or the
# newest is missing).
main_version=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
matrix=$(scripts/find-pythons.sh plugin-sdk-py/pyproject.toml "$main_version")

export AGENT_ENV_PY_VENV="$venv"
step "pytest plugin-sdk-py/tests ($("$venv/bin/python" -V))"
"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$sdk_tests"
if [ -d examples/python-grader/tests ]; then
  step "pytest examples/python-grader/tests"
  "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$repo/examples/python-grader/tests"
fi

# ---------------------------------------------------------------- every other Python the SDK claims

while read -r version candidate <&3; do
  [ -n "$version" ] || continue
  matrix_venv="$repo/target/py-matrix/$version"
  make_venv "$matrix_venv" "$candidate"
  requirements "$matrix_venv" "$sdk_tests/requirements.txt"
  install_packages "$matrix_venv" ./plugin-sdk-py
  step "pytest plugin-sdk-py/tests ($("$matrix_venv/bin/python" -V); the type checkers ran above)"
  AGENT_ENV_PY_VENV="$matrix_venv" "$matrix_venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
    --ignore "$sdk_tests/test_typing.py" "$sdk_tests"
done 3<<<"$matrix"
