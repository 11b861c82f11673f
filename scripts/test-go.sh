#!/usr/bin/env bash
# The Go SDK module (plugin-sdk-go) and the Go example plugin (examples/go-plugin), which imports it.
#   scripts/test-go.sh               check the vendored vectors, vet, staticcheck, build, test both modules
#                                    (and vet the Go fixture plugin the cross-language tests build)
#   scripts/test-go.sh --build-only  build target/go-plugin/ only (a plugin folder: the binary beside its
#                                    manifest, which the cross-language suite installs)
# Both modules use the standard library only. staticcheck is the one tool fetched (through the Go module
# proxy) when it is not installed yet; it is installed into $(go env GOPATH)/bin, outside the checkout.
# plugin-sdk-go/schematest, the SDK's schema check, fetches a JSON Schema validator the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="$root/target/go-plugin"
export GOTOOLCHAIN=local
# staticcheck 2026.2.2 is published as the module version v0.8.2 of honnef.co/go/tools.
staticcheck_version=2026.2.2
staticcheck_module_version=v0.8.2

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

build_plugin() {
  mkdir -p "$out"
  (cd examples/go-plugin && go build -buildvcs=false -o "$out/agentenv-go-words" ./cmd/agentenv-go-words)
  cp examples/go-plugin/cmd/agentenv-go-words/agent-env-plugin.toml "$out/agent-env-plugin.toml"
}

if $build_only; then
  build_plugin
  echo "$out"
  exit 0
fi

# The SDK tests read their own copy of the shared vectors so that the module stands alone; the copy must
# be the repository's.
if ! diff -r protocol/vectors plugin-sdk-go/testdata/vectors --exclude=README.md; then
  echo "scripts/test-go.sh: plugin-sdk-go/testdata/vectors differs from protocol/vectors (diff above);" \
    "copy them over: cp protocol/vectors/*.jsonl plugin-sdk-go/testdata/vectors/" >&2
  exit 1
fi

# The module ships the repository's licence text, since `go get` fetches it without the root folder.
if ! cmp -s LICENSE plugin-sdk-go/LICENSE; then
  echo "scripts/test-go.sh: plugin-sdk-go/LICENSE differs from LICENSE; copy it: cp LICENSE plugin-sdk-go/LICENSE" >&2
  exit 1
fi

# The SDK is standard library only: its module graph is itself.
deps="$(cd plugin-sdk-go && go list -m all | tail -n +2)"
if [ -n "$deps" ]; then
  echo "scripts/test-go.sh: plugin-sdk-go must use the standard library only, but it requires:" >&2
  echo "$deps" >&2
  exit 1
fi

gobin="$(go env GOBIN)"
gobin="${gobin:-$(go env GOPATH)/bin}"
staticcheck="$gobin/staticcheck"
if [ ! -x "$staticcheck" ] || ! "$staticcheck" -version | grep -q "staticcheck $staticcheck_version "; then
  echo "installing staticcheck $staticcheck_version into $gobin" >&2
  if ! GOTOOLCHAIN=auto go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_module_version"; then
    echo "scripts/test-go.sh: cannot install staticcheck (go install honnef.co/go/tools/cmd/staticcheck@$staticcheck_module_version);" \
      "it needs the Go module proxy once, then it is cached in $gobin" >&2
    exit 1
  fi
fi

for module in plugin-sdk-go examples/go-plugin tests/fixture-plugins/go/kept-host; do
  echo "== $module: vet, staticcheck" >&2
  (cd "$module" && go vet ./... && "$staticcheck" ./...)
done
build_plugin
(cd plugin-sdk-go && go test -count=1 ./...)
# What the SDK sends, held to protocol/schema/message.schema.json; a module of its own (it needs a JSON
# Schema validator from the Go module proxy), so the SDK's own module stays standard library only.
(cd plugin-sdk-go/schematest && go vet ./... && go test -count=1 ./...)
(cd examples/go-plugin && GO_WORDS_BIN="$out/agentenv-go-words" go test -count=1 ./...)
echo "Go SDK and plugin tested; plugin built: $out/agentenv-go-words (manifest beside it)"
