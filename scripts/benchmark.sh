#!/usr/bin/env bash
# Builds the optimised native preset and times the estimator (tests/benchmark, Google Benchmark).
# usage: scripts/benchmark.sh [benchmark flags, e.g. --benchmark_filter=DeepSeek]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh --no-browser
scripts/build.sh native-release
exec build/native-release/tests/benchmark/megamem_benchmark "$@"
