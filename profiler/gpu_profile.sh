#!/usr/bin/env bash
# One profiling session on a CUDA machine: writes $OUT/<name>.json per run and $OUT/log.txt.
#
#   bash profiler/gpu_profile.sh                          # from the repo root
#   DTSIM_GPU_PROFILE_DRY=1 bash profiler/gpu_profile.sh  # CPU dry run with tiny models
#
# This session checks the CUDA kernel timing (--cuda-timing kernels): resnet50 batch 32 fp32
# and bert_large batch 32 seq 128 bf16, the two cases where CUDA-event timing overcounted
# (gpu-runs/2026-11-29-h200-log.txt), resnet50 batch 128 bf16 as a GPU-bound control (events
# were right there), then resnet50 batch 32 with --cuda-timing events for a one-line
# comparison. Runs late in the list are skipped if the budget runs out. Each kernel run also writes $OUT/<name>.events.json.gz: the adapted
# profiler events of its second profiled iteration (kernels.load_events), for offline checks.
#
# OUT defaults to out/gpu_profile. The dry run runs the same command lines on the CPU with a
# tiny model of the same family, batch 2, so that a typo cannot waste the GPU run; there the
# kernel runs use the CPU test hook DTSIM_PROFILE_CPU_OPS_AS_KERNELS=1 (CPU ops stand in for
# kernels) and the events run drops --cuda-timing (the CPU's default clock).
#
# Each run is its own process under a time limit; one failing does not stop the others. The
# whole session stays within DTSIM_GPU_BUDGET_S seconds (default 280). Exit code: the number
# of runs that failed (0 = all traces written), 100 if no usable python3 was found.
set -u
export PYTHONUNBUFFERED=1

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PYTHONPATH="${here}${PYTHONPATH:+:${PYTHONPATH}}"
OUT="${OUT:-out/gpu_profile}"
mkdir -p "${OUT}"
LOG="${OUT}/log.txt"
dry="${DTSIM_GPU_PROFILE_DRY:-0}"
budget_s="${DTSIM_GPU_BUDGET_S:-280}"
per_model_s="${DTSIM_GPU_PER_MODEL_S:-120}"

# name | model | batch | precision | seq len | cuda timing (empty: the default) | warmup | iters
RUNS=(
  "resnet50_b32_fp32_kernels|resnet50|32|fp32||kernels|5|20"
  "bert_large_b32_seq128_bf16_kernels|bert_large|32|bf16|128|kernels|3|15"
  # control: GPU-bound, where CUDA events covered 100.2 % / 98.7 %; kernels should agree
  "resnet50_b128_bf16_kernels|resnet50|128|bf16||kernels|3|10"
  "resnet50_b32_fp32_events|resnet50|32|fp32||events|5|20"
)
# DTSIM_GPU_RUNS=all: the five models of the first H200 session, default timing.
if [[ "${DTSIM_GPU_RUNS:-}" == all ]]; then
  RUNS=(
    "resnet50_b32_fp32|resnet50|32|fp32|||5|20"
    "resnet50_b128_bf16|resnet50|128|bf16|||5|20"
    "vgg16_b32_fp32|vgg16|32|fp32|||5|20"
    "bert_large_b32_seq128_bf16|bert_large|32|bf16|128||3|15"
    "gpt2_b8_seq1024_bf16|gpt2|8|bf16|1024||3|15"
  )
fi
# The one-line comparison: kernels run vs events run of the same model (skipped if missing).
COMPARE=("resnet50_b32_fp32_kernels" "resnet50_b32_fp32_events")
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
try:
    import torch.profiler
    print("kineto", torch.autograd.kineto_available(), "profiler activities",
          sorted(str(a) for a in torch.profiler.supported_activities()))
except Exception as error:
    print("torch.profiler:", type(error).__name__, error)
PY
}

# Profiles one RUNS entry; returns the profiler's exit status (124: time limit).
profile_one() {
  local python="$1" device="$2" run="$3" name model batch precision seq timing warmup iters
  IFS='|' read -r name model batch precision seq timing warmup iters <<<"${run}"
  local extra=() env=()
  if [[ "${dry}" == "1" ]]; then
    warmup=1
    iters=2
    # torch 1.13's CPU autocast leaves LayerNorm inputs in bf16 and then fails in BERT's MLM
    # head (dense -> GELU -> LayerNorm); CUDA autocast runs LayerNorm in fp32.
    if [[ "${model}" == bert_large ]]; then precision=fp32; fi
    model="${DRY_MODEL[${model}]}"
    batch=2
    if [[ -n "${seq}" ]]; then seq=32; fi
    if [[ "${timing}" == kernels ]]; then
      env=(DTSIM_PROFILE_CPU_OPS_AS_KERNELS=1)
    else
      timing=""  # the CPU has no --cuda-timing
    fi
  fi
  if [[ -n "${seq}" ]]; then extra+=(--seq-len "${seq}"); fi
  if [[ -n "${timing}" ]]; then extra+=(--cuda-timing "${timing}"); fi
  if [[ "${timing}" == kernels ]]; then
    env+=("DTSIM_PROFILE_DUMP_EVENTS=${OUT}/${name}.events.json.gz")
  fi
  local left=$((budget_s - SECONDS))
  if ((left < 30)); then
    echo "== ${name}: SKIPPED, ${left} s left of the ${budget_s} s budget"
    return 1
  fi
  local limit=$((left < per_model_s ? left : per_model_s))
  local cmd=("${python}" -m dtsim_profile --model "${model}" --batch "${batch}"
             --device "${device}" --precision "${precision}" --warmup "${warmup}"
             --iters "${iters}" "${extra[@]}" -o "${OUT}/${name}.json")
  echo "== ${name}: ${env[*]} $(printf '%q ' "${cmd[@]}")(limit ${limit} s)"
  local start=${SECONDS} status
  env "${env[@]}" timeout --signal=TERM --kill-after=10 "${limit}" "${cmd[@]}"
  status=$?
  echo "== ${name}: exit ${status} after $((SECONDS - start)) s"
  if ((status != 0)); then rm -f "${OUT}/${name}.json"; fi
  return "${status}"
}

# One line: layer sums, plain phases and coverage of two traces of the same model.
compare() {
  local python="$1" first="$2" second="$3"
  if [[ ! -f "${OUT}/${first}.json" || ! -f "${OUT}/${second}.json" ]]; then
    echo "== compare: ${first} or ${second} missing"
    return 0
  fi
  "${python}" - "${OUT}/${first}.json" "${OUT}/${second}.json" <<'PY' 2>&1
import json, re, statistics, sys
docs = [json.load(open(path)) for path in sys.argv[1:3]]
names = [path.rsplit("/", 1)[-1][:-5] for path in sys.argv[1:3]]
def sums(doc):
    layers = doc["layers"]
    fwd = sum(l["forward_sec"] for l in layers)
    bwd = sum(l["backward_sec"] for l in layers)
    m = re.search(r"Plain iteration \(medians\): forward\+loss ([0-9.e+-]+) s, backward "
                  r"([0-9.e+-]+) s", doc["source"])
    plain = (float(m.group(1)), float(m.group(2))) if m else (float("nan"), float("nan"))
    return fwd, bwd, plain
(f0, b0, p0), (f1, b1, p1) = sums(docs[0]), sums(docs[1])
by_name = {l["name"]: l for l in docs[1]["layers"]}
big = [l for l in docs[0]["layers"] if l["name"] in by_name and l["forward_sec"] > 0.01 * f0
       and by_name[l["name"]]["forward_sec"] > 0]
ratio = statistics.median(l["forward_sec"] / by_name[l["name"]]["forward_sec"] for l in big) \
    if big else float("nan")
ms = lambda x: f"{1e3 * x:.2f}"
print(f"== compare {names[0]} vs {names[1]}: layers fwd/bwd {ms(f0)}/{ms(b0)} ms vs "
      f"{ms(f1)}/{ms(b1)} ms; plain fwd/bwd {ms(p0[0])}/{ms(p0[1])} ms vs "
      f"{ms(p1[0])}/{ms(p1[1])} ms; coverage fwd/bwd {100 * f0 / p0[0]:.1f}/"
      f"{100 * b0 / p0[1]:.1f} % vs {100 * f1 / p1[0]:.1f}/{100 * b1 / p1[1]:.1f} %; "
      f"median per-layer forward ratio {ratio:.3f} over {len(big)} layers > 1 % of forward")
PY
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
  compare "${python}" "${COMPARE[@]}"
  echo "== done in ${SECONDS} s: $((${#RUNS[@]} - failed)) of ${#RUNS[@]} traces written to ${OUT}"
  ls -l "${OUT}"
  return "${failed}"
}

# tee in a pipeline (not a process substitution) so that log.txt is complete on exit.
main 2>&1 | tee "${LOG}"
exit "${PIPESTATUS[0]}"
