#!/usr/bin/env bash
# The import-kineto check a machine with a Kineto-enabled torch can make (issue #19): traces
# written by torch's own Kineto, imported, against the profiler's hooks timing the same steps.
#
#   bash profiler/gpu_kineto.sh                       # from the repo root, on the GPU machine
#   DTSIM_KINETO_DRY=1 bash profiler/gpu_kineto.sh    # here: the same runs, exported traces
#
# Runs (profiler/tests/kineto_run.py, 2 warm-up + 3 profiled steps each): mlp and tiny_cnn on
# one CPU rank, mlp with DDP over gloo on two CPU ranks, resnet50 batch 32 on the GPU. Writes
# $OUT/<run>_<rank>.json (the Kineto traces: commit the CPU ones as test data), the hooks'
# <run>_<rank>_layers.json, the imports <run>.trace.json and $OUT/log.txt, and prints per run the
# median and range of import/hooks per layer (layers with 5 % of the phase or more).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PYTHONPATH="${here}${PYTHONPATH:+:${PYTHONPATH}}" OPENBLAS_NUM_THREADS=1
OUT="${OUT:-out/gpu_kineto}"
mkdir -p "${OUT}"
native=--native
[[ "${DTSIM_KINETO_DRY:-0}" == 1 ]] && native=""
python="${DTSIM_PYTHON:-python3}"

# name | model | ranks | device | batch
RUNS=("mlp|mlp|1|cpu|64" "tiny_cnn|tiny_cnn|1|cpu|16" "mlp_ddp|mlp|2|cpu|64"
      "resnet50_cuda|resnet50|1|cuda|32")

compare() {  # import vs hooks of one run
  "${python}" - "$@" <<'PY'
import json, statistics, sys
trace, hooks = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
layers = {l["name"]: l for l in trace["layers"]}
for index, phase in ((0, "forward_sec"), (1, "backward_sec")):
    total = sum(h[index] for h in hooks.values())
    ratios = [layers[n][phase] / h[index] for n, h in hooks.items()
              if n in layers and h[index] >= 0.05 * total]
    missing = [n for n in hooks if n not in layers]
    if ratios:
        print(f"  {phase}: import/hooks median {statistics.median(ratios):.3f}, range "
              f"{min(ratios):.3f}-{max(ratios):.3f} over {len(ratios)} layers; "
              f"{len(missing)} hook layers not in the import")
grads = sum(h[2] for h in hooks.values()), sum(l["param_bytes"] for l in trace["layers"])
print(f"  gradient bytes: hooks {grads[0]}, import {grads[1]}")
PY
}

main() {
  echo "== gpu_kineto.sh $(date -u '+%Y-%m-%dT%H:%M:%SZ') native=${native:-no}"
  "${python}" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
  local run name model ranks device batch rank port=29810
  for run in "${RUNS[@]}"; do
    IFS='|' read -r name model ranks device batch <<<"${run}"
    if [[ "${device}" == cuda && -n "${DTSIM_KINETO_DRY:-}" ]]; then continue; fi
    echo "== ${name}: ${model} on ${ranks} ${device} rank(s)"
    port=$((port + 1))
    for ((rank = 0; rank < ranks; rank++)); do
      timeout 120 "${python}" "${here}/tests/kineto_run.py" "${model}" "${rank}" "${ranks}" \
        "${port}" "${OUT}/${name}_${rank}.json" "${OUT}/${name}_${rank}_layers.json" \
        ${native} --device "${device}" &
    done
    wait
    local traces=()
    for ((rank = 0; rank < ranks; rank++)); do traces+=("${OUT}/${name}_${rank}.json"); done
    "${python}" -m dtsim_profile import-kineto "${traces[@]}" --batch "${batch}" \
      -o "${OUT}/${name}.trace.json" --graph "${OUT}/${name}.graph.json" &&
      compare "${OUT}/${name}.trace.json" "${OUT}/${name}_0_layers.json"
  done
  ls -l "${OUT}"
}

main 2>&1 | tee "${OUT}/log.txt"
