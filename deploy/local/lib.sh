# Shared by deploy/local/*: where things are, and how lobby and bot instances come and go.
# Sourced, not run.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${BUILD:-build}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
DIR="${PLY_LOCAL_DIR:-$ROOT/.ply-local}"
PG_PORT="${PLY_PG_PORT:-55432}"
# Lobby instance i (1, 2, ...) listens on LOBBY_PORT + i - 1, its metrics on
# LOBBY_METRICS_BASE_PORT + i - 1; bot instance i on BOT_BASE_PORT + i - 1, its metrics on
# METRICS_BASE_PORT + i - 1.
LOBBY_PORT="${PLY_LOBBY_PORT:-50050}"
LOBBY_METRICS_BASE_PORT="${PLY_LOBBY_METRICS_BASE_PORT:-9141}"
BOT_BASE_PORT="${PLY_BOT_BASE_PORT:-50061}"
METRICS_BASE_PORT="${PLY_METRICS_BASE_PORT:-9151}"
PG_BIN="${PLY_PG_BIN:-/usr/lib/postgresql/15/bin}"
# ply-web, the browser's gateway, on loopback.
WEB_PORT="${PLY_WEB_PORT:-8080}"
TARGETS="$DIR/run/bots.txt"

as_pg=()
[ "$(id -u)" = 0 ] && as_pg=(runuser -u postgres --)

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Starts a server in the background and waits for its "listening on" line.
start_server() {
  local name="$1"; shift
  # Its own session: closing the terminal that started the stack does not stop it.
  setsid "$@" </dev/null >"$DIR/logs/$name.out" 2>"$DIR/logs/$name.log" &
  echo $! >"$DIR/run/$name.pid"
  for _ in $(seq 1 300); do
    grep -q "listening on" "$DIR/logs/$name.out" 2>/dev/null && return 0
    kill -0 "$(cat "$DIR/run/$name.pid")" 2>/dev/null || break
    sleep 0.05
  done
  echo "$name did not start; see $DIR/logs/$name.log" >&2
  tail -5 "$DIR/logs/$name.log" >&2 || true
  return 1
}

# SIGTERM (a ply server drains: in-flight work finishes), then SIGKILL after 5 s.
stop_server() {
  local pidfile="$DIR/run/$1.pid"
  [ -f "$pidfile" ] || return 0
  local pid
  pid="$(cat "$pidfile")"
  if kill -TERM "$pid" 2>/dev/null; then
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

bot_count() {
  local n=0
  for f in "$DIR"/run/bot*.pid; do running "$f" && n=$((n + 1)); done
  echo "$n"
}

start_bot() {
  local i="$1"
  running "$DIR/run/bot$i.pid" && return 0
  start_server "bot$i" "$BUILD/bot-service/ply-bot" --host=127.0.0.1 \
    --port=$((BOT_BASE_PORT + i - 1)) --metrics_port=$((METRICS_BASE_PORT + i - 1)) \
    --instance="bot$i" ${PLY_BOT_FLAGS:-}
}

# The lobby re-reads this file every second; written whole, then renamed into place.
write_targets() {
  local n="$1" i
  : >"$TARGETS.new"
  for i in $(seq 1 "$n"); do echo "127.0.0.1:$((BOT_BASE_PORT + i - 1))" >>"$TARGETS.new"; done
  mv "$TARGETS.new" "$TARGETS"
}

# Brings the number of bot instances to $1: new ones start before the lobby hears of them;
# removed ones leave the lobby's list first, then drain.
scale_bots() {
  local n="$1" have i
  have="$(bot_count)"
  for i in $(seq 1 "$n"); do start_bot "$i" || return 1; done
  write_targets "$n"
  if [ "$have" -gt "$n" ]; then
    sleep 1.5
    for i in $(seq $((n + 1)) "$have"); do stop_server "bot$i"; done
  fi
}

lobby_count() {
  local n=0
  for f in "$DIR"/run/lobby*.pid; do running "$f" && n=$((n + 1)); done
  echo "$n"
}

# The lobbies' database: the single server, or every node of the Patroni cluster that
# `up --ha` started (libpq keeps the one that accepts writes).
db_url() {
  if [ -f "$DIR/run/db.url" ]; then
    cat "$DIR/run/db.url"
  else
    echo "host=127.0.0.1 port=$PG_PORT dbname=ply user=postgres"
  fi
}

# Lobby instance $1 on the local database; several instances share it.
start_lobby() {
  local i="$1"
  running "$DIR/run/lobby$i.pid" && return 0
  # shellcheck disable=SC2086
  start_server "lobby$i" "$BUILD/lobby-server/ply-lobby" --host=127.0.0.1 \
    --port=$((LOBBY_PORT + i - 1)) --metrics_port=$((LOBBY_METRICS_BASE_PORT + i - 1)) \
    --database_url="$(db_url)" \
    --bot_target="file:$TARGETS" --client_limit_exempt=127.0.0.1,::1 ${PLY_LOBBY_FLAGS:-}
}

# host:port of every lobby instance up, comma-separated (what `ply --server` takes).
lobby_addresses() {
  local i out=""
  for i in $(seq 1 20); do
    running "$DIR/run/lobby$i.pid" && out="$out${out:+,}127.0.0.1:$((LOBBY_PORT + i - 1))"
  done
  echo "$out"
}

# Brings the number of lobby instances to $1 (removed ones drain: their matches move to the
# others).
scale_lobbies() {
  local n="$1" have i
  have="$(lobby_count)"
  for i in $(seq 1 "$n"); do start_lobby "$i" || return 1; done
  if [ "$have" -gt "$n" ]; then
    for i in $(seq $((n + 1)) "$have"); do stop_server "lobby$i"; done
  fi
}

# ply-web in front of every lobby instance up; restarted when that list changes (it reads the
# list once, at start).
start_web() {
  local lobbies
  lobbies="$(lobby_addresses)"
  if running "$DIR/run/web.pid" && [ "$(cat "$DIR/run/web.lobbies" 2>/dev/null)" = "$lobbies" ]; then
    return 0
  fi
  stop_server web
  # shellcheck disable=SC2086
  start_server web "$BUILD/client-web/ply-web" --host=127.0.0.1 --port="$WEB_PORT" \
    --lobby="$lobbies" ${PLY_WEB_FLAGS:-} || return 1
  echo "$lobbies" >"$DIR/run/web.lobbies"
}
