# Third-party dependencies, all from the system (Debian packages), never vendored.
# Provides the targets nlohmann_json::nlohmann_json and Catch2::Catch2 on every platform, and
# puts Catch2's Catch.cmake (catch_discover_tests) on CMAKE_MODULE_PATH.
#
# Natively find_package() finds Debian's CMake configs. Under Emscripten the toolchain confines
# find_package() to the Emscripten sysroot, and /usr/include must never reach emcc (glibc
# headers would shadow musl's), so cmake/emscripten.cmake exposes just the two header folders
# through symlinks and we wrap them in INTERFACE targets here.
if(EMSCRIPTEN)
  include(emscripten)
  megamem_system_header_folder(nlohmann nlohmann/json.hpp)
  megamem_system_header_folder(catch2 catch2/catch.hpp)

  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED GLOBAL)
  target_include_directories(nlohmann_json::nlohmann_json SYSTEM INTERFACE
                             ${MEGAMEM_SYSTEM_INCLUDE_DIR})

  add_library(Catch2::Catch2 INTERFACE IMPORTED GLOBAL)
  target_include_directories(Catch2::Catch2 SYSTEM INTERFACE ${MEGAMEM_SYSTEM_INCLUDE_DIR})
  # Catch2 reports failed REQUIREs by throwing; Emscripten only catches with -fexceptions.
  target_compile_options(Catch2::Catch2 INTERFACE -fexceptions)
  target_link_options(Catch2::Catch2 INTERFACE -fexceptions)

  find_file(MEGAMEM_CATCH_CMAKE Catch.cmake PATHS /usr/lib/cmake/Catch2 /usr/share/cmake/Catch2
            /usr/lib/x86_64-linux-gnu/cmake/Catch2 NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  if(MEGAMEM_CATCH_CMAKE)
    get_filename_component(catch2_cmake_dir "${MEGAMEM_CATCH_CMAKE}" DIRECTORY)
    list(APPEND CMAKE_MODULE_PATH "${catch2_cmake_dir}")
  endif()
else()
  find_package(nlohmann_json 3 REQUIRED)
  if(BUILD_TESTING OR NOT DEFINED BUILD_TESTING)
    find_package(Catch2 2 REQUIRED)
    list(APPEND CMAKE_MODULE_PATH "${Catch2_DIR}")
  endif()
endif()
