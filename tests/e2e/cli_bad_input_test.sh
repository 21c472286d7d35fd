#!/usr/bin/env bash
# `tessera frag` on bad input: a precise message naming file:line and field, exit code 2,
# no output files; pods that fit no node are counted in the summary.
set -euo pipefail
: "${TESSERA:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

nodes="$tmp/nodes.csv"
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,T4\nn1,32000,131072,1,V100M32\n' >"$nodes"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\np1,2000,2048,1,1000\n' >"$tmp/ok.csv"

expect_error() {  # expect_error NAME PATTERN ARGS...
  local name=$1 pattern=$2
  shift 2
  set +e
  "$TESSERA" frag -q --seeds 1 --out "$tmp/out-$name" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  set -e
  if [ "$rc" -ne 2 ]; then echo "FAIL $name: exit $rc, want 2"; fails=$((fails + 1)); return; fi
  if ! grep -qF -- "$pattern" "$tmp/$name.err"; then
    echo "FAIL $name: stderr lacks '$pattern':"; cat "$tmp/$name.err"; fails=$((fails + 1)); return
  fi
  if [ -e "$tmp/out-$name/report.html" ]; then echo "FAIL $name: wrote a report"; fails=$((fails + 1)); fi
  echo "ok   $name: $(head -1 "$tmp/$name.err")"
}

printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\np1,abc,2048,1,1000\n' >"$tmp/malformed.csv"
expect_error malformed-row "malformed.csv:3: field 'cpu_milli'" --nodes "$nodes" --pods "$tmp/malformed.csv"

printf 'name,cpu_milli,num_gpu,gpu_milli\np0,1000,1,500\n' >"$tmp/missing.csv"
expect_error missing-column "missing.csv:1: field 'memory_mib'" --nodes "$nodes" --pods "$tmp/missing.csv"

printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,-1000,1024,1,500\n' >"$tmp/negative.csv"
expect_error negative "negative.csv:2: field 'cpu_milli'" --nodes "$nodes" --pods "$tmp/negative.csv"

printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,4096,T4\n' >"$tmp/absurd.csv"
expect_error absurd-gpus "absurd.csv:2: field 'gpu'" --nodes "$tmp/absurd.csv" --pods "$tmp/ok.csv"

printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,1500\n' >"$tmp/milli.csv"
expect_error absurd-milli "milli.csv:2: field 'gpu_milli'" --nodes "$nodes" --pods "$tmp/milli.csv"

printf 'name: x\npods: 10\nnodes:\n  - name: a\n    gpus: 2\n    model: T4\n    cpu_milli: -5\n    memory_mib: 1024\n    count: 1\nclasses:\n  - name: c\n    cpu_milli: 1000\n    share: 1\n' >"$tmp/bad.yaml"
expect_error yaml-negative "bad.yaml:7: field 'nodes[0].cpu_milli'" --scenario "$tmp/bad.yaml"

printf 'name: x\npods: 10\n  nodes: [\n' >"$tmp/broken.yaml"
expect_error yaml-syntax "broken.yaml:" --scenario "$tmp/broken.yaml"

# GPU topology: the node-list column gpu_topology, the pod-list column topology, the scenario's
# topology blocks.
printf 'sn,cpu_milli,memory_mib,gpu,model,gpu_topology\nn0,64000,262144,4,T4,nvlink=0-1/2-3\nn1,64000,262144,4,T4,nvlink=0-1/1-3\n' >"$tmp/topo-nodes.csv"
expect_error topology-node-column "topo-nodes.csv:3: field 'gpu_topology': nvlink[1][0]: GPU 1 is already in nvlink[0]" --nodes "$tmp/topo-nodes.csv" --pods "$tmp/ok.csv"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,topology\np0,1000,1024,2,1000,required:rack\n' >"$tmp/topo-pods.csv"
expect_error topology-pod-column "topo-pods.csv:2: field 'topology': \"required:rack\": unknown scope" --nodes "$nodes" --pods "$tmp/topo-pods.csv"
printf 'name: x\npods: 10\nnodes:\n  - name: a\n    gpus: 4\n    model: T4\n    cpu_milli: 64000\n    memory_mib: 1024\n    count: 1\n    topology:\n      nvlink: [[0, 1], [2, 5]]\nclasses:\n  - name: c\n    cpu_milli: 1000\n    gpu_count: 2\n    share: 1\n    topology: required\n' >"$tmp/topo.yaml"
expect_error topology-yaml "topo.yaml:11: field 'nodes[0].topology.nvlink[1][1]': GPU 5 is out of range 0..3" --scenario "$tmp/topo.yaml"
sed -i 's/\[2, 5\]/[2, 3]/; s/topology: required/topology: always/' "$tmp/topo.yaml"
expect_error topology-yaml-class "topo.yaml:17: field 'classes[0].topology': \"always\" is not required|preferred" --scenario "$tmp/topo.yaml"

expect_error missing-file "nope.csv: cannot open" --nodes "$nodes" --pods "$tmp/nope.csv"
expect_error unknown-policy "unknown policy 'fdg'" --policy fdg
expect_error bad-seeds "--seeds: bad part '9-1'" --seeds 9-1
expect_error pods-without-nodes "--nodes and --pods go together" --pods "$tmp/ok.csv"

# Pods that no node could ever host: counted and reported, the run still succeeds.
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np0,1000,1024,1,500,\np1,1000,1024,8,1000,\np2,1000,1024,1,1000,A100\np3,999000,1024,0,0,\n' >"$tmp/never.csv"
"$TESSERA" frag -q --seeds 1 --nodes "$nodes" --pods "$tmp/never.csv" --out "$tmp/never" >"$tmp/never.out"
if grep -q "^3 pod(s) fit no node of the empty cluster" "$tmp/never.out"; then
  echo "ok   never-fit: $(grep 'fit no node' "$tmp/never.out")"
else
  echo "FAIL never-fit: summary lacks the count:"; cat "$tmp/never.out"; fails=$((fails + 1))
fi
grep -q "3 of which never fit" "$tmp/never/report.html" || grep -q "never fit" "$tmp/never/report.html" ||
  { echo "FAIL never-fit: report lacks the count"; fails=$((fails + 1)); }

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
