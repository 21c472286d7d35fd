#!/usr/bin/env bash
# Regenerates the table of docs/REPRODUCTION.md: `tessera frag` on the default Alibaba trace,
# seeds 42-51, all policies; prints a Markdown table of unallocated GPU % (mean ± s.d.) at
# 80/90/95/100/110/130 % arrival next to the FGD paper's published values at 100 %.
# Usage: scripts/reproduction-table.sh [TESSERA_BINARY] [POD_LIST]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/tessera}
data=../shared/data/alibaba-gpu-v2023/csv
pods=${2:-$data/openb_pod_list_default.csv}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" frag --nodes "$data/openb_node_list_gpu_node.csv" --pods "$pods" --seeds 42-51 \
  --no-placements -q --out "$out" >/dev/null
awk -F, '
  BEGIN {
    pub["fgd"] = 4.77; pub["bestfit"] = 7.14; pub["packing"] = 8.22; pub["clustering"] = 8.35
    pub["dotprod"] = 9.38; pub["random"] = 13.70
    split("80 90 95 100 110 130", levels, " ")
  }
  NR > 1 {
    if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }
    s[$1, $3] += $6; ss[$1, $3] += $6 * $6; c[$1, $3]++
  }
  END {
    printf "| policy | published @100 | ours @100 | diff (pp) |"
    for (i = 1; i <= 6; i++) if (levels[i] != 100) printf " @%s |", levels[i]
    printf "\n|---|---|---|---|"
    for (i = 1; i <= 6; i++) if (levels[i] != 100) printf "---|"
    printf "\n"
    for (k = 1; k <= n; k++) {
      p = order[k]
      for (i = 1; i <= 6; i++) {
        l = levels[i]; m = s[p, l] / c[p, l]
        v = c[p, l] > 1 ? (ss[p, l] - c[p, l] * m * m) / (c[p, l] - 1) : 0
        mean[l] = m; sd[l] = sqrt(v > 0 ? v : 0)
      }
      printf "| %s | %s | %.2f ± %.2f | %s |", p, (p in pub) ? sprintf("%.2f", pub[p]) : "–",
        mean[100], sd[100], (p in pub) ? sprintf("%+.2f", mean[100] - pub[p]) : "–"
      for (i = 1; i <= 6; i++) if (levels[i] != 100) printf " %.2f ± %.2f |", mean[levels[i]], sd[levels[i]]
      printf "\n"
    }
    printf "| ideal | 0 | 0 | | 20.00 | 10.00 | 5.00 | 0 | 0 |\n"
  }' "$out/curve.csv"
