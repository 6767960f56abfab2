#!/usr/bin/env bash
# Runs the whole test suite from a fresh clone: installs the test dependencies and builds the
# product and the tests (scripts/setup.sh --tests, warnings as errors, no benchmarks), checks that
# the C++ follows .clang-format (scripts/format.sh --check), builds the product in Release and in
# Debug too (build-check-*: GCC warns at -O3 about what -O2 does not show, and bench/run builds
# that way), runs every CTest suite, then the libFuzzer targets for a bounded time (scripts/fuzz.sh,
# clang, also with warnings as errors). So every build type the project makes is checked for
# warnings.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
scripts/format.sh --check
for type in Release Debug; do
  dir=build-check-${type,,}
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=$type -DTRIALDB_TESTS=OFF -DTRIALDB_BENCH=OFF -DTRIALDB_WERROR=ON >/dev/null
  cmake --build "$dir" -j"$(nproc)"
done
ctest --test-dir build --output-on-failure -j2 --timeout 900
if [ -x scripts/fuzz.sh ]; then
  FUZZ_SECONDS=${FUZZ_SECONDS:-15} FUZZ_WERROR=ON scripts/fuzz.sh
fi
