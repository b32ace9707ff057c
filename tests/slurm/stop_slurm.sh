#!/usr/bin/env bash
# Stops what start_slurm.sh DIR started, by the PIDs in its pid files (never by name), waits for
# the daemons to exit, and removes DIR.
# Usage: stop_slurm.sh DIR
set -uo pipefail
S=$1
pids=()
for f in "$S/slurmd.pid" "$S/slurmctld.pid" "$S/munge/pid"; do
  if [ -s "$f" ]; then
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null && pids+=("$pid")
  fi
done
for pid in "${pids[@]}"; do
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
done
rm -rf "$S"
