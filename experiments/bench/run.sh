#!/usr/bin/env bash
# How fast is dtsim at scale? Wall time and peak memory (GNU time) of
#  - one 1 GiB ring all-reduce (`dtsim collective`) on 1024 and 4096 ranks, and
#  - a full data-parallel iteration (`dtsim simulate`, 3 iterations, all buckets overlapping the
#    backward pass) of ResNet-50 and BERT-large from 64 to 65,536 ranks,
# on non-blocking 3-level fat-trees (experiments/bench/platforms/), with the path that ran:
# collapsed (ring as one transfer per edge, ranks folded onto one compute stream, repeated
# all-reduces memoized), fast (the same with the tree's pipeline collapsed too) or step-level
# (every ring step / tree chunk of every rank), and the
# predicted iteration time. Medians over REPEATS runs (default 3). Builds nothing: run .ci/setup.
# Usage: experiments/bench/run.sh [MAX_RANKS]      (default 65536; e.g. 4096 for a quick look)
# Output: out/bench/results.csv (every run), out/bench/table.md (medians), out/bench/wall_vs_ranks.png
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-out/bench}
repeats=${REPEATS:-3}
max_ranks=${1:-65536}
dtsim=${DTSIM:-build/sim/dtsim}  # DTSIM=path: another build (e.g. a copy, while rebuilding)
mkdir -p "$out"
csv="$out/results.csv"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "kind,workload,ranks,topology,algorithm,path,repeat,wall_sec,cpu_sec,peak_rss_mib,predicted_sec,tasks_replayed,all_reduces_memoized,git_commit" >"$csv"

platform() { echo "experiments/bench/platforms/fat_tree3_$1.json"; }

# One timed run: KIND WORKLOAD RANKS ALGORITHM REPLAY REPEAT.
run_one() {
  local kind=$1 workload=$2 ranks=$3 algorithm=$4 replay=$5 repeat=$6
  local report="$out/report.json"
  rm -f "$report"
  if [ "$kind" = collective ]; then
    /usr/bin/time -f "%e %U %S %M" -o "$out/time.txt" "$dtsim" collective --platform \
      "$(platform "$ranks")" --ranks "$ranks" --op all-reduce --bytes 1GiB --algorithm "$algorithm" \
      --replay "$replay" --report "$report" >/dev/null
  else
    /usr/bin/time -f "%e %U %S %M" -o "$out/time.txt" "$dtsim" simulate --workload \
      "workloads/traces/$workload.json" --platform "$(platform "$ranks")" --ranks "$ranks" \
      --algorithm "$algorithm" --replay "$replay" --report "$report" >/dev/null
  fi
  read -r wall user sys rss_kib <"$out/time.txt"
  local path=step-level
  [ "$replay" = collapsed ] && path=collapsed
  [ "$replay" = fast ] && path=fast
  /usr/bin/python3 - "$report" "$kind,$workload,$ranks,fat-tree-3,$algorithm,$path,$repeat,$wall" \
    "$user" "$sys" "$rss_kib" "$commit" >>"$csv" <<'EOF'
import json, sys
report, head, user, sys_, rss, commit = sys.argv[1:]
r = json.load(open(report))
predicted = r["time_sec"] if r["verb"] == "collective" else r["result"]["iteration_time_sec"]
tasks = r.get("tasks_replayed", r.get("transfers", ""))
print(f"{head},{float(user) + float(sys_):.2f},{int(rss) // 1024},{predicted:.9f},{tasks},"
      f"{r.get('all_reduces_memoized', '')},{commit}")
EOF
  tail -n 1 "$csv"
}

# KIND WORKLOAD RANKS ALGORITHM REPLAY, REPEATS times.
bench() {
  [ "$3" -le "$max_ranks" ] || return 0
  for ((i = 1; i <= repeats; ++i)); do run_one "$@" "$i"; done
}

bench collective ring_1GiB 1024 ring collapsed
bench collective ring_1GiB 4096 ring collapsed
for workload in resnet50_v100_b32 bert_large_a100_seq128_b128; do
  for ranks in 64 256 1024 4096 16384 65536; do
    bench simulate "$workload" "$ranks" ring collapsed
  done
  # The tree with its pipeline collapsed too (--replay fast, an approximation: tree.h).
  for ranks in 64 256 1024 4096 16384 65536; do
    bench simulate "$workload" "$ranks" tree fast
  done
  # The same predictions by the step-level replay, where it runs in reasonable time.
  bench simulate "$workload" 64 ring step
done
bench simulate resnet50_v100_b32 64 tree step
bench simulate resnet50_v100_b32 256 ring step
bench simulate resnet50_v100_b32 256 tree step

/usr/bin/python3 experiments/bench/plot.py "$csv" "$out"
