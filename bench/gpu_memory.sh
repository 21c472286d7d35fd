#!/usr/bin/env bash
# The GPU-memory comparison of docs/GPU_MEMORY.md: `tessera frag` on the embedded GPU-memory
# scenarios (mem-v100, mem-v100m16, mem-openb) with tessera, fgd, mem-bestfit, hami-binpack,
# hami-spread and bestfit, seeds 42-51, and one table per scenario at 100 % arrival (GPU
# request arrived, % of GPU capacity): usable free GPU memory (% of GPU memory), unallocated
# GPU compute (% of capacity), pods refused and the GPUs stranded in one dimension (free
# compute that no class's memory fits beside, and the reverse), mean ± s.d. over the seeds;
# then, seed by
# seed, on how many seeds the first policy is below the second in each.
#
# Usage: bench/gpu_memory.sh [BUILD_DIR]            (default: build)
# Environment: SCENARIOS ("mem-v100 mem-v100m16 mem-openb"; names or YAML files, e.g.
# bench/gpu_memory/*.yaml), POLICIES (the six above,
# comma-separated), SEEDS (42-51), LEVEL (100), THREADS (nproc), OUT (/tmp/tessera-gpu-memory:
# each scenario's curve.csv and report.html).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
scenarios=${SCENARIOS:-mem-v100 mem-v100m16 mem-openb}
policies=${POLICIES:-tessera,fgd,mem-bestfit,hami-binpack,hami-spread,bestfit}
seeds=${SEEDS:-42-51}
level=${LEVEL:-100}
threads=${THREADS:-$(nproc)}
out=${OUT:-/tmp/tessera-gpu-memory}
[ -x "$build/tessera" ] || { echo "gpu_memory: $build/tessera not built" >&2; exit 1; }
mkdir -p "$out"
for s in $scenarios; do
  dir="$out/$(basename "$s" .yaml)"
  "$build/tessera" frag --scenario "$s" --policy "$policies" --seeds "$seeds" \
    --threads "$threads" -q --out "$dir" >/dev/null
  echo "$s, seeds $seeds, at $level % arrival (mean ± s.d.):"
  echo
  echo "| policy | unallocated GPU memory % | unallocated GPU compute % | pods failed | GPUs with compute, no memory | GPUs with memory, no compute |"
  echo "|---|---|---|---|---|---|"
  # curve.csv: policy,seed,arrival_pct,arrived_pct,allocated_milli,unallocated_pct,frag_milli,
  # frag_ratio,unallocated_mem_mib,unallocated_mem_pct,failed,gpus_compute_no_memory,
  # gpus_memory_no_compute
  awk -F, -v level="$level" -v order="$policies" '
    NR == 1 { if ($10 != "unallocated_mem_pct") { print "no GPU memory columns" > "/dev/stderr"; exit 1 } next }
    $3 + 0 == level + 0 {
      p = $1; n[p]++
      m[p] += $10; m2[p] += $10 * $10
      c[p] += $6; c2[p] += $6 * $6
      f[p] += $11; f2[p] += $11 * $11
      a[p] += $12; a2[p] += $12 * $12
      b[p] += $13; b2[p] += $13 * $13
    }
    function sd(s, s2, k) { return k > 1 ? sqrt((s2 - s * s / k) / (k - 1) > 0 ? (s2 - s * s / k) / (k - 1) : 0) : 0 }
    END {
      k = split(order, names, ",")
      for (i = 1; i <= k; i++) {
        p = names[i]
        if (!(p in n)) continue
        printf "| %s | %.2f ± %.2f | %.2f ± %.2f | %.1f ± %.1f | %.1f ± %.1f | %.1f ± %.1f |\n", p,
          m[p] / n[p], sd(m[p], m2[p], n[p]), c[p] / n[p], sd(c[p], c2[p], n[p]),
          f[p] / n[p], sd(f[p], f2[p], n[p]), a[p] / n[p], sd(a[p], a2[p], n[p]),
          b[p] / n[p], sd(b[p], b2[p], n[p])
      }
    }' "$dir/curve.csv"
  # Paired by seed: on how many seeds the first policy is below the second.
  awk -F, -v level="$level" -v order="$policies" '
    BEGIN { split(order, names, ","); a = names[1]; b = names[2] }
    NR > 1 && $3 + 0 == level + 0 && ($1 == a || $1 == b) {
      m[$1, $2] = $10; c[$1, $2] = $6; f[$1, $2] = $11; seeds[$2] = 1
    }
    END {
      for (k in seeds) {
        n++; lm += m[a, k] < m[b, k]; lc += c[a, k] < c[b, k]; lf += f[a, k] < f[b, k]
      }
      if (n > 0) printf "\n%s below %s, seed by seed: memory %d/%d, compute %d/%d, pods failed %d/%d\n", a, b, lm, n, lc, n, lf, n
    }' "$dir/curve.csv"
  echo
done
