#!/usr/bin/env bash
# Builds everything and runs every test:
#   - the WebAssembly build (preset web-release): the page and the Catch2 unit tests, which
#     ctest runs under node (CMAKE_CROSSCOMPILING_EMULATOR);
#   - the native build (preset native-release, or $MEGAMEM_NATIVE_PRESET): the CLI and the
#     unit, CLI and browser end-to-end tests (headless Chromium against build/web-release/site)
#     and the function-length check;
#   - the sanitizer build (preset native-asan: clang, AddressSanitizer + UndefinedBehaviorSanitizer
#     and libFuzzer instrumentation) of the CLI, the unit-test binary and the fuzz harnesses: the
#     unit and CLI tests run on it, and the libFuzzer runs of every decoder (no browser or
#     benchmark tests). One instrumented build serves both, where a separate fuzzing build of
#     the core used to cost as much again.
# What CI runs (.ci/run, .github/workflows). A failing build or suite does not stop the others;
# the exit status is non-zero when anything failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
native_preset="${MEGAMEM_NATIVE_PRESET:-native-release}"
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
started_s=$SECONDS

step_s=$SECONDS
scripts/setup.sh
echo "test: setup took $((SECONDS - step_s)) s"

failures=()
# The page first: the native ctest run includes the e2e test, which opens it.
for preset in web-release "$native_preset"; do
  if ! scripts/build.sh "$preset"; then
    failures+=("build $preset")
  fi
done

for preset in web-release "$native_preset"; do
  step_s=$SECONDS
  echo
  echo "=== ctest --preset $preset ==="
  # --parallel: the tests are independent; the e2e test takes longest and overlaps the rest.
  if ! ctest --preset "$preset" --parallel "$(nproc)"; then
    failures+=("ctest $preset")
  fi
  echo "test: ctest $preset took $((SECONDS - step_s)) s"
done

# The Python module as a user installs it: pip into a venv over Debian's python3 (offline:
# setuptools and pybind11 come from Debian), then its pytest suite against the installed copy.
step_s=$SECONDS
echo
echo "=== python: pip install ./python and pytest ==="
venv=build/python-venv
rm -rf "$venv"
if ! { /usr/bin/python3 -m venv --system-site-packages --without-pip "$venv" &&
       MEGAMEM_BUILD_DIR="$PWD/build/$native_preset" "$venv/bin/python" -m pip install -q \
         --no-build-isolation --no-index ./python &&
       (cd build && MEGAMEM_CLI="$PWD/$native_preset/cli/megamem" \
          "../$venv/bin/python" -m pytest -q -p no:cacheprovider ../python/tests); }; then
  failures+=("python module")
fi
rm -rf python/build python/*.egg-info
echo "test: python module took $((SECONDS - step_s)) s"

# ASan + UBSan over the unit and CLI tests (issue 11: no sanitizer report) and the fuzz runs.
# Only the targets they need are built; the e2e and function-length tests are not repeated.
if [[ "$native_preset" != native-asan ]]; then
  step_s=$SECONDS
  echo
  echo "=== native-asan: unit, CLI and fuzz tests ==="
  if ! { cmake --preset native-asan --log-level=WARNING &&
         cmake --build --preset native-asan --target megamem megamem_unit_tests fuzz_harnesses; }; then
    failures+=("build native-asan")
  elif ! ctest --preset native-asan --parallel "$(nproc)" -R '^(unit_tests|cli_|fuzz_)'; then
    failures+=("ctest native-asan")
  fi
  echo "test: native-asan build and tests took $((SECONDS - step_s)) s"
fi

echo
echo "test: total $((SECONDS - started_s)) s; e2e screenshots in build/e2e-artifacts/"
if ((${#failures[@]})); then
  echo "test: FAILED: ${failures[*]}"
  exit 1
fi
echo "test: everything passed"
