#!/usr/bin/env bash
# Run COMMAND against a throwaway PostgreSQL server: `scripts/with_postgres.sh COMMAND [ARG...]`.
#
# Starts Debian's PostgreSQL (the newest /usr/lib/postgresql/*/bin) in a fresh cluster under var/pg/, listening only
# on 127.0.0.1 at a free port with a random password (no Unix socket: a deep checkout path can exceed the 107-byte
# socket path limit), creates the database `llmsizer`, runs COMMAND with DATABASE_URL pointing at it, then stops
# the server and deletes the cluster — also when COMMAND fails or the run is interrupted (trap).
#
# Exit status: COMMAND's. When PostgreSQL cannot be found or started, it prints
# "PostgreSQL unavailable: <reason> — skipped the PostgreSQL run" and exits 0 without running COMMAND:
# the default database stays SQLite and the PostgreSQL run is an extra (README.md, "Production").
#
# Root cannot run postgres, so as root the server runs as the `postgres` system user that Debian's package creates.
# Environment: PG_DIR (default var/pg), PG_BIN (the server's bin directory; default the newest Debian one),
# PYTHON (for picking a free port; default python3).
set -uo pipefail

cd "$(dirname "$0")/.."
PG_DIR=${PG_DIR:-var/pg}
PYTHON=${PYTHON:-python3}
DB_NAME=llmsizer
DB_USER=llmsizer
START_TIMEOUT_S=30
STOP_TIMEOUT_S=30

unavailable() {
    echo "PostgreSQL unavailable: $1 — skipped the PostgreSQL run" >&2
    exit 0
}

[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }

pg_bin=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
if [ -z "$pg_bin" ] && command -v initdb >/dev/null; then
    pg_bin=$(dirname "$(command -v initdb)")
fi
[ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ] && [ -x "$pg_bin/pg_ctl" ] \
    || unavailable "no initdb/pg_ctl found (install Debian's 'postgresql' package; \`make test\` does so as root)"

# As root: run the server as `postgres`; otherwise as the current user.
if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || unavailable "no 'postgres' system user to run the server as (root cannot run postgres)"
    as_server_user() { runuser -u postgres -- "$@"; }
else
    as_server_user() { "$@"; }
fi

# A fresh cluster directory per run (two runs in one checkout must not share one) that the server user can write:
# under var/pg, or under $TMPDIR when the checkout is not reachable by that user (e.g. a clone under /root).
new_cluster_dir() {
    local parent=$1 dir
    mkdir -p "$parent" && dir=$(mktemp -d "$parent/cluster.XXXXXX") || return 1
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir" || { rm -rf "$dir"; return 1; }; fi
    if ! as_server_user test -w "$dir"; then rm -rf "$dir"; return 1; fi
    echo "$dir"
}
cluster_root=$(new_cluster_dir "$(realpath -m "$PG_DIR")" 2>/dev/null) \
    || cluster_root=$(new_cluster_dir "${TMPDIR:-/tmp}" 2>/dev/null) \
    || unavailable "cannot create a cluster directory writable by the server user"
data_dir=$cluster_root/data
log_file=$cluster_root/server.log

server_started=0
command_pid=""
cleanup() {
    if [ -n "$command_pid" ]; then kill -TERM "$command_pid" 2>/dev/null; wait "$command_pid" 2>/dev/null; fi
    if [ "$server_started" = 1 ]; then
        as_server_user "$pg_bin/pg_ctl" stop -D "$data_dir" -m fast -w -t "$STOP_TIMEOUT_S" >/dev/null 2>&1 \
            || as_server_user "$pg_bin/pg_ctl" stop -D "$data_dir" -m immediate -w -t "$STOP_TIMEOUT_S" >/dev/null 2>&1
    fi
    rm -rf "$cluster_root"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

password=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
pwfile=$cluster_root/pwfile
( umask 077 && printf '%s\n' "$password" > "$pwfile" )
[ "$(id -u)" = 0 ] && chown postgres: "$pwfile"

as_server_user "$pg_bin/initdb" -D "$data_dir" -U "$DB_USER" --pwfile="$pwfile" --auth=scram-sha-256 \
    --encoding=UTF8 --locale=C --no-sync >"$cluster_root/initdb.log" 2>&1 \
    || unavailable "initdb failed: $(tail -n 1 "$cluster_root/initdb.log")"
rm -f "$pwfile"

free_port() {
    "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Throwaway data: no fsync and no full-page writes (PostgreSQL docs, "Non-Durable Settings").
# Another process may take the free port between the probe and the bind, so try a few ports.
for attempt in 1 2 3; do
    port=$(free_port) || unavailable "cannot pick a free loopback port with $PYTHON"
    if as_server_user "$pg_bin/pg_ctl" start -D "$data_dir" -l "$log_file" -w -t "$START_TIMEOUT_S" -o \
        "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='' -c fsync=off \
         -c synchronous_commit=off -c full_page_writes=off" >/dev/null 2>&1; then
        server_started=1
        break
    fi
done
[ "$server_started" = 1 ] || unavailable "the server did not start: $(tail -n 1 "$log_file" 2>/dev/null)"

export PGPASSWORD=$password
"$pg_bin/createdb" -h 127.0.0.1 -p "$port" -U "$DB_USER" "$DB_NAME" 2>"$cluster_root/createdb.log" \
    || unavailable "createdb failed: $(tail -n 1 "$cluster_root/createdb.log")"
unset PGPASSWORD

echo "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (cluster in $cluster_root)"
# COMMAND runs in the background so that a TERM/INT reaches the trap at once (bash runs traps only between
# commands); the trap then stops COMMAND, the server and deletes the cluster.
DATABASE_URL="postgres://$DB_USER:$password@127.0.0.1:$port/$DB_NAME" "$@" &
command_pid=$!
wait "$command_pid"
status=$?
command_pid=""
exit "$status"
