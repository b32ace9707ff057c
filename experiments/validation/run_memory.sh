#!/bin/sh
# dtsim memory against the peak_memory rows of data/hybrid.csv (see "Peak memory" in README.md
# here). Usage: experiments/validation/run_memory.sh [--cases FILE.csv] [--out DIR] [--only ID,...]
# Default out: experiments/validation/results (memory_results.csv, memory_summary.md).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
DTSIM=${DTSIM:-$repo/build/sim/dtsim}
if [ ! -x "$DTSIM" ]; then
  echo "run_memory.sh: $DTSIM not built: run .ci/setup first" >&2
  exit 2
fi
/usr/bin/python3 "$here/memory_validate.py" --dtsim "$DTSIM" "$@"
# The memory class of every report's error bars (sim/report/error_bars_table.inc), unless the
# rows were narrowed: rebuild dtsim to quote new ones.
if [ $# -eq 0 ]; then /usr/bin/python3 "$here/error_bars.py"; fi
