# A configuration and its share link estimate the same (ctest: cmake -P run_link_matches.cmake).
#   -DEXE=<megamem>   the binary
#   -DARGS=a@@b       configuration options, e.g. --recipe@@deepseek-v3-h800-2048
# Runs `megamem url encode ARGS` for the link, then `megamem estimate ARGS --json` and
# `megamem estimate --url LINK --json`, and fails unless both print the same link and every
# pipeline rank has the same static and peak bytes.
cmake_minimum_required(VERSION 3.22)
string(REPLACE "@@" ";" args "${ARGS}")
set(base --base-url https://megamem.test/)

execute_process(COMMAND "${EXE}" url encode ${args} ${base}
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE link ERROR_VARIABLE err
                OUTPUT_STRIP_TRAILING_WHITESPACE)
message("link: ${link}")
if(NOT exit_code STREQUAL "0" OR NOT link MATCHES "^https://megamem\\.test/\\?v=1&")
  message(FATAL_ERROR "url encode failed (${exit_code}): ${err}")
endif()

foreach(run direct linked)
  if(run STREQUAL "direct")
    set(command "${EXE}" estimate ${args} --json ${base})
  else()
    set(command "${EXE}" estimate --url "${link}" --json ${base})
  endif()
  execute_process(COMMAND ${command} RESULT_VARIABLE exit_code OUTPUT_VARIABLE out_${run}
                  ERROR_VARIABLE err)
  if(NOT exit_code STREQUAL "0")
    message(FATAL_ERROR "${run} estimate failed (${exit_code}): ${err}")
  endif()
  string(JSON link_${run} GET "${out_${run}}" link)
  string(JSON ranks_${run} LENGTH "${out_${run}}" ranks)
endforeach()

if(NOT link_direct STREQUAL link OR NOT link_linked STREQUAL link)
  message(FATAL_ERROR "links differ:\n  encode ${link}\n  direct ${link_direct}\n  linked ${link_linked}")
endif()
if(NOT ranks_direct EQUAL ranks_linked OR ranks_direct EQUAL 0)
  message(FATAL_ERROR "rank counts differ: ${ranks_direct} vs ${ranks_linked}")
endif()
math(EXPR last "${ranks_direct} - 1")
foreach(i RANGE ${last})
  foreach(key static_bytes peak_allocated_bytes peak_total_bytes)
    string(JSON a GET "${out_direct}" ranks ${i} ${key})
    string(JSON b GET "${out_linked}" ranks ${i} ${key})
    if(NOT a STREQUAL b)
      message(FATAL_ERROR "rank ${i} ${key}: ${a} from the options, ${b} from the link")
    endif()
  endforeach()
endforeach()
message("${ranks_direct} ranks agree")
