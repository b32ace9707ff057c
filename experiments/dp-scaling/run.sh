#!/usr/bin/env bash
# ResNet-50 (batch 32, V100 trace) data-parallel iteration at 8, 64, 256 and 1024 ranks on
# 2-level fat-trees with 100 Gb/s links (256 hosts up to 256 ranks, 1024 hosts beyond), ring vs
# tree all-reduce. Prints and writes a CSV: prediction plus the simulator's wall time and peak
# memory (GNU time). Builds nothing: run .ci/setup first.
# Usage: experiments/dp-scaling/run.sh [RANKS...]     (default: 8 64 256 1024)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-out/dp-scaling}
mkdir -p "$out"
ranks_list=("$@")
[ $# -gt 0 ] || ranks_list=(8 64 256 1024)
workload=workloads/traces/resnet50_v100_b32.json
csv="$out/results.csv"
echo "ranks,algorithm,iteration_time_sec,exposed_comm_sec,scaling_efficiency,wall_sec,peak_rss_mib,git_commit" >"$csv"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)

field() { sed -n "s/^    \"$2\": \([^,]*\),\{0,1\}$/\1/p" "$1" | head -n 1; }

for ranks in "${ranks_list[@]}"; do
  platform=platforms/files/fat_tree_256.json
  [ "$ranks" -le 256 ] || platform=platforms/files/fat_tree_1024.json
  for algorithm in ring tree; do
    report="$out/resnet50_${ranks}_${algorithm}.json"
    /usr/bin/time -f "%e %M" -o "$out/time.txt" build/sim/dtsim simulate --workload "$workload" \
      --platform "$platform" --ranks "$ranks" --algorithm "$algorithm" --report "$report" >/dev/null
    read -r wall rss_kib <"$out/time.txt"
    echo "$ranks,$algorithm,$(field "$report" iteration_time_sec),$(field "$report" exposed_comm_sec),$(field "$report" scaling_efficiency),$wall,$((rss_kib / 1024)),$commit" >>"$csv"
    tail -n 1 "$csv"
  done
done
echo "wrote $csv"
