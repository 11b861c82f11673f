#!/usr/bin/env bash
# The Python interpreters to test a package under: one per version its pyproject.toml claims (its
# "Programming Language :: Python :: 3.X" classifiers). For each version, the first of: python3.X on PATH,
# pyenv's newest 3.X.* ($PYENV_ROOT, else ~/.pyenv), uv's (`uv python find`, never downloading).
#
#   scripts/find-pythons.sh PYPROJECT [HAVE]
#
# Prints "3.X /path/to/python" for each version found, oldest first; HAVE is a version the caller has
# already (counted as found, not printed). Versions between the oldest and the newest that are not found
# are named on stderr and skipped; when the oldest or the newest is not found, it says how to install it
# and exits 1.
set -euo pipefail
pyproject=${1:?usage: scripts/find-pythons.sh PYPROJECT [HAVE]}
have=${2:-}

version_of() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true; }

find_python() {
  local want=$1 candidate
  local candidates=("$(command -v "python$want" || true)")
  local pyenv_root=${PYENV_ROOT:-${HOME:-/nonexistent}/.pyenv}
  while IFS= read -r candidate; do candidates+=("$candidate"); done < <(
    ls -d "$pyenv_root/versions/$want".*/bin/python"$want" 2>/dev/null | sort -t. -k3 -n -r
  )
  if command -v uv >/dev/null; then
    candidates+=("$(UV_PYTHON_DOWNLOADS=never uv python find "$want" 2>/dev/null || true)")
  fi
  for candidate in "${candidates[@]}"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && [ "$(version_of "$candidate")" = "$want" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

mapfile -t claimed < <(
  sed -n 's/^ *"Programming Language :: Python :: \(3\.[0-9][0-9]*\)",*$/\1/p' "$pyproject" | sort -t. -k2 -n
)
if [ "${#claimed[@]}" -lt 2 ]; then
  echo "$pyproject claims fewer than two Python versions ('Programming Language :: Python :: 3.X' classifiers)" >&2
  exit 1
fi
oldest=${claimed[0]}
newest=${claimed[${#claimed[@]} - 1]}

found=()
missing=()
for version in "${claimed[@]}"; do
  [ "$version" = "$have" ] && continue
  if path=$(find_python "$version"); then
    found+=("$version $path")
  elif [ "$version" = "$oldest" ] || [ "$version" = "$newest" ]; then
    echo "$pyproject claims Python $oldest to $newest and the tests run under each, but no Python $version" \
      "was found (python$version on PATH, ${PYENV_ROOT:-~/.pyenv}/versions/$version.*, uv python find" \
      "$version). Install it (pyenv install $version, or uv python install $version) and run again." >&2
    exit 1
  else
    missing+=("$version")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "warning: no Python ${missing[*]} found; the tests skip those versions" >&2
fi
if [ "${#found[@]}" -gt 0 ]; then printf '%s\n' "${found[@]}"; fi
