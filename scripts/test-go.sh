#!/usr/bin/env bash
# The Go example plugin (examples/go-plugin): vet, build the plugin into target/go-plugin/ (a plugin
# folder: the binary beside its manifest, which the cross-language suite installs), then its tests,
# which drive that binary as a subprocess and read the shared vectors in protocol/vectors/.
#   scripts/test-go.sh               vet, build, test
#   scripts/test-go.sh --build-only  build target/go-plugin/ only (for suites that need the binary)
# Needs only the Go toolchain; the module uses the standard library, so nothing is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="$root/target/go-plugin"
export GOTOOLCHAIN=local

build_only=false
case "${1:-}" in
  "") ;;
  --build-only) build_only=true ;;
  *) echo "usage: scripts/test-go.sh [--build-only]" >&2; exit 2 ;;
esac

if ! command -v go >/dev/null; then
  echo "scripts/test-go.sh: go is not on PATH; install Go 1.22 or later (https://go.dev/dl/)" >&2
  exit 1
fi

cd examples/go-plugin
$build_only || go vet ./...
mkdir -p "$out"
go build -buildvcs=false -o "$out/agentenv-go-words" ./cmd/agentenv-go-words
cp cmd/agentenv-go-words/agent-env-plugin.toml "$out/agent-env-plugin.toml"
if $build_only; then
  echo "$out"
  exit 0
fi
GO_WORDS_BIN="$out/agentenv-go-words" go test -count=1 ./...
echo "Go plugin built: $out/agentenv-go-words (manifest beside it)"
