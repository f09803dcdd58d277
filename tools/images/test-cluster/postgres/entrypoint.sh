#!/bin/sh
# Starts PostgreSQL on $PGDATA, creating the database cluster first when the directory holds none:
# superuser `postgres` with the password of $POSTGRES_PASSWORD_FILE, SCRAM for every connection
# over the network, trust only on the container's own Unix socket. Arguments are passed to
# `postgres` (for example `-c max_connections=300`).
set -eu
: "${PGDATA:?PGDATA must name the data directory}"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD_FILE:-}" ] || [ ! -s "$POSTGRES_PASSWORD_FILE" ]; then
    echo "postgres-entrypoint: $PGDATA holds no database yet and POSTGRES_PASSWORD_FILE names no readable, non-empty file" >&2
    exit 1
  fi
  if [ -d "$PGDATA" ] && [ -n "$(ls -A "$PGDATA")" ]; then
    echo "postgres-entrypoint: $PGDATA is not empty but holds no PG_VERSION: refusing to touch it" >&2
    exit 1
  fi
  initdb --pgdata="$PGDATA" --username=postgres --encoding=UTF8 --no-locale \
    --auth-local=trust --auth-host=scram-sha-256 --pwfile="$POSTGRES_PASSWORD_FILE"
  printf '%s\n' \
    'local all all trust' \
    'host all all 0.0.0.0/0 scram-sha-256' \
    'host all all ::/0 scram-sha-256' >"$PGDATA/pg_hba.conf"
fi

exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/var/run/postgresql "$@"
