#!/usr/bin/env bash
# Installs the Debian packages ply needs to build, test and run, when any is missing.
# Idempotent and quiet when everything is already there.
#
#   deploy/install-deps.sh [--ha]
#
# --ha: also Patroni and etcd, for PostgreSQL with a synchronous standby and automatic failover
# (deploy/local/pg-ha, `deploy/local/up --ha`, deploy/local/db-failover and the failover test,
# which is skipped with a message without them), and PgBouncer (pgbouncer_test). CI asks for
# them.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang-format
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libcpp-httplib-dev
  libpqxx-dev libssl-dev postgresql
  python3-yaml curl openssl clang ca-certificates
  # ply-web's browser tests: Debian's Chromium, driven by playwright-core from npm.
  chromium
)
if [ "${1:-}" = "--ha" ]; then
  packages+=(patroni etcd-server etcd-client pgbouncer)
fi

# The Kubernetes API schemas for `check-deploy.py --schemas` (versions pinned by its
# package-lock.json; node_modules is ignored by git). Quiet when installed; without npm, the
# schema test is simply not registered.
install_schemas() {
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/k8s-validate"
  [ -d "$dir/node_modules/@kubernetes-models/cloudnative-pg" ] && return 0
  command -v npm >/dev/null || return 0
  echo "Installing the Kubernetes schemas (npm ci in deploy/k8s-validate)"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
    echo "deploy/install-deps.sh: npm ci failed; the schema check is skipped" >&2
}
trap install_schemas EXIT

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Node.js and npm by command, not by package: a machine may have them from elsewhere (NodeSource
# ships npm inside its nodejs), and Debian's npm package would fight that one.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# playwright-core at the version package-lock.json pins; it drives the system's Chromium and never
# downloads a browser of its own.
web="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/web"
if [ ! -f "$web/node_modules/.package-lock.json" ] ||
  [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
  echo "Installing the browser tests' npm packages in $web"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix "$web" --no-audit --no-fund --loglevel=error >/dev/null
fi
