#!/usr/bin/env bash
# local-ddp: predict real 2-process gloo DDP on this machine with dtsim (see README.md here).
#   experiments/local-ddp/run.sh            # profiles, 3 mixed runs per model, prediction
# Builds nothing: needs `.ci/setup` done (build/sim/dtsim) and /usr/bin/python3 with torch and
# torchvision (Debian python3-torch, python3-torchvision). Writes out/local-ddp/.
# Environment: REPEATS (3), RESNET_ITERS (15), MLP_ITERS (30), MAX_WAIT (600 s of waiting for a
# quiet machine, all phases together), BUSY_LIMIT (0.7 cores).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
here=experiments/local-ddp
OUT=out/local-ddp
PY=/usr/bin/python3
DTSIM=build/sim/dtsim
REPEATS="${REPEATS:-3}"
RESNET_ITERS="${RESNET_ITERS:-15}"
MLP_ITERS="${MLP_ITERS:-30}"
MAX_WAIT="${MAX_WAIT:-600}"
BUSY_LIMIT="${BUSY_LIMIT:-0.7}"

[[ -x "${DTSIM}" ]] || { echo "run.sh: ${DTSIM} missing: run .ci/setup first" >&2; exit 2; }
"${PY}" -c 'import torch, torchvision' 2>/dev/null ||
  { echo "run.sh: ${PY} lacks torch/torchvision (apt-get install python3-torch python3-torchvision)" >&2; exit 2; }

export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 GLOO_SOCKET_IFNAME=lo MASTER_ADDR=127.0.0.1
mkdir -p "${OUT}"
rm -f "${OUT}"/bench.jsonl "${OUT}"/gates.jsonl "${OUT}"/results.csv "${OUT}"/{trace,platform,report}_*.json
started=${SECONDS}
waited_total=0

# Busy cores of other jobs over 5 s, from /proc/stat (nothing of ours runs while it samples).
busy_cores() {
  local a b
  a=($(head -1 /proc/stat)); sleep 5; b=($(head -1 /proc/stat))
  awk -v u1="${a[1]}" -v n1="${a[2]}" -v s1="${a[3]}" -v i1="${a[4]}" -v w1="${a[5]}" \
      -v q1="${a[6]}" -v o1="${a[7]}" -v t1="${a[8]}" \
      -v u2="${b[1]}" -v n2="${b[2]}" -v s2="${b[3]}" -v i2="${b[4]}" -v w2="${b[5]}" \
      -v q2="${b[6]}" -v o2="${b[7]}" -v t2="${b[8]}" -v cpus="$(nproc)" 'BEGIN {
    busy = (u2-u1) + (n2-n1) + (s2-s1) + (q2-q1) + (o2-o1) + (t2-t1)
    total = busy + (i2-i1) + (w2-w1)
    printf "%.2f", (total > 0 ? cpus * busy / total : 0) }'
}

# Wait until other jobs leave the cores alone: the 1-minute load average also counts our own
# previous phase for a minute or two, so the gate is the 5-s busy-core sample; both recorded.
wait_quiet() {
  local phase=$1 waited=0 busy load
  while :; do
    busy=$(busy_cores)
    load=$(cut -d' ' -f1 /proc/loadavg)
    if awk -v b="${busy}" -v l="${BUSY_LIMIT}" 'BEGIN { exit !(b <= l) }'; then break; fi
    if (( waited_total >= MAX_WAIT )); then
      echo "run.sh: ${phase}: still ${busy} cores busy (load ${load}); wait budget spent, measuring anyway" >&2
      break
    fi
    echo "run.sh: ${phase}: ${busy} cores busy by other jobs (load ${load}); waiting 30 s" >&2
    sleep 30; waited=$((waited + 30)); waited_total=$((waited_total + 30))
  done
  printf '{"phase": "%s", "waited_sec": %d, "loadavg1": %s, "busy_cores": %s, "time": "%s"}\n' \
    "${phase}" "${waited}" "${load}" "${busy}" "$(date -u +%FT%TZ)" >> "${OUT}/gates.jsonl"
  echo "run.sh: ${phase}: start (others busy ${busy} cores, 1-min load ${load}, waited ${waited} s)" >&2
}

# 1. Single-process per-layer profiles (thread CPU clock: the shape of each phase).
wait_quiet profile_resnet18
profiler/dtsim-profile -q --model resnet18 --batch 8 --input-size 224 --warmup 2 --iters 5 \
  -o "${OUT}/profile_resnet18.json"
wait_quiet profile_wide_mlp
PYTHONPATH="${here}" profiler/dtsim-profile -q --model local_models:wide_mlp --name wide_mlp \
  --batch 64 --warmup 3 --iters 10 -o "${OUT}/profile_wide_mlp.json"

# 2. Interleaved ground truth: per cycle one concurrent iteration, one DDP iteration, one
#    all-reduce of each size (small sizes + DDP's buckets + all gradients).
for r in $(seq 1 "${REPEATS}"); do
  wait_quiet "resnet18_r${r}"
  "${PY}" "${here}/ddp_bench.py" --mode mixed --model resnet18 --batch 8 --input-size 224 \
    --warmup 3 --iters "${RESNET_ITERS}" --tag "resnet18_r${r}" --out "${OUT}/bench.jsonl"
  wait_quiet "wide_mlp_r${r}"
  "${PY}" "${here}/ddp_bench.py" --mode mixed --model wide_mlp --batch 64 \
    --warmup 3 --iters "${MLP_ITERS}" --tag "wide_mlp_r${r}" --out "${OUT}/bench.jsonl"
done

# 3. Fit, platforms, scaled traces, dtsim, closed forms, results.csv.
"${PY}" "${here}/predict.py" --bench "${OUT}/bench.jsonl" --dir "${OUT}" --dtsim "${DTSIM}"
info="run.sh: done in $((SECONDS - started)) s (waited ${waited_total} s for a quiet machine); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(date -u +%FT%TZ)"
echo "${info}" | tee "${OUT}/run_info.txt"
