#!/bin/sh
# A file-defined all-reduce (the bidirectional ring) against the built-ins (see README.md,
# "An algorithm written as a file"). About 5 minutes on 2 cores.
# Usage: experiments/allreduce-study/file_algorithm.sh [--jobs N] [--out DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
DTSIM=${DTSIM:-$repo/build/sim/dtsim}
[ -x "$DTSIM" ] || { echo "file_algorithm.sh: $DTSIM not built: run .ci/setup first" >&2; exit 2; }
exec /usr/bin/python3 "$here/file_algorithm.py" --dtsim "$DTSIM" "$@"
