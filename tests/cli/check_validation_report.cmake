# Regenerates the validation report and the verdict's error bands and compares them with the
# committed docs/validation.md and core/src/error_bands.inc (ctest: cmake -P).
# -DEXE=<megamem> -DREPORT=<scratch path> -DCOMMITTED=<docs/validation.md>
# -DBANDS=<scratch path> -DCOMMITTED_BANDS=<core/src/error_bands.inc>
cmake_minimum_required(VERSION 3.22)
execute_process(COMMAND "${EXE}" validate --report "${REPORT}" --bands "${BANDS}" RESULT_VARIABLE exit_code
                OUTPUT_QUIET)
if(NOT exit_code STREQUAL "0")
  message(FATAL_ERROR "megamem validate failed with exit ${exit_code}")
endif()
file(READ "${REPORT}" fresh)
file(READ "${COMMITTED}" committed)
# The report names the cases file it read; only that line may differ.
string(REGEX REPLACE "from `[^`]*`" "from `CASES`" fresh "${fresh}")
string(REGEX REPLACE "from `[^`]*`" "from `CASES`" committed "${committed}")
if(NOT fresh STREQUAL committed)
  message(FATAL_ERROR "docs/validation.md is stale: run `megamem validate --report docs/validation.md`")
endif()
file(READ "${BANDS}" fresh_bands)
file(READ "${COMMITTED_BANDS}" committed_bands)
if(NOT fresh_bands STREQUAL committed_bands)
  message(FATAL_ERROR "core/src/error_bands.inc is stale: run `megamem validate --bands core/src/error_bands.inc`")
endif()
