#!/bin/sh
# dtsim against published measurements of real clusters (see README.md in this folder).
# Usage: experiments/validation/run.sh [--cases FILE.csv] [--out DIR] [--jobs N]
# Default cases: experiments/validation/data/published.csv; default out: experiments/validation/results.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
DTSIM=${DTSIM:-$repo/build/sim/dtsim}
if [ ! -x "$DTSIM" ]; then
  echo "run.sh: $DTSIM not built: run .ci/setup first" >&2
  exit 2
fi
# Debian's python3 (matplotlib, for the scatter plot), not one earlier on PATH.
/usr/bin/python3 "$here/validate.py" --dtsim "$DTSIM" "$@"
# The naive closed form on the rows dtsim predicted (results/naive.csv, naive_summary.md),
# unless another --out or --csv was asked for.
[ $# -eq 0 ] && /usr/bin/python3 "$here/naive.py" --dtsim "$DTSIM"
# Single-GPU compute predicted without its measurement (results/single_gpu*), and the
# efficiencies the repository's H200 profiles imply (results/compute_constants.txt).
if [ $# -eq 0 ]; then
  /usr/bin/python3 "$here/single_gpu.py" --dtsim "$DTSIM"
  /usr/bin/python3 "$here/compute_constants.py" --dtsim "$DTSIM" > "$here/results/compute_constants.txt"
  # DeepBench's PCIe rows with 6 and with 12 GB/s GPU links (results/pcie_both_ways.md).
  /usr/bin/python3 "$here/pcie_both_ways.py" --dtsim "$DTSIM" > /dev/null
  # Every report's error bars (sim/report/error_bars_table.inc): rebuild dtsim to quote new ones.
  /usr/bin/python3 "$here/error_bars.py"
fi
exit 0
