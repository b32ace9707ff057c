#!/usr/bin/env bash
# A fuzzing campaign of every reader: builds the libFuzzer targets with Debian's clang under
# AddressSanitizer and UBSan into build-fuzz/ (the one study that builds: libFuzzer needs its own
# compiler and flags), then runs each target for SECONDS seconds at the lowest priority, one at a
# time, from a copy of its committed corpora, and prints per target the executions and the
# findings (crashes, leaks, timeouts, out-of-memory: the files libFuzzer leaves in results/).
#
#   experiments/fuzz/run.sh [SECONDS_PER_TARGET=600] [MAX_LEN=262144] [TARGET...]
#
# A finding is a bug: add its input to tests/fuzz/corpus/<target>/regression/ with the fix.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-600}
max_len=${2:-262144}  # large enough for nesting 100,000 deep (the notes: 64 KB misses it)
shift $(( $# > 2 ? 2 : $# ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(trace_reader platform_spec xml_check graph_reader sweep job_file
                                    chakra_reader algorithm_file msccl_xml transformer_file)

sanitize="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
      -DDTSIM_FUZZ=ON -DCMAKE_CXX_FLAGS="$sanitize -fno-omit-frame-pointer" >/dev/null
nice -n 19 cmake --build build-fuzz -j1 --target "${targets[@]/%/_fuzzer}" >&2

results=experiments/fuzz/results
mkdir -p "$results"
printf '%-14s %12s %10s %9s\n' target executions exec/s findings
for t in "${targets[@]}"; do
  work="$results/corpus-$t"
  mkdir -p "$work" "$results/findings-$t"
  cp -n tests/fuzz/corpus/"$t"/seed/* tests/fuzz/corpus/"$t"/regression/* "$work"/ 2>/dev/null || true
  log="$results/$t.log"
  # xml_check: a platform SimGrid refuses ends the forked child, sometimes with a sanitizer's
  # report (SimGrid asks for 64 GB on a fat-tree with radical="0"); that is the refusal, and
  # symbolizing its stack costs seconds per input. A finding in the parent can be replayed
  # with symbols.
  options=${ASAN_OPTIONS:-}
  [ "$t" = xml_check ] && options="symbolize=0:$options"
  # -timeout: an input that takes over 10 s is a hang; -rss_limit_mb: one over 2 GB a finding.
  ASAN_OPTIONS=$options nice -n 19 build-fuzz/tests/fuzz/"$t"_fuzzer "$work" -max_total_time="$seconds" -max_len="$max_len" \
      -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$results/findings-$t/" >"$log" 2>&1 || true
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  found=$(find "$results/findings-$t" -type f | wc -l)
  printf '%-14s %12s %10s %9s\n' "$t" "${runs:-?}" "${rate:-?}" "$found"
done
