#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster on a free loopback port, for the hosted-store tests.
#   scripts/servers/postgres.sh start STATE_DIR   initdb a cluster in STATE_DIR, start it, print `PG_DSN=...`
#   scripts/servers/postgres.sh stop STATE_DIR    stop the cluster in STATE_DIR
#   scripts/servers/postgres.sh install           install the server binaries when they are missing
# The server binaries come from Debian's postgresql-15 package, installed with apt-get when they are missing.
# When run as root the cluster runs as the `postgres` user. Every failure exits non-zero, so a test that needs
# the server fails instead of skipping.
set -euo pipefail

bin=/usr/lib/postgresql/15/bin
die() { echo "postgres.sh: $*" >&2; exit 1; }

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

install_if_missing() {
  [ -x "$bin/initdb" ] && return
  command -v apt-get >/dev/null || die "PostgreSQL 15 is not installed ($bin/initdb) and apt-get is not available"
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null \
    || die "apt-get could not install postgresql-15"
  [ -x "$bin/initdb" ] || die "postgresql-15 is installed but $bin/initdb is missing"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

start() {
  local state=$1
  install_if_missing
  mkdir -p "$state"
  local data="$state/pgdata" port password
  port=$(free_port)
  password=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
  printf '%s\n' "$password" >"$state/pwfile"
  if [ "$(id -u)" -eq 0 ]; then chown -R postgres "$state"; fi
  as_owner "$bin/initdb" -D "$data" -U agentenv --pwfile="$state/pwfile" -A scram-sha-256 >"$state/initdb.log" 2>&1 \
    || { cat "$state/initdb.log" >&2; die "initdb failed"; }
  as_owner "$bin/pg_ctl" -D "$data" -l "$state/postgres.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $state" start >/dev/null \
    || { tail -20 "$state/postgres.log" >&2; die "the server did not start on 127.0.0.1:$port"; }
  # -w: never prompt (a prompt with no terminal waits forever); the password goes through the environment.
  as_owner env PGPASSWORD="$password" "$bin/createdb" -w -h 127.0.0.1 -p "$port" -U agentenv agentenv \
    || die "could not create the agentenv database"
  printf 'PG_DSN=postgres://agentenv:%s@127.0.0.1:%s/agentenv\n' "$password" "$port"
}

stop() {
  local state=$1
  [ -d "$state/pgdata" ] || return 0
  as_owner "$bin/pg_ctl" -D "$state/pgdata" -m fast -w stop >/dev/null 2>&1 || true
}

case "${1:-}" in
  start) [ $# -eq 2 ] || die "usage: postgres.sh start STATE_DIR"; start "$2" ;;
  stop) [ $# -eq 2 ] || die "usage: postgres.sh stop STATE_DIR"; stop "$2" ;;
  install) install_if_missing; echo "$bin" ;;
  *) echo "usage: scripts/servers/postgres.sh start STATE_DIR | stop STATE_DIR | install" >&2; exit 2 ;;
esac
