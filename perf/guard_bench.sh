#!/bin/bash
# Issue 37: the guard's best throughput and CPU per MB of source with one guard_scan binary over
# trees unpacked under /work/scan (git archive of each repository's HEAD).
# usage: bench.sh BINARY [runs] -> best guard throughput (MB/s) per repo over the runs,
# and the guard's CPU per MB of all three (ms/MB, from the best runs)
bin=$1; runs=${2:-5}; out=""
for r in ${REPOS:-pallets+click vitejs+vite pytest-dev+pytest}; do
  best=0; mb=0
  for i in $(seq $runs); do
    line=$($bin /work/scan/$r | tail -1)
    t=$(echo "$line" | sed -E 's/.*\(([0-9.]+) MB\/s\).*/\1/')
    mb=$(echo "$line" | sed -E 's/.*, ([0-9.]+) MB;.*/\1/')
    best=$(python3 -c "print(max($best,$t))")
  done
  echo "$r $mb MB best $best MB/s"; out="$out $mb:$best"
done
python3 -c "
import sys
pairs=[tuple(map(float,p.split(':'))) for p in '$out'.split()]
mb=sum(p[0] for p in pairs); s=sum(p[0]/p[1] for p in pairs)
print(f'all {mb:.1f} MB in {s:.3f} s: {1000*s/mb:.1f} ms/MB')"
