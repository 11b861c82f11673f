#!/usr/bin/env bash
# Passes when hello.txt, beside this script, contains "hello". Written with bash's own commands only, so
# checking starts no process besides bash itself.
set -euo pipefail
here=.
[[ $0 == */* ]] && here=${0%/*}
while IFS= read -r line || [[ -n $line ]]; do
  [[ $line == *hello* ]] && exit 0
done <"$here/hello.txt"
echo "hello.txt does not contain \"hello\"" >&2
exit 1
