#!/usr/bin/env bash
# Two dtsim builds compared on the benchmark's cases: wall and CPU seconds, peak RSS (GNU time)
# and the predicted time, 3 runs of each, alternating old and new (the machine's load moves
# wall times by +-25 %). Builds nothing.
# Usage: OLD=/path/to/old/dtsim [NEW=build/sim/dtsim] experiments/bench/issue14/compare.sh
#        then: /usr/bin/python3 experiments/bench/issue14/summarize.py out/bench-issue14/results.csv
set -uo pipefail
cd "$(dirname "$0")/../../.."
: "${OLD:?set OLD to the dtsim binary to compare with}"
P=experiments/bench/platforms
out=${OUT:-out/bench-issue14}/results.csv; mkdir -p "$(dirname "$out")"
echo "case,binary,repeat,wall,cpu,rss_mib,predicted" > $out
run() {  # name label binary args...
  local name=$1 label=$2 bin=$3; shift 3
  /usr/bin/time -f "%e %U %S %M" -o "${out%/*}/t.txt" $bin "$@" --report "${out%/*}/r.json" > /dev/null 2>"${out%/*}/err.txt" || { echo "FAIL $name $bin"; cat "${out%/*}/err.txt"; }
  read -r wall u s rss < "${out%/*}/t.txt"
  pred=$(/usr/bin/python3 -c "import json;r=json.load(open('"${out%/*}/r.json"'));print(r.get('time_sec') or r['result']['iteration_time_sec'])")
  echo "$name,$label,$rep,$wall,$(echo "$u + $s" | bc),$((rss/1024)),$pred" >> $out
}
cases=(
 "coll1g_1024|collective --platform $P/fat_tree3_1024.json --ranks 1024 --op all-reduce --bytes 1GiB --algorithm ring"
 "coll1g_4096|collective --platform $P/fat_tree3_4096.json --ranks 4096 --op all-reduce --bytes 1GiB --algorithm ring"
 "r50_ring_1024|simulate --workload workloads/traces/resnet50_v100_b32.json --platform $P/fat_tree3_1024.json --ranks 1024 --algorithm ring"
 "r50_ring_4096|simulate --workload workloads/traces/resnet50_v100_b32.json --platform $P/fat_tree3_4096.json --ranks 4096 --algorithm ring"
 "r50_ring_16384|simulate --workload workloads/traces/resnet50_v100_b32.json --platform $P/fat_tree3_16384.json --ranks 16384 --algorithm ring"
 "bert_ring_4096|simulate --workload workloads/traces/bert_large_a100_seq128_b128.json --platform $P/fat_tree3_4096.json --ranks 4096 --algorithm ring"
 "bert_ring_16384|simulate --workload workloads/traces/bert_large_a100_seq128_b128.json --platform $P/fat_tree3_16384.json --ranks 16384 --algorithm ring"
 "r50_treefast_4096|simulate --workload workloads/traces/resnet50_v100_b32.json --platform $P/fat_tree3_4096.json --ranks 4096 --algorithm tree --replay fast"
 "bert_treefast_4096|simulate --workload workloads/traces/bert_large_a100_seq128_b128.json --platform $P/fat_tree3_4096.json --ranks 4096 --algorithm tree --replay fast"
 "r50_ringstep_256|simulate --workload workloads/traces/resnet50_v100_b32.json --platform $P/fat_tree3_256.json --ranks 256 --algorithm ring --replay step"
 "r50_treestep_256|simulate --workload workloads/traces/resnet50_v100_b32.json --platform $P/fat_tree3_256.json --ranks 256 --algorithm tree --replay step"
 "bert_ringstep_64|simulate --workload workloads/traces/bert_large_a100_seq128_b128.json --platform $P/fat_tree3_64.json --ranks 64 --algorithm ring --replay step"
)
for c in "${cases[@]}"; do
  name=${c%%|*}; args=${c#*|}
  for rep in 1 2 3; do
    run $name old "$OLD" $args
    run $name new "${NEW:-build/sim/dtsim}" $args
  done
done
