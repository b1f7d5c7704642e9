# Regenerates the validation report and compares it with the committed docs/validation.md
# (ctest: cmake -P). -DEXE=<megamem> -DREPORT=<scratch path> -DCOMMITTED=<docs/validation.md>
cmake_minimum_required(VERSION 3.22)
execute_process(COMMAND "${EXE}" validate --report "${REPORT}" RESULT_VARIABLE exit_code
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
