#!/usr/bin/env bash
# Predicted against measured speedup of every published what-if pair dtsim covers: DDP buckets
# 1 MB vs 25 MB (DDPB-25..44, without and with the compute-side bucket cost), AMP vs TF32
# (DeepLearningExamples ResNet-50 on DGX A100), and hybrid.csv's what-if groups whose knob dtsim
# models (recomputation, pipeline schedule, float8), one knob at a time. Writes results/pairs.csv,
# results/summary.md, results/predicted_vs_measured.png, and P3's predicted gains (p3.py:
# results/p3.csv, results/p3.md). Builds nothing (run .ci/setup first).
# Usage: experiments/what-if/run.sh [--quick]   (about 7 minutes, most of it Megatron-LM's
#        1024-2520 GPU schedule pairs; --quick: 10 s, without the pairs over 64 GPUs)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
[ -x build/sim/dtsim ] || { echo "run.sh: build/sim/dtsim not built: run .ci/setup first" >&2; exit 2; }
/usr/bin/python3 "$here/study.py" --out "$here/results" "$@"
/usr/bin/python3 "$here/plot.py" "$here/results"
/usr/bin/python3 "$here/p3.py" --out "$here/results" >/dev/null  # P3's predicted gains (no pair)
# The what-if classes of every whatif report's error bars (sim/report/error_bars_table.inc), from
# the full study only: rebuild dtsim to quote new ones.
[ $# -eq 0 ] && /usr/bin/python3 experiments/validation/error_bars.py
echo "git commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" >>"$here/results/summary.md"
