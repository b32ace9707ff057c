#!/usr/bin/env bash
# Chakra execution traces through dtsim (workloads/CHAKRA.md): ASTRA-sim-style collective
# microbenchmarks (8 ... 1024 ranks, written by `dtsim chakra microbenchmark`) and the files
# ASTRA-sim ships (tests/testdata/chakra/) replayed on an ASTRA-sim-like switch (config/), each
# time against the alpha-beta closed form and ASTRA-sim's analytical formula (tables.py); then
# two training jobs written with --dump-chakra and read back with --chakra. Writes
# results/results.csv, results/training.csv and results/tables.md (stamped with the commit).
# Needs build/sim/dtsim (.ci/setup). 1-2 minutes on 2 cores (most of it the 512-rank
# all-to-all).
# Usage: experiments/interop/run.sh   (env: OUT=out/interop for the traces, DTSIM=build/sim/dtsim)
set -euo pipefail
cd "$(dirname "$0")/../.."
here=experiments/interop
out=${OUT:-out/interop}
dtsim=${DTSIM:-build/sim/dtsim}
[ -x "$dtsim" ] || { echo "$dtsim not found: build dtsim first (.ci/setup)" >&2; exit 1; }
mkdir -p "$out" "$here/results"
platform=$here/config/switch_1024.json
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
now() { date +%s.%N; }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d$2)" "$1"; }

csv=$here/results/results.csv
echo "source,op,ranks,bytes,algorithm,dtsim_sec,wall_sec" >"$csv"
# replay SOURCE OP RANKS BYTES PREFIX ALGORITHM
replay() {
  local start end
  start=$(now)
  "$dtsim" simulate --chakra "$5" --ranks "$3" --platform "$platform" --algorithm "$6" \
    --report "$out/r.json" >/dev/null
  end=$(now)
  echo "$1,$2,$3,$4,$6,$(field "$out/r.json" "['result']['iteration_time_sec']")," \
       "$(python3 -c "print(f'{$end - $start:.3f}')")" | tr -d ' ' >>"$csv"
}
for op in all-reduce all-gather reduce-scatter all-to-all; do
  algorithm=ring
  [ "$op" = all-to-all ] && algorithm=direct
  for ranks in 8 16 32 64 128 256 512 1024; do
    # A direct all-to-all on 1024 ranks is 1,047,552 concurrent flows: it ran out of the 23 GB
    # of this machine (512 ranks: 43 s). README.md, "Limits".
    [ "$op" = all-to-all ] && [ "$ranks" -gt 512 ] && continue
    for bytes in 1048576 67108864; do
      prefix=$out/mb/${op}_${ranks}_${bytes}
      mkdir -p "$out/mb"
      "$dtsim" chakra microbenchmark --op "$op" --ranks "$ranks" --bytes "$bytes" -o "$prefix" \
        >/dev/null
      replay generated "$op" "$ranks" "$bytes" "$prefix" "$algorithm"
    done
  done
  name=${op//-/_}
  for ranks in 4 8; do
    replay astra-sim-shipped "$op" "$ranks" 1048576 \
      "tests/testdata/chakra/$name/${ranks}npus_1MB/$name" "$algorithm"
  done
done

# Training jobs: the graph dtsim replays, written as Chakra and read back.
training=$here/results/training.csv
echo "job,ranks,iteration_sec,chakra_iteration_sec,files,bytes,wall_sec,chakra_wall_sec" \
  >"$training"
jobs=(
  "resnet50-dp64|--workload workloads/traces/resnet50_v100_b32.json --ranks 64|platforms/files/fat_tree_256.json"
  "gpt3-1.3b-tp2-pp2-dp4|--model gpt3-1.3b --device a100 --precision bf16 --ranks 16 --parallel tp=2,pp=2,dp=4 --micro-batch 1 --global-batch 16 --seq-len 2048|platforms/files/presets/dgx-a100.json"
)
for job in "${jobs[@]}"; do
  IFS='|' read -r name flags job_platform <<<"$job"
  rm -rf "$out/$name" && mkdir -p "$out/$name"
  start=$(now)
  # shellcheck disable=SC2086
  "$dtsim" simulate $flags --platform "$job_platform" --dump-chakra "$out/$name/trace" \
    --report "$out/$name/a.json" >/dev/null
  middle=$(now)
  "$dtsim" simulate --chakra "$out/$name/trace" --platform "$job_platform" \
    --report "$out/$name/b.json" >/dev/null
  end=$(now)
  files=$(ls "$out/$name"/trace.*.et | wc -l)
  bytes=$(cat "$out/$name"/trace.*.et | wc -c)
  echo "$name,$(field "$out/$name/a.json" "['ranks']" 2>/dev/null || echo "$files")," \
       "$(field "$out/$name/a.json" "['result']['iteration_time_sec']")," \
       "$(field "$out/$name/b.json" "['result']['iteration_time_sec']"),$files,$bytes," \
       "$(python3 -c "print(f'{$middle - $start:.3f},{$end - $middle:.3f}')")" | tr -d ' ' \
    >>"$training"
done

python3 "$here/tables.py" "$csv" "$training" "$commit" >"$here/results/tables.md"
cat "$here/results/tables.md"
