#!/usr/bin/env bash
# Rewrites every case's expected outputs with what build/sim/dtsim prints now. Run it only for a
# change that is meant to change predictions, and say in the commit why the new outputs are right.
# Usage: tests/golden/update.sh (from anywhere; runs from the repository root).
set -euo pipefail
cd "$(dirname "$0")/../.."
for dir in tests/golden/*/; do
  [ -f "$dir/args" ] || continue
  read -r -a args < "$dir/args"
  extra=()
  [ "${args[0]}" = simulate ] && extra=(--link-report "$dir/expected_links.csv")
  build/sim/dtsim "${args[@]}" --report "$dir/expected_report.json" "${extra[@]}" \
    > "$dir/expected_summary.txt"
done
