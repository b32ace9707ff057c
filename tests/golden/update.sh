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
    | grep -v '^  validated error ' > "$dir/expected_summary.txt"
  # Without what golden_test.cpp leaves out of the comparison: the build's provenance and the
  # validated error bars (they come from the validation results, not from the run).
  /usr/bin/python3 - "$dir/expected_report.json" <<'PY'
import json, sys
path = sys.argv[1]
with open(path) as f:
    report = json.load(f)
report.pop("provenance", None)
report.pop("error_bars", None)
with open(path, "w") as f:
    f.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
PY
done
