#!/usr/bin/env bash
# How does DDP's gradient bucket size trade per-collective latency against overlap? ResNet-50
# (V100 trace, batch 32) on DGX-1 V100 nodes (preset dgx1-v100: NVLink inside, 4 x 100 Gb/s
# InfiniBand between nodes) and on PCIe nodes with 25 GbE (preset pcie4-25gbe, 4 GPUs per node),
# bucket caps 1 ... 100 MiB and one bucket for everything (DDP still caps the first bucket at
# 1 MiB), ring and tree all-reduce, NCCL's 8.4 us per-collective latency. DGX-1 also at 1, 2 and
# 4 GPUs for the comparison with the PyTorch DDP benchmark (DDPB-25..29).
# comm_alpha_sec and comm_beta_sec: the all-reduces' latency and bandwidth terms summed over the
# iteration's buckets (the report's result.limiter; sim/report/limiter.h).
# Writes results/results.csv and results/*.png; reports go to out/buckets/. Builds nothing.
# Usage: experiments/buckets/run.sh          (about half a minute of CPU)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
dtsim=build/sim/dtsim
[ -x "$dtsim" ] || { echo "run.sh: $dtsim not built: run .ci/setup first" >&2; exit 2; }
raw=${OUT:-out/buckets}
results=$here/results
mkdir -p "$raw" "$results"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
csv=$results/results.csv
echo "platform,ranks,algorithm,bucket_mb,buckets,iteration_time_sec,compute_sec,exposed_comm_sec,scaling_efficiency,limiter,comm_alpha_sec,comm_beta_sec,last_bucket_bytes,git_commit" >"$csv"

# "all": a cap above the model's 102 MB of gradients, so that everything after the first bucket
# (capped at 1 MiB by DDP, which holds the 8.2 MB fc layer) is one bucket.
bucket_caps=(1 5 10 25 50 100 all)

row() {
  /usr/bin/python3 - "$@" <<'EOF'
import json, sys
report, prefix, commit = sys.argv[1:4]
r = json.load(open(report))["result"]
print(",".join([prefix, str(len(r["buckets"])), f'{r["iteration_time_sec"]:.6f}',
                f'{r["compute_sec"]:.6f}', f'{r["exposed_comm_sec"]:.6f}',
                f'{r["scaling_efficiency"]:.4f}', r["limiter"]["kind"],
                f'{r["limiter"]["collective_latency_sec"]:.6f}',
                f'{r["limiter"]["collective_bandwidth_sec"]:.6f}',
                str(r["buckets"][-1]["bytes"]), commit]))
EOF
}

run_platform() {  # NAME CONFIG RANKS...
  local name=$1 platform=$2
  shift 2
  for ranks in "$@"; do
    for algorithm in ring tree; do
      for cap in "${bucket_caps[@]}"; do
        local mb=$cap
        [ "$cap" != all ] || mb=1000
        local point=${name}_${ranks}_${algorithm}_${cap}
        "$dtsim" simulate --workload workloads/traces/resnet50_v100_b32.json \
          --platform "$platform" --ranks "$ranks" --algorithm "$algorithm" --bucket-mb "$mb" \
          --collective-latency 8.4us --report "$raw/$point.json" >/dev/null
        row "$raw/$point.json" "$name,$ranks,$algorithm,$cap" "$commit" >>"$csv"
        tail -n 1 "$csv"
      done
    done
  done
}

run_platform dgx1-v100 experiments/buckets/config/dgx1_v100_2nodes.json 1 2 4 8 16
run_platform pcie4-25gbe experiments/buckets/config/pcie4_25gbe_4nodes.json 8 16
/usr/bin/python3 "$here/plot.py" "$csv" "$results"
echo "wrote $csv and $results/*.png"
