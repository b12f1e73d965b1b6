#!/usr/bin/env bash
# Builds the fuzz targets with clang (AddressSanitizer and UndefinedBehaviorSanitizer, engine
# only) in build-fuzz/ and runs each for SECONDS (default 60) from the corpus kept in
# tests/fuzz/corpus/<target>/. New inputs found go to build-fuzz/corpus/<target>/; a crash leaves
# its input in build-fuzz/ and fails the run: add it to the corpus and a regression test.
#
#   tests/fuzz/run.sh [SECONDS]       (CI runs a short pass: tests/fuzz/run.sh 10)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
seconds="${1:-60}"
out="$ROOT/build-fuzz"
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPLY_SERVICES=OFF -DPLY_FUZZ=ON >/dev/null
cmake --build "$out" --target fuzz_moves fuzz_spec -j "$(nproc)"
for target in fuzz_moves fuzz_spec; do
  mkdir -p "$out/corpus/$target"
  echo "fuzzing $target for ${seconds}s"
  (cd "$out" && "./tests/fuzz/$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
    -print_final_stats=1 "corpus/$target" "$ROOT/tests/fuzz/corpus/$target" 2>&1 |
    grep -E "^(#[0-9]+ *DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)" || true)
  # libFuzzer leaves crash-*/timeout-*/leak-* files behind when it finds something.
  if ls "$out"/crash-* "$out"/timeout-* "$out"/leak-* >/dev/null 2>&1; then
    echo "fuzz: $target found a failing input:" "$out"/crash-* "$out"/timeout-* "$out"/leak-* 2>/dev/null
    exit 1
  fi
done
