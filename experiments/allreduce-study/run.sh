#!/bin/sh
# Which all-reduce algorithm wins where (see README.md). About 35 minutes on 2 busy cores.
# Usage: experiments/allreduce-study/run.sh [--jobs N] [--max-ops N] [--out DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
DTSIM=${DTSIM:-$repo/build/sim/dtsim}
[ -x "$DTSIM" ] || { echo "run.sh: $DTSIM not built: run .ci/setup first" >&2; exit 2; }
exec /usr/bin/python3 "$here/study.py" --dtsim "$DTSIM" "$@"
