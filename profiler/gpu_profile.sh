#!/usr/bin/env bash
# One profiling session on a CUDA machine: writes $OUT/<name>.json per model and $OUT/log.txt.
#
#   bash profiler/gpu_profile.sh                          # from the repo root
#   DTSIM_GPU_PROFILE_DRY=1 bash profiler/gpu_profile.sh  # CPU dry run with tiny models
#
# OUT defaults to out/gpu_profile. The dry run runs the same command lines on the CPU with a
# tiny model of the same family, batch 2, so that a typo cannot waste the GPU run.
#
# Each model runs in its own process under a time limit; one failing does not stop the others.
# The whole session stays within DTSIM_GPU_BUDGET_S seconds (default 480). Exit code: the number
# of models that failed (0 = all traces written), 100 if no usable python3 was found.
set -u
export PYTHONUNBUFFERED=1

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PYTHONPATH="${here}${PYTHONPATH:+:${PYTHONPATH}}"
OUT="${OUT:-out/gpu_profile}"
mkdir -p "${OUT}"
LOG="${OUT}/log.txt"
dry="${DTSIM_GPU_PROFILE_DRY:-0}"
budget_s="${DTSIM_GPU_BUDGET_S:-480}"
per_model_s="${DTSIM_GPU_PER_MODEL_S:-150}"

# name | model | batch | precision | extra flags
RUNS=(
  "resnet50_b32_fp32|resnet50|32|fp32|"
  "resnet50_b128_bf16|resnet50|128|bf16|"
  "vgg16_b32_fp32|vgg16|32|fp32|"
  "bert_large_b32_seq128_bf16|bert_large|32|bf16|--seq-len 128"
  "gpt2_b8_seq1024_bf16|gpt2|8|bf16|--seq-len 1024"
)
# The dry run swaps in a tiny model of the same family, batch 2, sequences of 32 tokens.
declare -A DRY_MODEL=([resnet50]=tiny_cnn [vgg16]=tiny_cnn [bert_large]=tiny_bert
                      [gpt2]=tiny_transformer)

# Prints the first of $DTSIM_PYTHON, python3, /usr/bin/python3 whose torch sees a GPU
# (argument 0: whose torch imports at all).
pick_python() {
  local want_cuda="$1" candidate
  for candidate in ${DTSIM_PYTHON:-} python3 /usr/bin/python3; do
    command -v "${candidate}" >/dev/null 2>&1 || continue
    if "${candidate}" -c \
        "import sys, torch; sys.exit(${want_cuda} and not torch.cuda.is_available())" \
        >/dev/null 2>&1; then
      echo "${candidate}"
      return 0
    fi
  done
  return 1
}

print_versions() {
  local python="$1"
  if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi 2>&1; else echo "(no nvidia-smi)"; fi
  "${python}" - <<'PY' 2>&1
import platform, torch
print("python", platform.python_version(), "torch", torch.__version__, "cuda", torch.version.cuda,
      "cudnn", torch.backends.cudnn.version())
try:
    import torchvision
    print("torchvision", torchvision.__version__)
except ImportError as error:
    print("torchvision missing:", error)
if torch.cuda.is_available():
    print("device", torch.cuda.get_device_name(), "capability", torch.cuda.get_device_capability(),
          "bf16", torch.cuda.is_bf16_supported())
PY
}

# Profiles one RUNS entry; returns the profiler's exit status (124: time limit).
profile_one() {
  local python="$1" device="$2" run="$3" name model batch precision extra
  IFS='|' read -r name model batch precision extra <<<"${run}"
  local iters=(--warmup 10 --iters 30)
  if [[ "${dry}" == "1" ]]; then
    iters=(--warmup 1 --iters 2)
    # torch 1.13's CPU autocast leaves LayerNorm inputs in bf16 and then fails in BERT's MLM
    # head (dense -> GELU -> LayerNorm); CUDA autocast runs LayerNorm in fp32.
    if [[ "${model}" == bert_large ]]; then precision=fp32; fi
    model="${DRY_MODEL[${model}]}"
    batch=2
    extra="${extra:+--seq-len 32}"
  fi
  local left=$((budget_s - SECONDS))
  if ((left < 30)); then
    echo "== ${name}: SKIPPED, ${left} s left of the ${budget_s} s budget"
    return 1
  fi
  local limit=$((left < per_model_s ? left : per_model_s))
  # shellcheck disable=SC2206  # $extra is a list of flags
  local cmd=("${python}" -m dtsim_profile --model "${model}" --batch "${batch}"
             --device "${device}" --precision "${precision}" "${iters[@]}" ${extra}
             -o "${OUT}/${name}.json")
  echo "== ${name}: $(printf '%q ' "${cmd[@]}")(limit ${limit} s)"
  local start=${SECONDS} status
  timeout --signal=TERM --kill-after=10 "${limit}" "${cmd[@]}"
  status=$?
  echo "== ${name}: exit ${status} after $((SECONDS - start)) s"
  if ((status != 0)); then rm -f "${OUT}/${name}.json"; fi
  return "${status}"
}

main() {
  local device=cuda want_cuda=1 python run failed=0
  if [[ "${dry}" == "1" ]]; then device=cpu; want_cuda=0; fi
  if ! python="$(pick_python "${want_cuda}")"; then
    local need="imports"
    if ((want_cuda)); then need="sees a CUDA device"; fi
    echo "gpu_profile: no python3 whose torch ${need}"
    return 100
  fi
  echo "== gpu_profile.sh $(date -u '+%Y-%m-%dT%H:%M:%SZ') dry=${dry} device=${device}"
  echo "== python ${python}"
  echo "== git $(git rev-parse --short HEAD 2>/dev/null || echo '(no git)')"
  print_versions "${python}"
  for run in "${RUNS[@]}"; do
    profile_one "${python}" "${device}" "${run}" || failed=$((failed + 1))
  done
  echo "== done in ${SECONDS} s: $((${#RUNS[@]} - failed)) of ${#RUNS[@]} traces written to ${OUT}"
  ls -l "${OUT}"
  return "${failed}"
}

# tee in a pipeline (not a process substitution) so that log.txt is complete on exit.
main 2>&1 | tee "${LOG}"
exit "${PIPESTATUS[0]}"
