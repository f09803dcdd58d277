# shellcheck shell=bash
# Tools that the tests need beyond npm packages, installed idempotently (reused when present).
# Sourced by .ci/run; can also be run directly: `bash tools/ci/install-tools.sh [helm|nats|apt|all]`.
#
#   ensure_apt_packages  PostgreSQL server binaries and Chromium (Debian packages, as root)
#   ensure_nats_server   nats-server into <repo>/.cache/bin (go install), unless on PATH
#   ensure_helm          helm into <repo>/.cache/bin (go install), unless HELM_BIN is set
#
# Binaries built here live in <repo>/.cache/bin; chart tests use <repo>/.cache/bin/helm or HELM_BIN.

WORKLANE_ROOT="${WORKLANE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
WORKLANE_CACHE_BIN="$WORKLANE_ROOT/.cache/bin"
NATS_SERVER_VERSION="${NATS_SERVER_VERSION:-v2.11.9}"
HELM_VERSION="${HELM_VERSION:-v3.19.0}"

_wl_log() { printf '[ci] %s\n' "$*" >&2; }

_wl_go() {
  if command -v go >/dev/null 2>&1; then
    command -v go
  elif [ -x /usr/local/go/bin/go ]; then
    echo /usr/local/go/bin/go
  else
    return 1
  fi
}

# Binaries built once per machine are kept in the user's cache too, so that a fresh clone on the
# same machine (CI) copies them instead of building again.
WORKLANE_USER_BIN="${XDG_CACHE_HOME:-$HOME/.cache}/worklane/bin"

# _wl_from_user_cache NAME VERSION: copies a binary built earlier on this machine into .cache/bin.
_wl_from_user_cache() {
  local cached="$WORKLANE_USER_BIN/$1-$2"
  [ -x "$cached" ] || return 1
  mkdir -p "$WORKLANE_CACHE_BIN"
  cp "$cached" "$WORKLANE_CACHE_BIN/$1.tmp.$$" && mv "$WORKLANE_CACHE_BIN/$1.tmp.$$" "$WORKLANE_CACHE_BIN/$1"
}

_wl_to_user_cache() {
  mkdir -p "$WORKLANE_USER_BIN" 2>/dev/null || return 0
  cp "$WORKLANE_CACHE_BIN/$1" "$WORKLANE_USER_BIN/$1-$2.tmp.$$" 2>/dev/null &&
    mv "$WORKLANE_USER_BIN/$1-$2.tmp.$$" "$WORKLANE_USER_BIN/$1-$2" || true
}

# _wl_go_install MODULE@VERSION: builds into .cache/bin quietly, printing the log on failure.
_wl_go_install() {
  local target="$1" go log
  if ! go="$(_wl_go)"; then
    _wl_log "Go is needed to build $target: install Go (https://go.dev/doc/install or apt-get install golang-go)"
    return 1
  fi
  mkdir -p "$WORKLANE_CACHE_BIN"
  log="$(mktemp)"
  if ! GOBIN="$WORKLANE_CACHE_BIN" GOFLAGS="${GOFLAGS:--trimpath}" "$go" install "$target" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    _wl_log "go install $target failed"
    return 1
  fi
  rm -f "$log"
}

_wl_pg_present() {
  if command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then return 0; fi
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    [ -x "$dir/pg_ctl" ] && [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ] && return 0
  done
  return 1
}

_wl_chromium_present() {
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1
}

# PostgreSQL server and Chromium from Debian's packages, installed only when missing.
ensure_apt_packages() {
  local missing=()
  _wl_pg_present || missing+=(postgresql)
  _wl_chromium_present || missing+=(chromium)
  if [ "${#missing[@]}" -eq 0 ]; then
    _wl_log "PostgreSQL and Chromium already installed"
    return 0
  fi
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    _wl_log "missing: ${missing[*]}; install them (e.g. sudo apt-get install -y ${missing[*]})"
    return 1
  fi
  _wl_log "installing ${missing[*]} (apt-get)"
  local policy=/usr/sbin/policy-rc.d added_policy=0 log
  # Keep the packages' post-install scripts from starting system services (a postgres on 5432).
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && added_policy=1
  fi
  log="$(mktemp)"
  local status=0
  {
    DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  } >"$log" 2>&1 || status=$?
  [ "$added_policy" -eq 1 ] && rm -f "$policy"
  if [ "$status" -ne 0 ]; then
    cat "$log" >&2
    rm -f "$log"
    _wl_log "apt-get install ${missing[*]} failed"
    return "$status"
  fi
  rm -f "$log"
}

# nats-server with JetStream: PATH, then .cache/bin, else go install (about 80 s).
ensure_nats_server() {
  if [ -n "${WORKLANE_NATS_SERVER_BIN:-}" ] && [ -x "$WORKLANE_NATS_SERVER_BIN" ]; then
    _wl_log "nats-server: $WORKLANE_NATS_SERVER_BIN (WORKLANE_NATS_SERVER_BIN)"
    return 0
  fi
  if command -v nats-server >/dev/null 2>&1; then
    _wl_log "nats-server: $(command -v nats-server)"
    return 0
  fi
  local bin="$WORKLANE_CACHE_BIN/nats-server"
  if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "${NATS_SERVER_VERSION#v}"; then
    _wl_log "nats-server: $bin (cached)"
    return 0
  fi
  if _wl_from_user_cache nats-server "$NATS_SERVER_VERSION"; then
    _wl_log "nats-server: $bin (from $WORKLANE_USER_BIN)"
    return 0
  fi
  _wl_log "building nats-server $NATS_SERVER_VERSION (go install)"
  _wl_go_install "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION"
  _wl_to_user_cache nats-server "$NATS_SERVER_VERSION"
}

# helm for the chart tests: HELM_BIN, else .cache/bin/helm of the pinned version, else go install.
ensure_helm() {
  if [ -n "${HELM_BIN:-}" ] && [ -x "$HELM_BIN" ]; then
    _wl_log "helm: $HELM_BIN (HELM_BIN)"
    return 0
  fi
  local bin="$WORKLANE_CACHE_BIN/helm"
  # A go-installed helm reports only major.minor (no release ldflags): compare that.
  if [ -x "$bin" ] && "$bin" version --short 2>/dev/null | grep -q "^${HELM_VERSION%.*}"; then
    _wl_log "helm: $bin (cached)"
    return 0
  fi
  if _wl_from_user_cache helm "$HELM_VERSION"; then
    _wl_log "helm: $bin (from $WORKLANE_USER_BIN)"
    return 0
  fi
  _wl_log "building helm $HELM_VERSION (go install)"
  _wl_go_install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  _wl_to_user_cache helm "$HELM_VERSION"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-all}" in
    helm) ensure_helm ;;
    nats) ensure_nats_server ;;
    apt) ensure_apt_packages ;;
    all) ensure_apt_packages && ensure_nats_server && ensure_helm ;;
    *) echo "usage: $0 [helm|nats|apt|all]" >&2; exit 2 ;;
  esac
fi
