#!/usr/bin/env bash
# Passes when hello.txt, beside this script, contains "hello".
set -euo pipefail
grep -q hello "$(dirname "$0")/hello.txt"
