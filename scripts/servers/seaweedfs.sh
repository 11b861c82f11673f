#!/usr/bin/env bash
# A throwaway SeaweedFS S3 gateway on loopback, for the hosted-store tests.
#   scripts/servers/seaweedfs.sh build            build `weed` into the cache when it is missing; print its path
#   scripts/servers/seaweedfs.sh start STATE_DIR [BUCKET...]
#                                                 start a server whose data, logs and settings live in STATE_DIR,
#                                                 create the buckets, print shell assignments (S3 endpoint,
#                                                 credentials that may do anything, credentials that may only
#                                                 read and list (S3_READONLY_*), and the server's process id
#                                                 (WEED_PID), for a test that pauses it). Buckets are never
#                                                 created on upload, so a missing one is an error as on a real S3.
#   scripts/servers/seaweedfs.sh stop STATE_DIR   stop the server started in STATE_DIR
# The binary is built from the Go module proxy (`go install` refuses the module: its go.mod has replace
# directives) and cached outside the checkout, under ${XDG_CACHE_HOME:-$HOME/.cache}/agent-env-ci/. The first
# build takes about ten minutes and 2 GB of modules on a 2-core machine. Every failure exits non-zero, so a
# test that needs the server fails instead of skipping.
set -euo pipefail

module=github.com/seaweedfs/seaweedfs
version=v0.0.0-20261109003541-7506e5f91cd6
cache="${XDG_CACHE_HOME:-$HOME/.cache}/agent-env-ci"
weed="$cache/weed-$version/weed"

die() { echo "seaweedfs.sh: $*" >&2; exit 1; }

build() {
  if [ -f "$weed" ] && [ -x "$weed" ]; then echo "$weed"; return; fi
  [ -e "$weed" ] && rm -rf "$weed"  # a leftover of an interrupted or broken build
  command -v go >/dev/null || die "go is not on PATH; install Go 1.22 or later to build the SeaweedFS server"
  command -v python3 >/dev/null || die "python3 is not on PATH; it reads the module download's JSON"
  mkdir -p "$cache"
  local info dir work
  info=$(GOFLAGS=-mod=mod go mod download -json "$module@$version") \
    || die "could not download $module@$version through the Go module proxy"
  dir=$(printf '%s' "$info" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])') \
    || die "the module download named no folder"
  work=$(mktemp -d "$cache/seaweedfs-src.XXXXXX")
  # Removed on every way out of here by hand: a RETURN trap set in a function outlives it, and fired
  # again on the next function's return (start's), where this function's `work` no longer exists.
  cp -r "$dir/." "$work/" && chmod -R u+w "$work" || { rm -rf "$work"; die "could not copy the SeaweedFS source to $work"; }
  # The source tree has a `weed/` folder, so the binary gets a name of its own (`-o weed` would land inside it).
  (cd "$work" && GOFLAGS=-mod=mod go build -o "$work/weed.bin" ./weed) || { rm -rf "$work"; die "go build of SeaweedFS failed"; }
  [ -f "$work/weed.bin" ] || { rm -rf "$work"; die "go build of SeaweedFS produced no binary"; }
  mkdir -p "$(dirname "$weed")"
  mv "$work/weed.bin" "$weed.partial" && mv "$weed.partial" "$weed"
  rm -rf "$work"
  echo "$weed"
}

# free_ports N: N distinct free loopback ports, one per line. All sockets stay bound until every port is
# chosen: asked one at a time, the kernel may hand a just-closed port out twice (it did: the master's port
# came back as the volume server's gRPC port, and weed died on "address already in use").
free_ports() {
  python3 -c '
import socket, sys
held = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    held.append(s)
print("\n".join(str(s.getsockname()[1]) for s in held))
' "$1"
}

start() {
  local state=$1
  build >/dev/null
  mkdir -p "$state/data"
  # Every port is chosen here: the gRPC ports otherwise default to the HTTP port + 10000, which overflows
  # for high ephemeral ports, and the Iceberg and Lance side servers would take fixed ports.
  local s3_port master_port volume_port filer_port access secret ro_access ro_secret
  local master_grpc volume_grpc filer_grpc s3_grpc
  { read -r s3_port; read -r master_port; read -r volume_port; read -r filer_port
    read -r master_grpc; read -r volume_grpc; read -r filer_grpc; read -r s3_grpc; } < <(free_ports 8)
  access=agentenvtest
  secret=$(python3 -c 'import secrets; print(secrets.token_hex(20))')
  ro_access=agentenvreader
  ro_secret=$(python3 -c 'import secrets; print(secrets.token_hex(20))')
  cat >"$state/s3.json" <<JSON
{"identities":[{"name":"agent-env-test","credentials":[{"accessKey":"$access","secretKey":"$secret"}],
 "actions":["Admin","Read","Write","List","Tagging"]},
 {"name":"agent-env-reader","credentials":[{"accessKey":"$ro_access","secretKey":"$ro_secret"}],
 "actions":["Read","List"]}]}
JSON
  # -volume.max is a count, not 0 ("auto"): auto derives it from the disk's free space, and on a disk
  # with little room each new bucket's volumes used it up ("No writable volumes and no free volumes
  # left"). Volumes are not preallocated, so the count costs no disk.
  # -logdir keeps weed's own log files in the state folder (they go to /tmp otherwise, one set per start).
  "$weed" -logdir="$state" server -dir="$state/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
    -master.port="$master_port" -master.port.grpc="$master_grpc" -master.telemetry=false \
    -master.volumeSizeLimitMB=1024 -volume.max=200 \
    -volume.port="$volume_port" -volume.port.grpc="$volume_grpc" \
    -filer.port="$filer_port" -filer.port.grpc="$filer_grpc" \
    -s3 -s3.port="$s3_port" -s3.port.grpc="$s3_grpc" -s3.port.iceberg=0 -s3.port.lance=0 \
    -s3.config="$state/s3.json" -s3.autoCreateBucket=false >"$state/weed.log" 2>&1 &
  echo $! >"$state/weed.pid"
  for _ in $(seq 1 120); do
    if curl -s -o /dev/null "http://127.0.0.1:$s3_port/"; then
      local bucket
      for bucket in "${@:2}"; do
        create_bucket "http://127.0.0.1:$s3_port" "$access" "$secret" "$bucket" || {
          stop "$state"
          die "could not create the bucket '$bucket' on the server started in $state (log: $state/weed.log); it is stopped again"
        }
      done
      printf 'S3_ENDPOINT=http://127.0.0.1:%s\nAWS_ACCESS_KEY_ID=%s\nAWS_SECRET_ACCESS_KEY=%s\n' \
        "$s3_port" "$access" "$secret"
      printf 'S3_READONLY_ACCESS_KEY_ID=%s\nS3_READONLY_SECRET_ACCESS_KEY=%s\nWEED_PID=%s\n' \
        "$ro_access" "$ro_secret" "$(cat "$state/weed.pid")"
      return
    fi
    kill -0 "$(cat "$state/weed.pid")" 2>/dev/null || { tail -20 "$state/weed.log" >&2; rm -f "$state/weed.pid"; die "weed exited during start"; }
    sleep 1
  done
  stop "$state"
  die "the S3 gateway did not answer on 127.0.0.1:$s3_port within 120 s (log: $state/weed.log)"
}

# Makes the bucket, or finds it there already (a state folder started before keeps its buckets: a
# 409 then, and the bucket answers a HEAD). Fails, saying why, when neither happens in 30 s.
create_bucket() {
  local endpoint=$1 access=$2 secret=$3 bucket=$4 status
  # The volume servers may still be joining the master: retry for a while.
  for _ in $(seq 1 60); do
    status=$(curl -s -o /dev/null -w '%{http_code}' -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" \
      --user "$access:$secret" "$endpoint/$bucket") || status=000
    [ "$status" = 200 ] && return 0
    if [ "$status" = 409 ] && [ "$(curl -s -o /dev/null -w '%{http_code}' -I --aws-sigv4 "aws:amz:us-east-1:s3" \
      --user "$access:$secret" "$endpoint/$bucket")" = 200 ]; then
      return 0
    fi
    sleep 0.5
  done
  echo "seaweedfs.sh: the bucket '$bucket' was neither made nor found (last HTTP status $status)" >&2
  return 1
}

stop() {
  local state=$1
  [ -f "$state/weed.pid" ] || return 0
  local pid; pid=$(cat "$state/weed.pid")
  # A server a test paused (SIGSTOP) takes no SIGTERM until it runs again.
  kill -CONT "$pid" 2>/dev/null || true
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$state/weed.pid"
}

case "${1:-}" in
  build) build ;;
  start) [ $# -ge 2 ] || die "usage: seaweedfs.sh start STATE_DIR [BUCKET...]"; shift; start "$@" ;;
  stop) [ $# -eq 2 ] || die "usage: seaweedfs.sh stop STATE_DIR"; stop "$2" ;;
  *) echo "usage: scripts/servers/seaweedfs.sh build | start STATE_DIR [BUCKET...] | stop STATE_DIR" >&2; exit 2 ;;
esac
