# yaml-cpp for the WebAssembly build: target `yaml-cpp` (the name Debian's libyaml-cpp-dev
# config gives natively), compiled from Debian's source package, which scripts/setup.sh unpacks
# (patches applied) into the git-ignored third_party/yaml-cpp. No yaml-cpp source is committed.
#
# Only the reader is used (core/src/formats/bridge_yaml.cpp: YAML::Parser and its event
# handler); the emitter and node sources are compiled too and left out by the linker.
# yaml-cpp reports syntax errors by throwing YAML::ParserException, which bridge_yaml.cpp turns
# into an Error: Emscripten catches exceptions only in code built with -fexceptions, and only
# when the final link enables it (the link option below travels to whatever links yaml-cpp).
set(YAML_CPP_DIR "${PROJECT_SOURCE_DIR}/third_party/yaml-cpp" CACHE PATH
    "yaml-cpp source folder (holds src/parser.cpp)")
if(NOT EXISTS "${YAML_CPP_DIR}/src/parser.cpp")
  message(FATAL_ERROR "YAML_CPP_DIR=${YAML_CPP_DIR} has no src/parser.cpp: run scripts/setup.sh "
                      "(it unpacks Debian's yaml-cpp source package there)")
endif()
message(STATUS "yaml-cpp from ${YAML_CPP_DIR}")

file(GLOB yaml_cpp_sources CONFIGURE_DEPENDS ${YAML_CPP_DIR}/src/*.cpp)
add_library(yaml-cpp STATIC ${yaml_cpp_sources})
# SYSTEM: third-party code, so our -Werror never judges its headers.
target_include_directories(yaml-cpp SYSTEM PUBLIC ${YAML_CPP_DIR}/include)
target_include_directories(yaml-cpp PRIVATE ${YAML_CPP_DIR}/src)
target_compile_options(yaml-cpp PUBLIC -fexceptions)
# Read once per paste, never in a frame: optimised for size (a smaller download).
target_compile_options(yaml-cpp PRIVATE -Os)
target_link_options(yaml-cpp INTERFACE -fexceptions)
