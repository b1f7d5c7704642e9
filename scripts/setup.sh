#!/usr/bin/env bash
# Installs what building and testing megamem needs, on Debian 12 (bookworm), idempotently:
# Debian packages (Emscripten, Catch2, nlohmann-json, Chromium, ...), the sources of Dear ImGui
# and yaml-cpp (Debian source packages, into the git-ignored third_party/imgui and
# third_party/yaml-cpp) and the npm packages of package-lock.json (playwright-core, which
# drives the system Chromium; no browser download).
# Fast when everything is present: apt-get runs only when a package is missing.
# usage: scripts/setup.sh [--no-browser]   (--no-browser: only what building needs, e.g. Pages)
set -euo pipefail
with_browser=true
[[ "${1:-}" == "--no-browser" ]] && with_browser=false
repo_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_dir"

# Run privileged commands directly as root, through sudo otherwise (GitHub runners, laptops).
as_root() {
  if [[ $(id -u) -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    echo "setup: need root (or sudo) to run: $*" >&2
    exit 1
  fi
}

# Tools that may come from elsewhere (e.g. Node.js from NodeSource bundles npm): installed
# from Debian only when the command is missing. "command:package".
tool_packages=(cmake:cmake g++:g++ ninja:ninja-build python3:python3 git:git)
apt_packages=(
  emscripten          # emcc 3.1.6 (clang-14, lld, binaryen, node-acorn)
  catch2              # Catch2 2.13, header catch2/catch.hpp
  nlohmann-json3-dev  # nlohmann/json.hpp
  libyaml-cpp-dev     # Megatron-Bridge run_config.yaml (core megamem_bridge_yaml, native builds)
  dpkg-dev            # apt-get source (Dear ImGui and yaml-cpp sources)
  clang-format
  universal-ctags     # tests/function_length: lists functions with their first and last lines
  libbenchmark-dev    # tests/benchmark (Google Benchmark)
  clang               # tests/fuzz: libFuzzer harnesses on the link and config.json decoders
  libclang-rt-dev     # ... their fuzzer and sanitizer runtimes (only recommended by clang)
  fonts-roboto-unhinted  # the web page's UI font, compiled in (web/CMakeLists.txt)
  fonts-noto-cjk      # the page's Chinese font (Noto Sans CJK SC), subset at build time ...
  python3-fonttools   # ... by pyftsubset to the message table's characters (web/messages)
  pybind11-dev        # python/: the Python module megamem (pybind11 headers and CMake config)
  python3-pybind11    # ... and its Python half, for pip install --no-build-isolation
  python3-dev         # ... Python headers
  python3-pytest      # python/tests
  python3-pip         # pip install ./python into a venv
  python3-venv        # ... the venv (Debian's python3 is externally managed)
  ca-certificates
)
if [[ $with_browser == true ]]; then
  tool_packages+=(node:nodejs npm:npm)  # the e2e test runs under node with playwright-core
  apt_packages+=(chromium)              # headless browser for tests/e2e
fi

is_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

missing_packages=()
for tool_package in "${tool_packages[@]}"; do
  command -v "${tool_package%%:*}" >/dev/null || missing_packages+=("${tool_package#*:}")
done
for package in "${apt_packages[@]}"; do
  is_installed "$package" || missing_packages+=("$package")
done

apt_updated=false
if ((${#missing_packages[@]})); then
  echo "setup: installing ${missing_packages[*]}"
  as_root apt-get update -qq
  apt_updated=true
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing_packages[@]}"
fi

# apt-get source needs deb-src entries: mirror the machine's deb entries (same URIs and suites),
# in a file of our own so the machine's own file stays untouched. Runs once, when needed.
deb_src_ready=false
enable_deb_src() {
  [[ $deb_src_ready == true ]] && return
  deb_src_file=/etc/apt/sources.list.d/megamem-deb-src.sources
  if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ &&
     ! grep -qs '^deb-src' /etc/apt/sources.list; then
    if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
      sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
        as_root tee "$deb_src_file" >/dev/null
    elif [[ -f /etc/apt/sources.list ]]; then
      grep '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' |
        as_root tee /etc/apt/sources.list.d/megamem-deb-src.list >/dev/null
    fi
    apt_updated=false
  fi
  if [[ $apt_updated == false ]]; then as_root apt-get update -qq; fi
  apt_updated=true
  deb_src_ready=true
}

# Unpacks Debian's source package SOURCE (the version Debian tested, its patches applied) into
# third_party/DIR unless third_party/DIR/MARKER is there. usage: unpack_source SOURCE DIR MARKER
unpack_source() {
  local source=$1 target_dir="$repo_dir/third_party/$2" marker=$3
  [[ -f "$target_dir/$marker" ]] && return
  enable_deb_src
  local download_dir
  download_dir="$(mktemp -d)"
  (cd "$download_dir" && apt-get source -qq "$source" >/dev/null 2>&1 ||
     (cd "$download_dir" && apt-get source "$source"))
  local source_dir
  source_dir="$(find "$download_dir" -mindepth 1 -maxdepth 1 -type d -name "$source-*" | head -1)"
  mkdir -p "$repo_dir/third_party"
  rm -rf "$target_dir"
  mv "$source_dir" "$target_dir"
  rm -rf "$download_dir"
  echo "setup: $source sources in third_party/$2"
}

# Dear ImGui: libimgui-dev ships no .cpp files. CMake picks it up as IMGUI_DIR.
unpack_source imgui imgui imgui.cpp
# yaml-cpp for the WebAssembly page (the Megatron-Bridge run_config.yaml importer): native
# builds link libyaml-cpp-dev; Emscripten compiles these sources (cmake/yaml_cpp_web.cmake).
unpack_source yaml-cpp yaml-cpp src/parser.cpp

# playwright-core from package-lock.json into ./node_modules; it never downloads a browser.
if [[ $with_browser == false ]]; then exit 0; fi
if [[ ! -f node_modules/playwright-core/package.json ]] ||
   [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
fi
