#!/usr/bin/env bash
# The README's test command: every test of every crate, on any machine.
#
#   scripts/test.sh [CARGO TEST ARGS...]
#
# 1. Installs what the tests need and the machine lacks, as CI does:
#    redis-server (and python3's venv module) from the distribution's
#    packages with apt-get; moto[server], wsgidav and cheroot (the S3 and
#    WebDAV stores) and the Python MCP client from PyPI, into a virtual
#    environment under target/ so the user's Python stays untouched.
# 2. Starts Redis, moto and wsgidav on free loopback ports and passes their
#    URLs to the tests (AIC_TEST_REDIS_URL, AIC_TEST_S3_URL,
#    AIC_TEST_WEBDAV_URL), and the venv's python in AIC_TEST_PYTHON.
# 3. Runs `cargo test --workspace --no-fail-fast` with the arguments given
#    (e.g. `-j 1`, `--locked`, `--test tests mcp::`).
# 4. Stops the stores whatever happens, and exits with cargo's status.
set -euo pipefail
cd "$(dirname "$0")/.."

# What the tests install from PyPI. A change here rebuilds the venv's packages.
python_packages=('mcp==2.3.0' 'jsonschema==4.*' 'moto[server]==5.2.*' 'wsgidav==4.4.*' 'cheroot==11.*')

say() { printf 'test.sh: %s\n' "$*" >&2; }

# apt-get as root, or through sudo.
apt_install() {
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || {
      say "cannot install $* without root or sudo: install them (e.g. apt-get install $*) and run again"
      exit 1
    }
    sudo=(sudo)
  fi
  command -v apt-get >/dev/null || {
    say "no apt-get here: install $* with this system's package manager (e.g. brew install redis) and run again"
    exit 1
  }
  say "installing $* (apt-get)"
  local log
  log=$(mktemp)
  if ! { "${sudo[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@"; } >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    say "apt-get could not install $*"
    exit 1
  fi
  rm -f "$log"
}

missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v python3 >/dev/null || missing+=(python3 python3-venv)
if command -v python3 >/dev/null && ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  missing+=(python3-venv)
fi
if [ ${#missing[@]} -gt 0 ]; then
  apt_install "${missing[@]}"
fi

target_dir=${CARGO_TARGET_DIR:-target}
case $target_dir in /*) ;; *) target_dir=$PWD/$target_dir ;; esac
venv="$target_dir/test-venv"
python="$venv/bin/python"
stamp="$venv/.aic-packages"
if [ ! -x "$python" ]; then
  say "creating the Python environment $venv"
  python3 -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "${python_packages[*]}" ]; then
  say "installing ${python_packages[*]} into $venv (pip)"
  "$python" -m pip install --quiet --disable-pip-version-check "${python_packages[@]}"
  printf '%s' "${python_packages[*]}" >"$stamp"
fi

store_pids=()
store_dir=$(mktemp -d "${TMPDIR:-/tmp}/aic-test-stores.XXXXXX")
# shellcheck disable=SC2317 # run by the EXIT trap
stop_stores() {
  for pid in ${store_pids[@]+"${store_pids[@]}"}; do kill "$pid" 2>/dev/null || true; done
  for pid in ${store_pids[@]+"${store_pids[@]}"}; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$store_dir"
}
trap stop_stores EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Waits up to 30 s for `name` to listen on `port`; shows its log if it does not.
wait_port() {
  local name=$1 port=$2
  for _ in $(seq 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.1
  done
  say "$name did not start on port $port; its log:"
  cat "$store_dir/$name.log" >&2
  return 1
}

redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >"$store_dir/redis.log" 2>&1 &
store_pids+=($!)
s3_port=$(free_port)
"$venv/bin/moto_server" -H 127.0.0.1 -p "$s3_port" >"$store_dir/moto.log" 2>&1 &
store_pids+=($!)
webdav_port=$(free_port)
mkdir -p "$store_dir/webdav"
"$venv/bin/wsgidav" --host 127.0.0.1 --port "$webdav_port" --root "$store_dir/webdav" --auth anonymous >"$store_dir/wsgidav.log" 2>&1 &
store_pids+=($!)
wait_port redis "$redis_port"
wait_port moto "$s3_port"
wait_port wsgidav "$webdav_port"
# The S3 tests share one bucket.
"$python" -c 'import sys, urllib.request; urllib.request.urlopen(urllib.request.Request(sys.argv[1], method="PUT"))' \
  "http://127.0.0.1:$s3_port/aic-test"

export AIC_TEST_REDIS_URL="redis://127.0.0.1:$redis_port/0"
export AIC_TEST_S3_URL="s3://aic-test/ci?endpoint=http://127.0.0.1:$s3_port&region=us-east-1"
export AIC_TEST_WEBDAV_URL="webdav+http://127.0.0.1:$webdav_port/"
export AIC_TEST_PYTHON="$python"
say "stores: redis :$redis_port, S3 (moto) :$s3_port, WebDAV (wsgidav) :$webdav_port; python $python"

# Not `exec`: the EXIT trap stops the stores after cargo.
status=0
cargo test --workspace --no-fail-fast "$@" || status=$?
exit "$status"
