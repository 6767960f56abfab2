#!/usr/bin/env bash
# Runs the whole test suite from a fresh clone: installs dependencies and builds (scripts/setup.sh),
# runs every CTest suite, then the libFuzzer targets for a bounded time (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j2 --timeout 900
if [ -x scripts/fuzz.sh ]; then
  FUZZ_SECONDS=${FUZZ_SECONDS:-15} scripts/fuzz.sh
fi
