#!/usr/bin/env bash
# What does leaf-uplink oversubscription (taper) cost a data-parallel job? ResNet-50 (V100 trace)
# and BERT-large (A100 trace) on 64 GPUs of a 2-level fat-tree (8-ary 2-tree, 100 Gb/s links)
# whose leaf switches keep 8, 4 or 2 uplinks (1:1, 2:1, 4:1), ranks placed linearly (a ring
# leaves each leaf switch once) or randomly (most ring edges cross the spine level), ring and
# tree all-reduce, NCCL's 8.4 us per-collective latency. Writes results/results.csv (one line
# per point, with the busiest link of each level from --link-report) and results/*.png; each
# point's report and link report go to out/oversubscription/. Builds nothing: run .ci/setup first.
# Usage: experiments/oversubscription/run.sh [ALGORITHM...]     (default: ring tree)
# About 3 minutes of CPU on one core (the tree points are replayed chunk by chunk).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
dtsim=build/sim/dtsim
[ -x "$dtsim" ] || { echo "run.sh: $dtsim not built: run .ci/setup first" >&2; exit 2; }
algorithms=("$@")
[ $# -gt 0 ] || algorithms=(ring tree)
raw=${OUT:-out/oversubscription}
results=$here/results
mkdir -p "$raw" "$results"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
csv=$results/results.csv
echo "workload,taper,placement,algorithm,iteration_time_sec,compute_sec,exposed_comm_sec,scaling_efficiency,limiter,limiter_level,host_links_max_utilization,uplinks_max_utilization,uplinks_max_bytes,busiest_level,git_commit" >"$csv"

# One CSV line from a point's report and link report.
row() {
  /usr/bin/python3 - "$@" <<'EOF'
import csv, json, sys
report, links, prefix, commit = sys.argv[1:5]
r = json.load(open(report))["result"]
best = {}  # level -> (utilization, bytes) of its busiest link direction
for line in csv.DictReader(open(links)):
    u, b = float(line["utilization"]), int(line["bytes"])
    if line["level"] not in best or u > best[line["level"]][0]:
        best[line["level"]] = (u, b)
host = best.get("hosts - level 1", (0.0, 0))
up = best.get("level 1 - level 2", (0.0, 0))
# The busiest level; within 0.1 % of each other the two levels are equally busy.
if abs(host[0] - up[0]) <= 1e-3 * max(host[0], up[0]):
    busiest = "both equal"
else:
    busiest = "hosts - level 1" if host[0] > up[0] else "level 1 - level 2"
lim = r["limiter"]
print(",".join([prefix, f'{r["iteration_time_sec"]:.6f}', f'{r["compute_sec"]:.6f}',
                f'{r["exposed_comm_sec"]:.6f}', f'{r["scaling_efficiency"]:.4f}', lim["kind"],
                lim.get("level", ""), f"{host[0]:.4f}", f"{up[0]:.4f}", str(up[1]), busiest,
                commit]))
EOF
}

for workload in resnet50_v100_b32 bert_large_a100_seq128_b128; do
  label=${workload%_v100_b32}
  label=${label%_a100_seq128_b128}
  for taper in 1 2 4; do
    platform=experiments/oversubscription/config/fat_tree_64_taper$taper.json
    for placement in linear random; do
      for algorithm in "${algorithms[@]}"; do
        name=${workload}_taper${taper}_${placement}_${algorithm}
        "$dtsim" simulate --workload "workloads/traces/$workload.json" --platform "$platform" \
          --ranks 64 --placement "$placement" --algorithm "$algorithm" \
          --collective-latency 8.4us --report "$raw/$name.json" \
          --link-report "$raw/$name.links.csv" >/dev/null
        row "$raw/$name.json" "$raw/$name.links.csv" \
          "$label,$taper:1,$placement,$algorithm" "$commit" >>"$csv"
        tail -n 1 "$csv"
      done
    done
  done
done
/usr/bin/python3 "$here/plot.py" "$csv" "$results"
echo "wrote $csv and $results/*.png"
