#!/usr/bin/env bash
# Time per iteration, samples/s and memory per GPU of data, spatial, filter, channel and
# pipeline parallelism for ResNet-50 and CosmoFlow (128^3 and 512^3) on 8..1024 V100s of DGX-1 machines,
# with the GPU count where each stops scaling and its limiter (Kahira et al., HPDC 2021's kind
# of result). Writes results/cnn_strategies.csv, results/summary.md and
# results/cnn_strategies.png. Builds nothing (run .ci/setup first).
# Usage: experiments/cnn-strategies/run.sh [--quick]   (about 12 minutes on 2 busy cores;
#        --quick: 8..64 GPUs, about 10 s)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
[ -x build/sim/dtsim ] || { echo "run.sh: build/sim/dtsim not built: run .ci/setup first" >&2; exit 2; }
/usr/bin/python3 "$here/study.py" --dtsim build/sim/dtsim --out "$here/results" "$@"
/usr/bin/python3 "$here/plot.py" "$here/results"
echo "git commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" >>"$here/results/summary.md"
