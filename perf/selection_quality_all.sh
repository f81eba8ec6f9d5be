#!/usr/bin/env bash
# Selection quality on both task sets of ../shared/bench: the 22 issue reports
# (tasks-dev-issues.jsonl, five Python repositories) and the 45 commit tasks
# (tasks-dev.jsonl, click and vite), each appended as a section to perf/RESULTS.md.
# Superseded by `aic bench benches/dev-issues.toml` and `benches/dev-commits.toml`.
#
# Usage:
#   perf/selection_quality_all.sh --aic PATH --label "what changed" \
#       [--results perf/RESULTS.md] [--work /work/perf-work] [-- more selection_quality.py options]
#
# The repositories are the bare mirrors under $MIRRORS (default /work/.mirror), as
# OWNER+NAME/repo; the worktrees go under --work. Copy the aic binary first if it may be
# rebuilt while this runs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
bench=${BENCH:-$(dirname "$root")/shared/bench}
mirrors=${MIRRORS:-/work/.mirror}
aic="" label="" results=$root/perf/RESULTS.md work=/work/perf-work
extra=()

usage() {
  sed -n '2,12s/^# \{0,1\}//p' "$0" >&2
  exit "${1:-2}"
}

while [[ $# -gt 0 ]]; do
  case $1 in
    --aic) aic=${2:?--aic needs a path}; shift 2 ;;
    --label) label=${2?--label needs a text}; shift 2 ;;
    --results) results=${2:?--results needs a file}; shift 2 ;;
    --work) work=${2:?--work needs a directory}; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) usage 0 ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
[[ -n "$aic" && -n "$label" ]] || usage
[[ -x "$aic" ]] || { echo "not an executable: $aic" >&2; exit 2; }

run() { # TASKS-FILE OWNER/NAME...
  local tasks=$1 args=() name dir
  shift
  for name in "$@"; do
    dir=$mirrors/${name/\//+}/repo
    [[ -d "$dir" ]] || { echo "no mirror of $name at $dir" >&2; exit 1; }
    args+=(--repo "$name=$dir")
  done
  echo "== $tasks" >&2
  python3 "$here/selection_quality.py" --aic "$aic" --tasks "$bench/$tasks" --work "$work" \
    "${args[@]}" --label "$label" --results "$results" ${extra[@]+"${extra[@]}"}
}

run tasks-dev-issues.jsonl sqlfluff/sqlfluff pvlib/pvlib-python pylint-dev/astroid \
  pydicom/pydicom marshmallow-code/marshmallow
run tasks-dev.jsonl pallets/click vitejs/vite
