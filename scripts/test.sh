#!/usr/bin/env bash
# Runs the whole test suite from a fresh clone: installs dependencies and builds (scripts/setup.sh)
# with warnings as errors and without the benchmarks, runs every CTest suite, then the libFuzzer
# targets for a bounded time (scripts/fuzz.sh, also with warnings as errors).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh -DTRIALDB_WERROR=ON -DTRIALDB_BENCH=OFF
ctest --test-dir build --output-on-failure -j2 --timeout 900
if [ -x scripts/fuzz.sh ]; then
  FUZZ_SECONDS=${FUZZ_SECONDS:-15} FUZZ_WERROR=ON scripts/fuzz.sh
fi
