#!/bin/bash
# Entrypoint of the local stand-in for the `postgres:15` image (docker/base/build-base-images.sh):
# the subset of the official image's behaviour that docker/docker-compose.yml uses.
#   POSTGRES_USER (default postgres): the superuser initdb creates.
#   POSTGRES_HOST_AUTH_METHOD=trust, or POSTGRES_PASSWORD (scram-sha-256), for connections from
#   other containers; without either it refuses to start, as the official image does.
#   PGDATA (default /var/lib/postgresql/data): initialised on the first start, kept afterwards.
set -euo pipefail
: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
export PGDATA

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -n "${POSTGRES_PASSWORD:-}" ]; then
    method="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"
  elif [ "${POSTGRES_HOST_AUTH_METHOD:-}" = trust ]; then
    method=trust
  else
    echo "postgres entrypoint: set POSTGRES_PASSWORD, or POSTGRES_HOST_AUTH_METHOD=trust" >&2
    exit 1
  fi
  pwfile=()
  if [ -n "${POSTGRES_PASSWORD:-}" ]; then
    printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/pwfile
    pwfile=(--pwfile=/tmp/pwfile)
  fi
  initdb --username="$POSTGRES_USER" --encoding=UTF8 --locale=C.UTF-8 --auth-local=trust \
    --auth-host="$method" "${pwfile[@]}" >/dev/null
  rm -f /tmp/pwfile
  printf 'host all all all %s\n' "$method" >> "$PGDATA/pg_hba.conf"
  printf "listen_addresses = '*'\n" >> "$PGDATA/postgresql.conf"
  echo "postgres entrypoint: initialised $PGDATA (superuser $POSTGRES_USER, host auth $method)"
fi

if [ "${1:-postgres}" = postgres ]; then
  shift || true
  exec postgres "$@"
fi
exec "$@"
