#!/usr/bin/env bash
# Data-parallel scaling of ResNet-50 (V100 trace) and BERT-large (A100 trace) from 8 to 16,384
# GPUs on a non-blocking fat-tree and on a 3-D torus (the same 100 Gb/s, 1 us links), ring vs
# tree vs auto (the better of the two per bucket) all-reduce (network latency only: no
# --collective-latency, see README). Platforms, one per
# scale N: config/fat_tree_N.json (one switch up to 32 hosts, beyond that leaves of 32 hosts
# each wired to 32 spines: non-blocking, as the presets' fabrics), ranks placed leaf by leaf, and
# config/torus_N.json (the most cubic 3-D torus of N hosts) with topology-aware (snake) placement,
# so that every ring edge is one hop.
#
# Algorithms: ring, tree, and auto (per bucket, the lower estimate of the two: --algorithm
# auto:ring,tree, as NCCL's tuner chooses per size). The tree and auto run with --replay fast (the
# tree's pipeline collapsed to one transfer per tree edge plus the fill: issue #8; the
# chunk-by-chunk replay took 62 s for ResNet-50 on 1024 ranks and grows 6-8x per 4x ranks), the
# ring with the default collapsed replay (exact). The replay column says which.
# Options:
#   --max-ranks ALG=N or WORKLOAD:ALG=N   points above N ranks are not run (recorded as not
#                       run); WORKLOAD:ALG takes precedence over ALG;
#   --limit SECONDS     a point running longer is stopped and recorded as not run, and so are
#                       the larger scales of its series (default 300);
#   --tree-replay MODE  for tree and auto: collapsed (chunk by chunk) or fast (default).
# Every point of the grid gets a line in results/results.csv, with its status.
# Usage: experiments/scaling/run.sh [--scales "8 64 ..."] [--algorithms "ring tree auto"]
#            [--workloads "resnet50 bert_large"] [--topologies "fat-tree torus"]
#            [--max-ranks tree=256 ...] [--limit 300] [--tree-replay fast]
# Default: the whole grid, scales 8 64 256 1024 4096 16384.
# Writes results/results.csv and results/*.png; reports go to out/scaling/. Builds nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
dtsim=${DTSIM:-build/sim/dtsim}  # DTSIM=path: another build (e.g. a copy, while rebuilding)
[ -x "$dtsim" ] || { echo "run.sh: $dtsim not built: run .ci/setup first" >&2; exit 2; }

scales="8 64 256 1024 4096 16384"
algorithms="ring tree auto"
workloads="resnet50 bert_large"
topologies="fat-tree torus"
declare -A max_ranks=()
limit=300
tree_replay=fast
while [ $# -gt 0 ]; do
  case $1 in
    --scales) scales=$2; shift 2 ;;
    --algorithms) algorithms=$2; shift 2 ;;
    --workloads) workloads=$2; shift 2 ;;
    --topologies) topologies=$2; shift 2 ;;
    --max-ranks) max_ranks[${2%%=*}]=${2#*=}; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --tree-replay) tree_replay=$2; shift 2 ;;
    *) echo "run.sh: unknown argument $1 (see the comment at the top)" >&2; exit 2 ;;
  esac
done

declare -A trace=([resnet50]=workloads/traces/resnet50_v100_b32.json
                  [bert_large]=workloads/traces/bert_large_a100_seq128_b128.json)
raw=${OUT:-out/scaling}
results=$here/results
mkdir -p "$raw" "$results"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
csv=$results/results.csv
echo "workload,topology,algorithm,replay,ranks,status,iteration_time_sec,compute_sec,exposed_comm_sec,scaling_efficiency,limiter,wall_sec,peak_rss_mib,git_commit" >"$csv"

row() {
  /usr/bin/python3 - "$@" <<'EOF'
import json, sys
report, prefix, wall, rss_kib, commit = sys.argv[1:6]
r = json.load(open(report))["result"]
print(",".join([prefix, "ok", f'{r["iteration_time_sec"]:.6f}', f'{r["compute_sec"]:.6f}',
                f'{r["exposed_comm_sec"]:.6f}', f'{r["scaling_efficiency"]:.4f}',
                r["limiter"]["kind"], wall, str(int(rss_kib) // 1024), commit]))
EOF
}

for workload in $workloads; do
  for topology in $topologies; do
    for algorithm in $algorithms; do
      skip=""
      for ranks in $scales; do
        # "auto": per bucket the lower estimate of ring and tree, as NCCL's tuner picks.
        replay=collapsed
        algorithm_arg=$algorithm
        [ "$algorithm" = ring ] || replay=$tree_replay
        [ "$algorithm" != auto ] || algorithm_arg=auto:ring,tree
        prefix="$workload,$topology,$algorithm,$replay,$ranks"
        key=$workload:$algorithm
        [ -n "${max_ranks[$key]:-}" ] || key=$algorithm
        cap=${max_ranks[$key]:-}
        if [ -n "$cap" ] && [ "$ranks" -gt "$cap" ]; then
          echo "$prefix,not run: over --max-ranks $key=$cap,,,,,,,,$commit" >>"$csv"
        elif [ -n "$skip" ]; then
          echo "$prefix,not run: $skip,,,,,,,,$commit" >>"$csv"
        else
          platform=experiments/scaling/config/${topology/-/_}_$ranks.json
          placement=linear
          [ "$topology" = fat-tree ] || placement=topology-aware
          point=${workload}_${topology}_${algorithm}_$ranks
          if /usr/bin/time -f "%e %M" -o "$raw/$point.time" timeout "$limit" "$dtsim" simulate \
              --workload "${trace[$workload]}" --platform "$platform" --ranks "$ranks" \
              --placement "$placement" --algorithm "$algorithm_arg" --replay "$replay" \
              --report "$raw/$point.json" >/dev/null 2>"$raw/$point.err"; then
            read -r wall rss <"$raw/$point.time"
            row "$raw/$point.json" "$prefix" "$wall" "$rss" "$commit" >>"$csv"
          else
            status=$?
            if [ "$status" -eq 124 ]; then
              echo "$prefix,not run: stopped after --limit $limit s,,,,,,,,$commit" >>"$csv"
              skip="$ranks ranks took over --limit $limit s"
            else
              echo "run.sh: $point failed (exit $status), see $raw/$point.err" >&2
              exit 1
            fi
          fi
        fi
        tail -n 1 "$csv"
      done
    done
  done
done
/usr/bin/python3 "$here/plot.py" "$csv" "$results"
echo "wrote $csv and $results/*.png"
