#!/usr/bin/env bash
# The wall time of the same 64-point sweep (sweep_64_points.json) run locally with --jobs 2 and
# through a single-node Slurm started here (start_slurm.sh; as many task slots as cores), and a
# check that both give the same file. Not part of the test suite (it measures time).
# Usage, from the repository root after a build: tests/slurm/time_64_points.sh
set -euo pipefail
dtsim=${DTSIM:-build/sim/dtsim}
sweep=tests/slurm/sweep_64_points.json
T=$(mktemp -d)
trap 'tests/slurm/stop_slurm.sh "$T/slurm"; rm -rf "$T"' EXIT
eval "$(tests/slurm/start_slurm.sh "$T/slurm" 16937 16938)"
seconds() { date +%s.%N; }
t0=$(seconds)
"$dtsim" sweep "$sweep" --jobs 2 --out "$T/local.csv" 2>/dev/null
t1=$(seconds)
"$dtsim" sweep "$sweep" --slurm --out "$T/slurm.csv" 2>/dev/null
t2=$(seconds)
cmp "$T/local.csv" "$T/slurm.csv"
echo "64 points, $(nproc) cores: local --jobs 2 $(echo "$t1 - $t0" | bc) s," \
     "Slurm $(echo "$t2 - $t1" | bc) s (same file)"
