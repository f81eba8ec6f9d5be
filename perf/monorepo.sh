#!/usr/bin/env bash
# Assembles a realistic monorepo for scale measurements (issue 38): several
# real public repositories side by side in one git tree, each at its newest
# commit, committed once with a fixed date so every run measures the same
# bytes.
#
#   perf/monorepo.sh OUT [owner/name ...]
#
# Default repositories (six languages, ~70,000 files): babel/babel,
# denoland/deno, astral-sh/ruff, spring-projects/spring-framework,
# vitejs/vite, pytest-dev/pytest. Each is taken from a local bare mirror when
# MIRROR is set and holds `$MIRROR/owner+name/repo` (as the tool library's
# `fetch` leaves them), else shallow-cloned from GitHub. The tree goes to
# OUT/<name>/ (OUT must not exist); nothing of the sources' own .git is kept.
#
# Then, for example:
#   perf/daemon_bench.py --aic target/release/aic --repo OUT --intents intents.txt
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: perf/monorepo.sh OUT [owner/name ...]

Puts real repositories side by side in one new git tree OUT (one commit), for
scale measurements. Default: babel/babel denoland/deno astral-sh/ruff
spring-projects/spring-framework vitejs/vite pytest-dev/pytest (~70,000 files).
Each comes from $MIRROR/owner+name/repo (a bare mirror) when MIRROR is set and
it exists, else from a shallow clone of github.com/owner/name.
USAGE
}
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  usage
  exit 0
fi
if [[ $# -lt 1 || "$1" == -* ]]; then
  usage >&2
  exit 2
fi
out=$1
shift
repos=("$@")
if [[ ${#repos[@]} -eq 0 ]]; then
  repos=(babel/babel denoland/deno astral-sh/ruff spring-projects/spring-framework vitejs/vite pytest-dev/pytest)
fi
if [[ -e "$out" ]]; then
  echo "perf/monorepo.sh: $out exists; give a new directory" >&2
  exit 2
fi
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

for repo in "${repos[@]}"; do
  name=${repo#*/}
  mirror=${MIRROR:-}/${repo/\//+}/repo
  mkdir -p "$out/$name"
  if [[ -n "${MIRROR:-}" && -d "$mirror" ]]; then
    commit=$(git --git-dir="$mirror" rev-parse HEAD)
    echo "$repo: $commit (mirror $mirror)" >&2
    # A mirror may lack its largest blobs: those files are left out (and
    # counted) instead of failing the archive.
    python3 - "$mirror" "$out/$name" <<'PY'
import os, subprocess, sys
mirror, into = sys.argv[1], sys.argv[2]
tree = subprocess.run(["git", "--git-dir", mirror, "ls-tree", "-r", "-z", "HEAD"],
                      check=True, capture_output=True).stdout.split(b"\0")
entries = []
for line in tree:
    if not line:
        continue
    meta, path = line.split(b"\t", 1)
    mode, kind, oid = meta.split()
    if kind == b"blob":
        entries.append((mode, oid, path.decode("utf-8", "surrogateescape")))
batch = subprocess.Popen(["git", "--git-dir", mirror, "cat-file", "--batch"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
missing = 0
for mode, oid, path in entries:
    batch.stdin.write(oid + b"\n")
    batch.stdin.flush()
    header = batch.stdout.readline().split()
    if len(header) < 3:
        missing += 1
        continue
    data = batch.stdout.read(int(header[2]))
    batch.stdout.read(1)
    target = os.path.join(into, path)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if mode == b"120000":
        os.symlink(data.decode("utf-8", "surrogateescape"), target)
        continue
    with open(target, "wb") as f:
        f.write(data)
    if mode == b"100755":
        os.chmod(target, 0o755)
batch.stdin.close()
batch.wait()
if missing:
    print(f"  {missing} blobs missing from the mirror were left out", file=sys.stderr)
PY
  else
    git clone -q --depth 1 "https://github.com/$repo.git" "$scratch/$name"
    commit=$(git -C "$scratch/$name" rev-parse HEAD)
    echo "$repo: $commit (github)" >&2
    git -C "$scratch/$name" archive --format=tar HEAD | tar -x -C "$out/$name"
    rm -rf "${scratch:?}/$name"
  fi
  echo "$repo $commit" >> "$out/SOURCES"
done

cd "$out"
export GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z
git init -q -b main
git add -A
git -c user.name=aic-perf -c user.email=perf@aic.invalid commit -qm "monorepo of ${#repos[@]} repositories"
files=$(git ls-files | wc -l)
echo "wrote $out: $files files from ${#repos[@]} repositories (see $out/SOURCES)" >&2
