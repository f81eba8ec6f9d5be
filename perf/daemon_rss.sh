#!/bin/bash
# The resident memory of `aic daemon` on one project, once indexed and after
# N new intents (issue 38; perf/RESULTS.md, "Memory per file").
#
#   perf/daemon_rss.sh BIN HOME REPO [N] [INTENTS]
#
# Starts the daemon with AIC_HOME=HOME, compiles once (the client is handed
# the first answer while the daemon indexes), waits until `aic daemon status`
# lists the project, prints its RSS, compiles the first N lines of INTENTS
# (default /work/perf-work/synth-intents.txt; each with a fresh suffix, so
# every one is a new intent) through the daemon, prints RSS again at once
# and after 3 s without a request (the daemon hands back what the answers
# freed once it is quiet) with the peak (VmHWM) of the indexing and of the
# answers apart, and stops the daemon. An
# empty HOME measures a cold index, a used one a warm restart.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: perf/daemon_rss.sh BIN HOME REPO [N] [INTENTS]" >&2
  exit 2
fi
# Paths are taken as given from the current directory, before the script
# moves into REPO.
BIN=$(realpath "$1"); HOME_DIR=$(realpath -m "$2"); REPO=$3; N=${4:-18}
INTENTS=$(realpath "${5:-/work/perf-work/synth-intents.txt}")
export AIC_HOME=$HOME_DIR AIC_DAEMON=running
cd "$REPO"
# The daemon is stopped however the script ends.
trap '"$BIN" daemon stop > /dev/null 2>&1 || true' EXIT
"$BIN" daemon start > /dev/null 2>&1
start=$(date +%s.%N)
"$BIN" compile "warm up the session cache" > /dev/null 2>&1 || true
files=0
for _ in $(seq 1 1200); do
  files=$("$BIN" daemon status --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin)["daemon"]; print(d["projects"][0]["files"] if d["projects"] else 0)' 2>/dev/null || echo 0)
  [ "${files:-0}" -gt 0 ] && break
  sleep 1
done
ready=$(python3 -c "import time; print(round(time.time()-$start,1))")
rss() { "$BIN" daemon status --json | python3 -c 'import json,sys; d=json.load(sys.stdin)["daemon"]; print(round(d["rssBytes"]/2**20), "MiB", d["requests"], "requests, p50", d["p50Ms"], "ms")'; }
pid=$("$BIN" daemon status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["pid"])')
peak() { awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' "/proc/$pid/status"; }
echo "indexed after ${ready}s; files $files; RSS $(rss); peak so far $(peak)"
# The peak from here on is the answers' own (a write of 5 resets VmHWM).
echo 5 > "/proc/$pid/clear_refs" 2>/dev/null || echo "(peak not reset: /proc/$pid/clear_refs is not writable)"
head -"$N" "$INTENTS" | while read -r intent; do "$BIN" compile "$intent x$RANDOM" > /dev/null 2>&1 || true; done
echo "after $N intents: RSS $(rss)"
sleep 3
echo "3 s later: RSS $(rss); peak while answering $(peak)"
