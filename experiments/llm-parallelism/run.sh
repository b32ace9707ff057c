#!/usr/bin/env bash
# Which (tp, pp, dp) should GPT-3 13B use on 1024 A100s, and what does a 2:1 tapered fabric
# cost each? One simulated optimizer step (--iterations 1: a 1F1B step starts and ends with an
# empty pipeline) of every factorization tp in {1,2,4,8} x pp in {1,2,4,8,16} x dp = 1024/(tp*pp)
# with dp <= 256 (a replica needs one sequence of the batch at least),
# global batch 256 sequences of 2048 tokens, micro-batch 1, 1F1B, ZeRO 0, sequence parallelism
# where tp > 1, on 128 DGX-A100-like nodes (platforms/: NVSwitch inside, one 1.6 Tb/s NIC per
# node) under a non-blocking 2-level fat-tree and the same with leaves 2:1 oversubscribed.
# Usage: experiments/llm-parallelism/run.sh   (after .ci/setup; about 15 minutes on 2 cores)
# Output: out/llm-parallelism/results.csv and out/llm-parallelism/iteration_and_exposed.png
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-out/llm-parallelism}
dtsim=${DTSIM:-build/sim/dtsim}
mkdir -p "$out"
csv="$out/results.csv"
echo "fabric,tp,pp,dp,micro_batches,iteration_sec,tokens_per_sec_per_gpu,mfu,bubble_fraction,exposed_tp_sec,exposed_pp_sec,exposed_dp_sec,wall_sec" >"$csv"
for fabric in full taper2; do
  for tp in 1 2 4 8; do
    for pp in 1 2 4 8 16; do
      dp=$((1024 / (tp * pp)))
      if [ $((256 % dp)) -ne 0 ]; then  # dp replicas need a sequence each at least
        echo "$fabric,$tp,$pp,$dp,,,,,,,,,skipped: global batch 256 < dp" >>"$csv"
        continue
      fi
      sp=""
      [ "$tp" -gt 1 ] && sp=--sequence-parallel
      start=$(date +%s.%N)
      "$dtsim" simulate --model gpt3-13b --device a100 --precision bf16 \
        --platform "experiments/llm-parallelism/platforms/dgx_a100_128_$fabric.json" \
        --ranks 1024 --parallel "tp=$tp,pp=$pp,dp=$dp" --global-batch 256 --seq-len 2048 \
        --schedule 1f1b $sp --iterations 1 --report "$out/report.json" >/dev/null
      end=$(date +%s.%N)
      /usr/bin/python3 - "$out/report.json" "$fabric,$tp,$pp,$dp" "$start" "$end" >>"$csv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
res = r["result"]
e = res["exposed_sec"]
wall = float(sys.argv[4]) - float(sys.argv[3])
print(f"{sys.argv[2]},{r['parallel']['micro_batches']},{res['iteration_time_sec']:.6f},"
      f"{res['tokens_per_sec_per_gpu']:.1f},{res['mfu']:.4f},{res['bubble_fraction']:.4f},"
      f"{e.get('tp', 0):.6f},{e.get('pp', 0):.6f},{e.get('dp', 0):.6f},{wall:.1f}")
PY
      tail -n 1 "$csv"
    done
  done
done
/usr/bin/python3 experiments/llm-parallelism/plot.py "$csv" "$out/iteration_and_exposed.png"
