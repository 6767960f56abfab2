#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/fuzz_*.cc) with clang, ASan and UBSan in build-fuzz,
# then runs each for ${FUZZ_SECONDS:-20} seconds on its seed corpus tests/fuzz/corpus/<name>/.
# New inputs go to a scratch directory, so the committed seeds stay small. Fails on any crash,
# sanitizer report or leak (libFuzzer exits non-zero and leaves a crash-* / leak-* file).
# FUZZ_WERROR=ON (scripts/test.sh sets it) builds with warnings as errors (-DTRIALDB_WERROR).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-20}
BUILD=build-fuzz
CC=${CC_FUZZ:-clang} CXX=${CXX_FUZZ:-clang++} cmake -S . -B "$BUILD" -DTRIALDB_FUZZ=ON -DTRIALDB_SANITIZE=ON \
  -DTRIALDB_BENCH=OFF ${FUZZ_WERROR:+-DTRIALDB_WERROR=$FUZZ_WERROR} -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="${CC_FUZZ:-clang}" -DCMAKE_CXX_COMPILER="${CXX_FUZZ:-clang++}" \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" >/dev/null
targets=$(ls tests/fuzz/fuzz_*.cc | xargs -n1 basename | sed 's/\.cc$//')
# shellcheck disable=SC2086
cmake --build "$BUILD" -j2 --target $targets
status=0
for t in $targets; do
  name=${t#fuzz_}
  seeds=tests/fuzz/corpus/$name
  work=$(mktemp -d)
  mkdir -p "$seeds"
  echo "== $t: ${SECONDS_EACH}s on $(ls "$seeds" | wc -l) seeds"
  if ! (cd "$work" && "$OLDPWD/$BUILD/bin/$t" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 "$work" "$OLDPWD/$seeds" 2>"$work/log.txt"); then
    echo "FAILED: $t (log and reproducer in $work)"; tail -40 "$work/log.txt"; status=1
  else
    grep -E "stat::number_of_executed_units|Done" "$work/log.txt" | tail -2
    rm -rf "$work"
  fi
done
exit $status
