#!/usr/bin/env bash
# Builds the WebAssembly page (preset web-release) and serves it on http://localhost:PORT.
# usage: scripts/serve.sh [PORT]   (default 8080; also MEGAMEM_PORT)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
port="${1:-${MEGAMEM_PORT:-8080}}"

scripts/setup.sh
scripts/build.sh web-release

site_dir=build/web-release/site
echo
echo "megamem is served at http://localhost:$port/  (Ctrl+C stops the server)"
exec python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site_dir"
