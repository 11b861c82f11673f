#!/usr/bin/env bash
# The crates a plugin author depends on are publishable: `cargo package` packages and builds
# agent-env-protocol, agent-env-store and agent-env-plugin-sdk as crates.io would get them (each against
# the packaged copies of the ones before it), with their metadata inherited from the workspace. Needs cargo
# and the crates.io index.
set -euo pipefail
cd "$(dirname "$0")/.."
msrv=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
# Cargo verifies each crate against the packaged copies of the ones before it, extracted into its
# registry cache, and keeps an extracted copy from an earlier run of this script even when the crate
# changed since: remove ours, so the verification builds what is packaged now.
for crate in agent-env-protocol agent-env-store agent-env-plugin-sdk; do
  rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"$crate-$version"
done
# The verification builds go to a target folder of their own, where cargo takes a packaged crate for a
# registry's, built once for its version: a crate changed since under the same version would be checked
# against its stale build (the SDK against an older store API). Those three are built afresh each time;
# their dependencies stay cached.
verify=target/package-verify
rm -rf target/package "$verify"/debug/.fingerprint/agent-env-* "$verify"/debug/deps/libagent_env_* \
  "$verify"/debug/deps/agent_env_*
cargo package --quiet --allow-dirty --target-dir "$verify" -p agent-env-protocol -p agent-env-store -p agent-env-plugin-sdk
for crate in agent-env-protocol agent-env-store agent-env-plugin-sdk; do
  listing=$(cargo package --list --allow-dirty -p "$crate")
  for file in Cargo.toml README.md src/lib.rs; do
    grep -qx "$file" <<<"$listing" || { echo "scripts/test-package.sh: $crate's package lacks $file" >&2; exit 1; }
  done
  meta=$(cargo metadata --no-deps --format-version 1 | python3 -c "import json,sys; p=[p for p in json.load(sys.stdin)['packages'] if p['name']=='$crate'][0]; print(p['rust_version'], p['license'], p['repository'], bool(p['description']))")
  case "$meta" in
    "$msrv Apache-2.0 https://"*" True") ;;
    *) echo "scripts/test-package.sh: $crate's metadata is incomplete: $meta" >&2; exit 1 ;;
  esac
done
# Their documentation is what a plugin author reads on a docs site: it builds without a broken link.
RUSTDOCFLAGS="-D warnings" cargo doc --quiet --no-deps --target-dir "$verify" \
  -p agent-env-protocol -p agent-env-store -p agent-env-plugin-sdk \
  || { echo "scripts/test-package.sh: the published crates' documentation has warnings (above)" >&2; exit 1; }
echo "3 crates packaged, built and documented: agent-env-protocol, agent-env-store, agent-env-plugin-sdk"
