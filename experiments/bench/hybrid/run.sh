#!/usr/bin/env bash
# How fast is a hybrid-parallel prediction? Wall time, CPU time and peak memory (GNU time) of one
# `dtsim simulate --model ...` iteration (--iterations 1: a 1F1B step starts and ends with an
# empty pipeline) of
#  - Llama-3 70B, TP 8 x PP 4 x DP 8 = 256 GPUs, 16 micro-batches, sequence 8192;
#  - GPT-3 175B, TP 8 x PP 16 x DP 8 = 1024 GPUs, 64 micro-batches, sequence 2048 (issue #15's
#    benchmark: target <= 10 s);
#  - the same with DP 128 = 16,384 GPUs (target <= 60 s and <= 8 GiB; only with MAX_RANKS >=
#    16384: about a minute per run),
# on DGX A100 nodes (platforms/PRESETS.md: NVSwitch inside, 8 x 200 Gb/s NICs, a non-blocking
# fat-tree), with the path that ran and the prediction. Medians over REPEATS runs (default 3).
# Usage: experiments/bench/hybrid/run.sh [MAX_RANKS]   (default 1024)
# Output: out/bench_hybrid/results.csv (every run) and out/bench_hybrid/table.md (medians).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${OUT:-out/bench_hybrid}
repeats=${REPEATS:-3}
max_ranks=${1:-1024}
dtsim=${DTSIM:-build/sim/dtsim}
mkdir -p "$out"
csv="$out/results.csv"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "model,ranks,parallel,micro_batches,repeat,wall_sec,cpu_sec,peak_rss_mib,iteration_sec,tokens_per_sec_per_gpu,tasks_replayed,ranks_folded,git_commit" >"$csv"

# One timed run: MODEL RANKS PARALLEL GLOBAL_BATCH SEQ_LEN PLATFORM REPEAT.
run_one() {
  local model=$1 ranks=$2 parallel=$3 global=$4 seq=$5 platform=$6 repeat=$7
  local report="$out/report.json"
  rm -f "$report"
  /usr/bin/time -f "%e %U %S %M" -o "$out/time.txt" "$dtsim" simulate --model "$model" \
    --device a100 --platform "experiments/bench/hybrid/platforms/$platform.json" \
    --ranks "$ranks" --parallel "$parallel" --global-batch "$global" --seq-len "$seq" \
    --iterations 1 --report "$report" >/dev/null
  read -r wall user sys rss_kib <"$out/time.txt"
  /usr/bin/python3 - "$report" "$model,$ranks,\"$parallel\"" "$repeat,$wall" "$user" "$sys" \
    "$rss_kib" "$commit" >>"$csv" <<'PY'
import json, sys
report, head, tail, user, sys_, rss, commit = sys.argv[1:]
r = json.load(open(report))
res = r["result"]
print(f"{head},{r['parallel']['micro_batches']},{tail},{float(user) + float(sys_):.2f},"
      f"{int(rss) // 1024},{res['iteration_time_sec']:.6f},{res['tokens_per_sec_per_gpu']:.1f},"
      f"{r['tasks_replayed']},{str(r['ranks_folded']).lower()},{commit}")
PY
  tail -n 1 "$csv"
}

bench() {
  [ "$2" -le "$max_ranks" ] || return 0
  for ((i = 1; i <= repeats; ++i)); do run_one "$@" "$i"; done
}

bench llama3-70b 256 tp=8,pp=4,dp=8 128 8192 dgx_a100_32
bench gpt3-175b 1024 tp=8,pp=16,dp=8 512 2048 dgx_a100_128
bench gpt3-175b 16384 tp=8,pp=16,dp=128 8192 2048 dgx_a100_2048

/usr/bin/python3 - "$csv" >"$out/table.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| model | GPUs | parallel | micro-batches | wall s | CPU s | peak MiB | tasks | iteration s |")
print("|---|---|---|---|---|---|---|---|---|")
keys = []
for r in rows:
    k = (r["model"], r["ranks"], r["parallel"])
    if k not in keys:
        keys.append(k)
for k in keys:
    g = [r for r in rows if (r["model"], r["ranks"], r["parallel"]) == k]
    med = lambda f: statistics.median(float(r[f]) for r in g)
    print(f"| {k[0]} | {k[1]} | {k[2]} | {g[0]['micro_batches']} | {med('wall_sec'):.1f} | "
          f"{med('cpu_sec'):.1f} | {med('peak_rss_mib'):.0f} | {g[0]['tasks_replayed']} | "
          f"{float(g[0]['iteration_sec']):.3f} |")
PY
cat "$out/table.md"
