# The one Emscripten block: settings every wasm target shares, and the system header folders
# emcc may see. Included by dependencies.cmake when the Emscripten toolchain is active.
#
# Debian's emscripten 3.1.6 ships a frozen, prebuilt system-library cache; ports that download
# (SDL2, ...) are unavailable, GLFW (a JS library) works offline. Its JS optimizer resolves
# acorn from Debian's node modules: builds run with NODE_PATH=/usr/share/nodejs (the
# web-release preset sets it; scripts/*.sh export it).

# Unit tests run under node (ctest prefixes CMAKE_CROSSCOMPILING_EMULATOR) and must hand
# main()'s return code to ctest; the web app overrides this with -sEXIT_RUNTIME=0.
add_link_options(-sALLOW_MEMORY_GROWTH=1 -sEXIT_RUNTIME=1)
# Emscripten 3.1.6 loads the .wasm with fetch() whenever fetch exists, which node >= 18 has
# but cannot use on file paths; without it the loader reads the file from disk.
find_program(MEGAMEM_NODE_EXECUTABLE NAMES node nodejs REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR "${MEGAMEM_NODE_EXECUTABLE};--no-experimental-fetch")

# Folder of symlinks to chosen /usr/include subfolders, the only system headers emcc sees.
set(MEGAMEM_SYSTEM_INCLUDE_DIR "${CMAKE_BINARY_DIR}/sysinc")
file(MAKE_DIRECTORY "${MEGAMEM_SYSTEM_INCLUDE_DIR}")

# megamem_system_header_folder(<folder> <header>): links sysinc/<folder> to the system folder
# that holds <header> (e.g. nlohmann nlohmann/json.hpp -> /usr/include/nlohmann).
function(megamem_system_header_folder folder header)
  find_path(include_root_${folder} "${header}" PATHS /usr/include /usr/local/include
            NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH REQUIRED)
  set(link "${MEGAMEM_SYSTEM_INCLUDE_DIR}/${folder}")
  if(NOT EXISTS "${link}")
    file(CREATE_LINK "${include_root_${folder}}/${folder}" "${link}" SYMBOLIC)
  endif()
endfunction()

# megamem_optimize_for_size(<target>...): compiles the targets at -Oz in optimised builds. The
# page's bundle is mostly code that runs once a frame or once an input (ImGui, the panels,
# the message table, the text formats, yaml-cpp); the estimator (megamem_core) keeps -O3,
# since the planner and the what-if table call it thousands of times (docs/performance.md,
# "-O3 core, -Oz rest": bundle -19 %, estimator speed unchanged).
function(megamem_optimize_for_size)
  foreach(target IN LISTS ARGN)
    if(TARGET ${target})
      target_compile_options(${target} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-Oz>)
    endif()
  endforeach()
endfunction()
