#!/bin/sh
# Times `aic hook claude UserPromptSubmit` end to end (process start to exit)
# on a repository, with a new prompt each run (no prompt-cache hit): wall
# seconds, user+system CPU seconds, peak RSS, and the bytes injected.
# usage: perf/hook_bench.sh REPO N
#   AIC_HOME defaults to /tmp/aic-perf-home; AIC picks the binary (default
#   target/release/aic). Run once before timing to warm the per-file cache.
repo=$1; n=$2
export AIC_HOME=${AIC_HOME:-/tmp/aic-perf-home}
aic=${AIC:-$(dirname "$0")/../target/release/aic}
for i in $(seq 1 $n); do
  payload=$(printf '{"session_id":"bench-s","transcript_path":"/t/bench-c.jsonl","cwd":"%s","hook_event_name":"UserPromptSubmit","prompt":"fix the permission check in the fetch op v%s"}' "$repo" "$i$$")
  /usr/bin/time -f '%e s wall %U+%S s CPU %M KB' sh -c "echo '$payload' | $aic hook claude UserPromptSubmit | wc -c" 2>&1 | tr '\n' ' '
  echo
done
