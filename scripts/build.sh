#!/usr/bin/env bash
# Configures and builds one CMake preset into build/<preset>: scripts/build.sh <preset>...
# (presets: native-debug, native-release, native-asan, web-release; see CMakePresets.json).
# Assumes scripts/setup.sh has run. Prints how long each build took.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Debian's emscripten runs its JS optimizer with node and needs Debian's acorn module.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}

for preset in "$@"; do
  started_s=$SECONDS
  cmake --preset "$preset" --log-level=WARNING
  cmake --build --preset "$preset"
  echo "build: $preset built in $((SECONDS - started_s)) s"
done
