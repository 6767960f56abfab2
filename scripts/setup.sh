#!/usr/bin/env bash
# scripts/setup.sh [--tests] [CMAKE_ARGS...]
# Installs what building and running trialdb needs (Debian packages without their recommends, and
# uPlot from npm for trialdb serve's charts, embedded into the binary at build time) and builds the
# product into ./build: the trialdb CLI (build/bin/trialdb) and the loadable extension
# (build/lib/trialdb.so). Safe to run again.
# --tests (scripts/test.sh passes it) also installs what only the tests need (GoogleTest, Python
# with numpy, pandas and protobuf, clang for the fuzzers, headless Chromium for the web view, and
# s3rver and DuckDB from npm) and builds the test suite too. The build treats warnings as errors, as
# CI does (the code has none on Debian 12, in every build type); CMAKE_ARGS go to cmake's configure
# step after ours, so -DTRIALDB_WERROR=OFF turns that off and -DTRIALDB_BENCH=ON adds the
# benchmarks (bench/run builds its own Release tree with them). BUILD_TYPE=Debug|Release|
# RelWithDebInfo (default) picks the build type.
set -euo pipefail
cd "$(dirname "$0")/.."
tests=OFF
if [ "${1:-}" = --tests ]; then tests=ON; shift; fi

# What building and running the product needs.
PRODUCT_PKGS="g++ make cmake pkg-config ca-certificates sqlite3 libsqlite3-dev libprotobuf-dev protobuf-compiler
zlib1g-dev libcurl4-openssl-dev libssl-dev nlohmann-json3-dev libcli11-dev libpcre2-dev libcairo2-dev
thrift-compiler libthrift-dev libboost-dev libzstd-dev libcpp-httplib-dev"
# What only the tests (and bench/run) need: add test-only packages here.
TEST_PKGS="libgtest-dev libgmock-dev python3 python3-numpy python3-pandas python3-protobuf time clang
libclang-rt-14-dev libbenchmark-dev chromium chromium-driver python3-selenium clang-format"

pkgs=$PRODUCT_PKGS
[ $tests = OFF ] || pkgs="$pkgs $TEST_PKGS"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
# Node.js installs uPlot (and, for the tests, runs s3rver and DuckDB); a machine may already have
# its own node/npm (Debian's npm would conflict).
command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

# uPlot (web/package.json): trialdb serve's charts.
if [ ! -f web/node_modules/uplot/dist/uPlot.iife.min.js ]; then
  (cd web && npm install --no-audit --no-fund --silent)
fi
if [ $tests = ON ]; then
  # s3rver: a real S3-speaking server on loopback for the S3 tests (tests/ingest/source/s3/package.json).
  if [ -f tests/ingest/source/s3/package.json ] && [ ! -d tests/ingest/source/s3/node_modules/s3rver ]; then
    (cd tests/ingest/source/s3 && npm install --no-audit --no-fund --silent) || echo "warning: s3rver not installed; S3 tests will fail" >&2
  fi
  # DuckDB (libduckdb with Parquet built in): it reads back what `trialdb export` and the Parquet
  # writer write (tests/duckdb/package.json).
  if [ -f tests/duckdb/package.json ] && [ ! -d tests/duckdb/node_modules/@duckdb/node-api ]; then
    (cd tests/duckdb && npm install --no-audit --no-fund --silent) || echo "warning: DuckDB not installed; the export tests will fail" >&2
  fi
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" -DTRIALDB_TESTS=$tests -DTRIALDB_BENCH=OFF \
  -DTRIALDB_WERROR=ON "$@" >/dev/null
cmake --build build -j"$(nproc)"
