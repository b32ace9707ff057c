#!/bin/sh
# dtsim against the CNN rows (PDL) of data/hybrid.csv, on data/abci.json (cnn_validate.py).
# Usage: experiments/validation/run_cnn.sh [--cases FILE.csv] [--platform P.json] [--out DIR]
# Runs one dtsim at a time, niced; default out: experiments/validation/results (cnn_*.csv, .md).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
DTSIM=${DTSIM:-$repo/build/sim/dtsim}
if [ ! -x "$DTSIM" ]; then
  echo "run_cnn.sh: $DTSIM not built: run .ci/setup first" >&2
  exit 2
fi
exec nice -n 10 /usr/bin/python3 "$here/cnn_validate.py" --dtsim "$DTSIM" "$@"
