#!/usr/bin/env bash
# Cross-checks dtsim's collectives against SimGrid's SMPI, an independent implementation: the same
# SimGrid XML platform, the same network model (CM02, no cross-traffic, no TCP window cap), rank r
# on the r-th declared host in both, and for each dtsim algorithm the SMPI (MPICH / Open MPI)
# algorithm that sends the same messages. Builds allreduce_mpi.c with smpicc into $OUT, then runs
# every case of the matrix below with both; writes $OUT/results.csv and prints it as a table.
# Needs build/sim/dtsim (.ci/setup) and smpicc/smpirun (Debian libsimgrid-dev). About 3 minutes
# on 2 cores (SMPI with 64 ranks: ~4 s a run); GNU time reports a peak RSS of 21 GB, most of it
# the same shared pages counted once per rank (SMPI_SHARED_MALLOC), on a 23 GB machine.
# Usage: experiments/smpi-crosscheck/run.sh   (env: OUT=out/smpi-crosscheck, DTSIM=build/sim/dtsim)
set -euo pipefail
cd "$(dirname "$0")/../.."
here=experiments/smpi-crosscheck
out=${OUT:-out/smpi-crosscheck}
dtsim=${DTSIM:-build/sim/dtsim}
mkdir -p "$out"
for tool in smpicc smpirun; do
  if ! command -v "$tool" >/dev/null; then
    echo "$tool not found: install libsimgrid-dev (.ci/setup)" >&2
    exit 1
  fi
done
[ -x "$dtsim" ] || { echo "$dtsim not found: build dtsim first (.ci/setup)" >&2; exit 1; }
smpicc -O2 -o "$out/allreduce_mpi" "$here/allreduce_mpi.c" -lm

# The network model of `dtsim --network-model exact` (its report lists these three settings).
# smpirun adds network/model:SMPI (with SMPI's piecewise latency/bandwidth factors) and
# surf/precision:1e-9; our network/model:CM02 comes later and wins. smpi/bw-factor and
# smpi/lat-factor are read by the SMPI model only (unused under CM02); CM02's own
# network/bandwidth-factor and latency-factor default to 1, as in dtsim.
exact=(--cfg=network/model:CM02 --cfg=network/crosstraffic:0 --cfg=network/TCP-gamma:1e12)
# No simulated time for computation (SMPI still reduces the real buffers) or for reading the clock.
smpi_only=(--cfg=smpi/simulate-computation:no --cfg=smpi/wtime:0 --log=root.thres:error)

# platform (XML in this folder), then the rank counts run on it.
cases=(
  "fattree16 8 12 16"
  "fattree64 8 16 64"
  "flat64 8 12 64"
  "backbone16 8 12 16"
)
sizes=(1048576 16777216 100000000) # 1 MiB, 16 MiB, 100 MB
# dtsim op : SMPI op (allreduce_mpi.c's OP, --cfg=smpi/<op>) : dtsim algorithm : SMPI algorithm
pairs=(
  "all-reduce:allreduce:ring:lr"                      # logical ring: reduce-scatter + all-gather
  "all-reduce:allreduce:halving-doubling:rab_rdb"     # MPICH's Rabenseifner, even->odd folding
  "all-reduce:allreduce:recursive-doubling:rdb"       # MPICH's recursive doubling, same folding
  "reduce-scatter:reduce_scatter:ring:ompi_ring"      # Open MPI's ring
  "reduce-scatter:reduce_scatter:halving-doubling:ompi_basic_recursivehalving"
  "all-gather:allgather:ring:NTSLR"                   # non-topology-specific logical ring
  "all-gather:allgather:halving-doubling:rdb"         # recursive doubling (= dtsim's doubling half)
)
# Only where the rank count is not a power of two: Rabenseifner's own algorithm, which folds the
# extra ranks differently (for comparison with rab_rdb).
non_power_of_two_pairs=("all-reduce:allreduce:halving-doubling:rab")

is_power_of_two() { (($1 > 0 && ($1 & ($1 - 1)) == 0)); }
field() { sed -n "s/^  \"$2\": \([^,]*\),\{0,1\}$/\1/p" "$1" | head -n 1; }

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
csv="$out/results.csv"
columns=platform,ranks,op,bytes,dtsim_algorithm,smpi_algorithm,dtsim_sec,smpi_sec,diff_pct,note
echo "$columns,smpi_start_skew_sec,git_commit" >"$csv"

# run_case PLATFORM RANKS DTSIM_OP DTSIM_ALG BYTES SMPI_OP SMPI_ALG NOTE [SMPIRUN_CFG...]
# Runs dtsim and smpirun on one case and appends a CSV row. SMPI_OP is allreduce_mpi.c's OP;
# without SMPIRUN_CFG the SMPI algorithm is selected with --cfg=smpi/SMPI_OP:SMPI_ALG. The SMPI
# ranks start together (allreduce_mpi.c's START=common) unless start=barrier is set.
start=common
run_case() {
  local platform=$1 ranks=$2 dtsim_op=$3 dtsim_alg=$4 bytes=$5 smpi_op=$6 smpi_alg=$7 note=$8
  shift 8
  local cfg=("$@")
  [ ${#cfg[@]} -gt 0 ] || cfg=("--cfg=smpi/$smpi_op:$smpi_alg")
  local xml="$here/$platform.xml"
  local hosts
  hosts=$(grep -o 'radical="0-[0-9]*"' "$xml" | sed 's/.*-\([0-9]*\)"/\1/')
  local tag="${platform}_${ranks}_${bytes}_${dtsim_op}_${dtsim_alg}_${smpi_alg}_$start"
  tag+=${note:+_diag}
  "$dtsim" collective --platform "$xml" --ranks "$ranks" --op "$dtsim_op" --bytes "$bytes" \
    --algorithm "$dtsim_alg" --network-model exact --report "$out/dtsim_$tag.json" >/dev/null
  local dtsim_sec smpi_sec diff_pct skew
  dtsim_sec=$(field "$out/dtsim_$tag.json" time_sec)
  if ! smpirun -np "$ranks" -platform "$xml" -hostfile "$here/hostfile$((hosts + 1))" \
    "${exact[@]}" "${smpi_only[@]}" "${cfg[@]}" "$out/allreduce_mpi" "$bytes" "$smpi_op" "$start" \
    noop >"$out/smpi_$tag.txt" 2>&1; then
    echo "smpirun failed, see $out/smpi_$tag.txt" >&2
    exit 1
  fi
  smpi_sec=$(awk '$1 == "SMPI_TIME" {print $2}' "$out/smpi_$tag.txt")
  skew=$(awk '$1 == "SMPI_START_SKEW" {print $2}' "$out/smpi_$tag.txt")
  diff_pct=$(awk -v d="$dtsim_sec" -v s="$smpi_sec" 'BEGIN {printf "%+.4f", (d - s) / s * 100}')
  local row="$platform,$ranks,$dtsim_op,$bytes,$dtsim_alg,$smpi_alg,$dtsim_sec,$smpi_sec,$diff_pct"
  echo "$row,$note,$skew,$commit" >>"$csv"
}

start_sec=$SECONDS
# The matrix.
for case in "${cases[@]}"; do
  read -r platform ranks_list <<<"$case"
  for ranks in $ranks_list; do
    case_pairs=("${pairs[@]}")
    is_power_of_two "$ranks" || case_pairs=("${pairs[@]:0:3}" "${non_power_of_two_pairs[@]}")
    for bytes in "${sizes[@]}"; do
      for pair in "${case_pairs[@]}"; do
        IFS=: read -r dtsim_op smpi_op dtsim_alg smpi_alg <<<"$pair"
        run_case "$platform" "$ranks" "$dtsim_op" "$dtsim_alg" "$bytes" "$smpi_op" "$smpi_alg" ""
      done
    done
  done
done

# Diagnostics: each explains a disagreement of the matrix by removing its cause (README).
for platform in fattree16 flat64 backbone16; do
  for bytes in "${sizes[@]}"; do
    # lr does count/p elements per block and a second all-reduce (redbcast) of count % p elements;
    # at a size divisible by 4p that second call disappears.
    run_case "$platform" 12 all-reduce ring $((bytes / 48 * 48)) allreduce lr \
      "bytes rounded to a multiple of 4p"
  done
done
# Open MPI's ring pre-posts receives; with 16 KiB blocks (< 64 KiB) SMPI sends eagerly and the
# ranks drift apart. Synchronous sends make it lock-step like dtsim's ring.
run_case fattree64 64 reduce-scatter ring 1048576 reduce_scatter ompi_ring "synchronous sends" \
  --cfg=smpi/reduce_scatter:ompi_ring --cfg=smpi/send-is-detached-thresh:0
# The usual benchmark start (each rank right after MPI_Barrier) instead of a common start: the
# ranks leave the barrier microseconds apart and the measured time grows by that skew.
start=barrier
for bytes in 1048576 100000000; do
  run_case fattree64 64 all-reduce ring "$bytes" allreduce lr "barrier start"
done
start=common

echo "wrote $csv ($((SECONDS - start_sec)) s)"
format="%-10s %5s %-14s %9s %-18s %-27s %13s %13s %9s %11s  %s\n"
awk -F, -v f="$format" 'NR == 1 {printf f, $1, $2, $3, $4, $5, $6, $7, $8, $9, "start_skew", $10; next}
  {printf f, $1, $2, $3, $4, $5, $6, sprintf("%.9f", $7), sprintf("%.9f", $8), $9,
          sprintf("%.3g", $11), $10}' "$csv"
python3 "$here/tables.py" "$csv" >"$out/tables.md" && echo "wrote $out/tables.md (the README's tables)"
