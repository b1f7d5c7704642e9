#!/usr/bin/env bash
# Builds the page and the native CLI and benchmark, then times the page in headless Chromium
# next to a bare WebGL2 page (tests/benchmark/browser_benchmark.mjs) and the same full
# estimates natively (Google Benchmark, page_full_estimate); docs/performance.md reads them.
# usage: scripts/browser_benchmark.sh [--runs N] [--trace FILE] [--json FILE]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
scripts/build.sh native-release web-release
build/native-release/tests/benchmark/megamem_benchmark --benchmark_filter=page_full_estimate
exec node tests/benchmark/browser_benchmark.mjs --site build/web-release/site \
  --cli build/native-release/cli/megamem "$@"
