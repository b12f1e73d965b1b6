#!/bin/bash
# Makes the cluster on first start, the way the official image does (a database and a user
# with a password, reachable from the container network), then runs the server as `postgres`.
set -euo pipefail
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
mkdir -p "$PGDATA" /run/postgresql
chown postgres:postgres "$PGDATA" /run/postgresql
chmod 700 "$PGDATA"
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s' "$POSTGRES_PASSWORD" >/run/postgresql/pw
  chown postgres /run/postgresql/pw
  as_postgres initdb -D "$PGDATA" --username="$POSTGRES_USER" --pwfile=/run/postgresql/pw \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm /run/postgresql/pw
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    as_postgres postgres --single -D "$PGDATA" -c listen_addresses= postgres \
      <<<"CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\";" >/dev/null
  fi
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups \
  postgres -D "$PGDATA" -c listen_addresses='*'
