#!/usr/bin/env bash
# The main job on a shipped default: a ResNet-50 (batch 32, V100) data-parallel iteration on
# 256 GPUs of a 2-level fat-tree (100 Gb/s links), ring vs tree all-reduce, as a short table.
# Builds nothing: run .ci/setup first (the README's first command does).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-out/quickstart}
mkdir -p "$out"
workload=workloads/traces/resnet50_v100_b32.json
platform=platforms/files/fat_tree_256.json
ranks=256

field() { sed -n "s/^    \"$2\": \([^,]*\),\{0,1\}$/\1/p" "$1" | head -n 1; }

printf '%-10s %14s %12s %18s %12s\n' algorithm iteration_s compute_s exposed_comm_s efficiency
for algorithm in ring tree; do
  report="$out/resnet50_${ranks}_${algorithm}.json"
  build/sim/dtsim simulate --workload "$workload" --platform "$platform" --ranks "$ranks" \
    --algorithm "$algorithm" --report "$report" >/dev/null
  awk -v a="$algorithm" -v it="$(field "$report" iteration_time_sec)" \
      -v c="$(field "$report" compute_sec)" -v e="$(field "$report" exposed_comm_sec)" \
      -v s="$(field "$report" scaling_efficiency)" \
      'BEGIN { printf "%-10s %14.6f %12.6f %18.6f %11.1f%%\n", a, it, c, e, 100 * s }'
done
echo "(reports in $out/; ResNet-50 trace: $workload; platform: $platform)"
