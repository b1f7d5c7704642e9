#!/usr/bin/env bash
# Builds everything and runs every test:
#   - the WebAssembly build (preset web-release): the page and the Catch2 unit tests, which
#     ctest runs under node (CMAKE_CROSSCOMPILING_EMULATOR);
#   - the native build (preset native-release, or $MEGAMEM_NATIVE_PRESET): the CLI and the
#     unit, CLI and browser end-to-end tests (headless Chromium against build/web-release/site).
# What CI runs (.ci/run, .github/workflows). Exit status: non-zero when any test failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
native_preset="${MEGAMEM_NATIVE_PRESET:-native-release}"
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
export CTEST_OUTPUT_ON_FAILURE=1
started_s=$SECONDS

step_s=$SECONDS
scripts/setup.sh
echo "test: setup took $((SECONDS - step_s)) s"

# The page first: the native ctest run includes the e2e test, which opens it.
scripts/build.sh web-release "$native_preset"

failed_suites=()
run_ctest() {
  local preset="$1" step_s=$SECONDS
  echo
  echo "=== ctest --preset $preset ==="
  # --parallel: tests are independent; the e2e test takes longest and overlaps the rest.
  if ! ctest --preset "$preset" --parallel "$(nproc)"; then
    failed_suites+=("$preset")
  fi
  echo "test: ctest $preset took $((SECONDS - step_s)) s"
}
run_ctest web-release
run_ctest "$native_preset"

echo
echo "test: total $((SECONDS - started_s)) s; screenshots in build/e2e-artifacts/"
if ((${#failed_suites[@]})); then
  echo "test: FAILED in ${failed_suites[*]}"
  exit 1
fi
echo "test: all suites passed"
