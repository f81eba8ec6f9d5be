#!/usr/bin/env bash
# The remote cache's targets (issue 19) on one repository, against a real
# Redis on loopback:
#   1. a fresh machine (empty AIC_HOME) compiling against a store filled by
#      `precompute --push`, next to a warm local compile (medians of RUNS);
#   2. four shards in parallel against one unsharded precompute (same keys,
#      CPU per shard);
#   3. an unreachable store (closed port, and a server that never answers).
# Usage: perf/remote_cache.sh REPO [RUNS]   (uses target/release/aic)
set -euo pipefail
repo=$(realpath "$1")
runs=${2:-5}
aic=$(realpath "$(dirname "$0")/../target/release/aic")
intent="fix the parser error recovery for class properties"
work=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >"$work/redis.log" 2>&1 &
redis_pid=$!
silent_pid=
cleanup() {
  kill "$redis_pid" ${silent_pid:+"$silent_pid"} 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
sleep 0.5
url="redis://127.0.0.1:$port/0"

# Prints "wall_s cpu_s" of one run of the command; its stdout goes to $work/out.
timed() {
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" >"$work/out" 2>"$work/err"
  awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$work/time"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "== fill: precompute --push (prefix whole)"
mkdir -p "$work/ci"
AIC_HOME="$work/ci" AIC_CACHE_REMOTE_URL="$url" timed "$aic" precompute --root "$repo" --push
cat "$work/out"

echo "== warm local compile (inspect --json), $runs runs"
for _ in $(seq "$runs"); do
  AIC_HOME="$work/ci" timed "$aic" inspect "$intent" --root "$repo" --json
done | tee "$work/warm"
echo "median wall $(cut -d' ' -f1 "$work/warm" | median) s, cpu $(cut -d' ' -f2 "$work/warm" | median) s"

echo "== fresh machine through the remote tier, $runs runs (new AIC_HOME each)"
for i in $(seq "$runs"); do
  mkdir -p "$work/fresh$i"
  AIC_HOME="$work/fresh$i" AIC_CACHE_REMOTE_URL="$url" timed "$aic" inspect "$intent" --root "$repo" --json
  python3 - "$work/out" >>"$work/hits" <<'EOF'
import json, sys
cache = json.load(open(sys.argv[1]))["cache"]
remote = cache["remote"]
computed = cache["scan"]["computed"] + cache["imports"]["computed"] + cache["facts"]["computed"]
asked = remote["hits"] + remote["misses"] + remote["rejected"]
print(f'remote hits {remote["hits"]}, misses {remote["misses"]}, rejected {remote["rejected"]}, computed {computed}, '
      f'hit rate {100 * remote["hits"] / max(1, remote["hits"] + computed):.1f}% of rows needed, {remote["bytesRead"] / 1e6:.1f} MB read')
EOF
done | tee "$work/fresh"
echo "median wall $(cut -d' ' -f1 "$work/fresh" | median) s, cpu $(cut -d' ' -f2 "$work/fresh" | median) s"
cat "$work/hits"

echo "== local-only cold compile (empty AIC_HOME, no remote), for reference"
mkdir -p "$work/cold"
AIC_HOME="$work/cold" timed "$aic" inspect "$intent" --root "$repo" --json

echo "== one unsharded precompute --push (prefix one) against 4 shards in parallel (prefix four)"
printf '{"cache": {"remote": {"prefix": "one"}}}' >"$work/one.json"
printf '{"cache": {"remote": {"prefix": "four"}}}' >"$work/four.json"
mkdir -p "$work/one"
AIC_HOME="$work/one" AIC_CACHE_REMOTE_URL="$url" timed "$aic" precompute --root "$repo" --config "$work/one.json" --push
shard_pids=()
for shard in 1 2 3 4; do
  mkdir -p "$work/shard$shard"
  ( AIC_HOME="$work/shard$shard" AIC_CACHE_REMOTE_URL="$url" \
      /usr/bin/time -f "%e %U %S" -o "$work/time$shard" \
      "$aic" precompute --root "$repo" --config "$work/four.json" --push --shard "$shard/4" >"$work/out$shard" 2>&1
    awk -v s="$shard" '{ printf "shard %s/4: wall %.3f s, cpu %.3f s\n", s, $1, $2 + $3 }' "$work/time$shard" ) &
  shard_pids+=($!)
done
wait "${shard_pids[@]}"
for shard in 1 2 3 4; do head -1 "$work/out$shard"; done
redis-cli -p "$port" --scan --pattern 'one/*' | sed 's|^one/||' | sort >"$work/keys-one"
redis-cli -p "$port" --scan --pattern 'four/*' | sed 's|^four/||' | sort >"$work/keys-four"
# The git history differs by design: the unsharded run pushes one row, the
# shards their four parts and the parts' count (6 keys in all).
echo "keys: unsharded $(wc -l <"$work/keys-one"), 4 shards $(wc -l <"$work/keys-four"), differing $(comm -3 "$work/keys-one" "$work/keys-four" | wc -l) (6 expected: the history's whole row against 4 parts and their count)"

echo "== unreachable store: closed port, then a server that accepts and never answers"
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
held = []
while True:
    held.append(s.accept())
' >"$work/silent_port" &
silent_pid=$!
sleep 0.5
silent=$(head -1 "$work/silent_port")
for store in "local-only" "redis://127.0.0.1:$closed/0" "redis://127.0.0.1:$silent/0" "webdav+http://127.0.0.1:$silent/c"; do
  for i in $(seq "$runs"); do
    rm -rf "$work/u"; mkdir -p "$work/u"
    if [ "$store" = local-only ]; then
      AIC_HOME="$work/u" timed "$aic" compile "$intent" --root "$repo"
    else
      AIC_HOME="$work/u" AIC_CACHE_REMOTE_URL="$store" timed "$aic" compile "$intent" --root "$repo"
    fi
    cp "$work/out" "$work/prompt-$i"
  done >"$work/times"
  warnings=$(grep -c "is unavailable" "$work/err" || true)
  echo "$store: median wall $(cut -d' ' -f1 "$work/times" | median) s, cpu $(cut -d' ' -f2 "$work/times" | median) s, warnings $warnings"
  [ "$store" = local-only ] && cp "$work/prompt-1" "$work/prompt-local"
  cmp -s "$work/prompt-1" "$work/prompt-local" && echo "  prompt identical to local-only" || echo "  PROMPT DIFFERS"
done
