#!/usr/bin/env bash
# The planner study (README.md): (1) a plan for Llama-3 70B on 512 A100s (64 DGX A100 nodes),
# global batch 512 x 8192 tokens, the best 4 simulated, and its memory-time front (plot.py);
# (2) the speed benchmark: a plan for a 70B model on 1024 GPUs, every configuration, with one
# and with two estimate threads (--simulate 0), and the whole plan with 4 simulations.
# (3) the published configurations of the validation set against the planner's best.
# Usage: experiments/planner/run.sh   (after .ci/setup; TIMEOUT=S caps each simulation, 300)
# Output: experiments/planner/results/ (front.*, bench.csv, published/)
set -euo pipefail
cd "$(dirname "$0")/../.."
dtsim=${DTSIM:-build/sim/dtsim}
out=experiments/planner/results
mkdir -p "$out"
git rev-parse --short HEAD >"$out/commit.txt"

"$dtsim" plan --model llama3-70b --device a100 --platform experiments/planner/platforms/dgx_a100_64.json \
  --gpus 512 --global-batch 512 --seq-len 8192 --simulate 4 --simulate-timeout "${TIMEOUT:-300}" --top 12 \
  --report "$out/front.json" | tee "$out/front.txt"
/usr/bin/python3 experiments/planner/plot.py "$out/front.csv" "$out/front.png"
# The same in Megatron-LM's space (no ZeRO, no CP), whose best simulate in seconds.
"$dtsim" plan --model llama3-70b --device a100 --platform experiments/planner/platforms/dgx_a100_64.json \
  --gpus 512 --global-batch 512 --seq-len 8192 --strategies tp,pp,dp,recompute,sp --simulate 4 \
  --simulate-timeout "${TIMEOUT:-300}" --top 8 --report "$out/megatron.json" | tee "$out/megatron.txt"

bench() {  # label, extra flags
  local start end
  start=$(date +%s.%N)
  "$dtsim" plan --model llama3-70b --device a100 \
    --platform experiments/planner/platforms/dgx_a100_128.json --gpus 1024 \
    --global-batch 1024 --seq-len 8192 --report "$out/bench_$1.json" "${@:2}" >"$out/bench_$1.txt"
  end=$(date +%s.%N)
  echo "$1,$(grep -m1 configurations "$out/bench_$1.txt" | awk '{print $1}'),$(echo "$end - $start" | bc)" >>"$out/bench.csv"
}
echo "run,configurations,wall_sec" >"$out/bench.csv"
for repeat in 1 2 3; do
  bench "threads1_r$repeat" --threads 1 --simulate 0
  bench "threads2_r$repeat" --threads 2 --simulate 0
done
bench full --simulate 4 --simulate-timeout "${TIMEOUT:-300}"
cmp "$out/bench_threads1_r1.json" "$out/bench_threads2_r1.json" && echo "threads 1 and 2: same report"
rm -f "$out"/bench_threads*_r[23].*
cat "$out/bench.csv"

# (3) the published configurations (experiments/validation/results/hybrid_results.csv).
/usr/bin/python3 experiments/planner/published.py "$dtsim" "$out/published"
