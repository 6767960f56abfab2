#!/usr/bin/env bash
# Runs the whole test suite from a fresh clone: installs the test dependencies and builds the
# product and the tests (scripts/setup.sh --tests, warnings as errors, no benchmarks), checks that
# the C++ follows .clang-format (scripts/format.sh --check), builds the
# product in Release too (build-release-check: GCC warns at -O3 about what -O2 does not show, and
# bench/run builds that way), runs every CTest suite, then the libFuzzer targets for a bounded time
# (scripts/fuzz.sh, clang, also with warnings as errors). So the build types the project makes are
# checked for warnings; Debug is not built here: it compiles the same code (there is no assert or
# NDEBUG in it) at -O0, where GCC's flow-based warnings do not run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
scripts/format.sh --check
cmake -S . -B build-release-check -DCMAKE_BUILD_TYPE=Release -DTRIALDB_TESTS=OFF -DTRIALDB_BENCH=OFF \
  -DTRIALDB_WERROR=ON >/dev/null
cmake --build build-release-check -j"$(nproc)"
ctest --test-dir build --output-on-failure -j2 --timeout 900
if [ -x scripts/fuzz.sh ]; then
  FUZZ_SECONDS=${FUZZ_SECONDS:-15} FUZZ_WERROR=ON scripts/fuzz.sh
fi
