#!/usr/bin/env bash
# Installs every build and test dependency from Debian packages (uPlot from npm for trialdb serve's
# charts, s3rver and DuckDB from npm for the S3 and export tests), then configures and builds
# trialdb into ./build. Safe to run again.
# Arguments are passed to cmake's configure step: the benchmarks are off unless asked for
# (scripts/setup.sh -DTRIALDB_BENCH=ON; bench/run builds its own Release tree with them), and
# scripts/test.sh adds -DTRIALDB_WERROR=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
PKGS="build-essential cmake pkg-config git time sqlite3 libsqlite3-dev libprotobuf-dev protobuf-compiler
zlib1g-dev libcurl4-openssl-dev libssl-dev nlohmann-json3-dev libcli11-dev libpcre2-dev libgtest-dev libgmock-dev
libbenchmark-dev python3 python3-numpy python3-pandas python3-protobuf clang libclang-rt-14-dev libcairo2-dev
thrift-compiler libthrift-dev libboost-dev libzstd-dev"
PKGS="$PKGS libcpp-httplib-dev"                          # product: trialdb serve's HTTP server
PKGS="$PKGS chromium chromium-driver python3-selenium"   # test: trialdb serve in a real browser
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
# Node.js runs s3rver; a machine may already have its own node/npm (Debian's npm would conflict).
command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi
# s3rver: a real S3-speaking server on loopback for the S3 tests (tests/ingest/source/s3/package.json).
if [ -f tests/ingest/source/s3/package.json ] && [ ! -d tests/ingest/source/s3/node_modules/s3rver ]; then
  (cd tests/ingest/source/s3 && npm install --no-audit --no-fund --silent) || echo "warning: s3rver not installed; S3 tests will fail" >&2
fi
# DuckDB (libduckdb with Parquet built in), for the tests only: it reads back what `trialdb export`
# and the Parquet writer write (tests/duckdb/package.json).
if [ -f tests/duckdb/package.json ] && [ ! -d tests/duckdb/node_modules/@duckdb/node-api ]; then
  (cd tests/duckdb && npm install --no-audit --no-fund --silent) || echo "warning: DuckDB not installed; the export tests will fail" >&2
fi
# product: uPlot (web/package.json), trialdb serve's charts, embedded into the binary at build time.
if [ ! -f web/node_modules/uplot/dist/uPlot.iife.min.js ]; then
  (cd web && npm install --no-audit --no-fund --silent)
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} -DTRIALDB_BENCH=OFF "$@" >/dev/null
cmake --build build -j"$(nproc)"
