#!/bin/sh
# dtsim against the LLM rows of data/hybrid.csv (see "Hybrid parallelism" in README.md here).
# Usage: experiments/validation/run_hybrid.sh [--cases FILE.csv] [--out DIR] [--limit-sec S]
#                                             [--limit-gib G] [--only ID,ID,...]
# Runs one dtsim at a time; default out: experiments/validation/results (hybrid_*.csv, .md).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
DTSIM=${DTSIM:-$repo/build/sim/dtsim}
if [ ! -x "$DTSIM" ]; then
  echo "run_hybrid.sh: $DTSIM not built: run .ci/setup first" >&2
  exit 2
fi
/usr/bin/python3 "$here/hybrid_validate.py" --dtsim "$DTSIM" "$@"
# The hybrid class of every report's error bars (sim/report/error_bars_table.inc), unless the
# results went elsewhere.
[ $# -eq 0 ] && /usr/bin/python3 "$here/error_bars.py"
exit 0
