# megamem estimate --snapshot, then check_snapshot.py against the same estimate's JSON numbers.
#   -DEXE=<megamem> -DPYTHON=<python3> -DSNAPSHOT=<file> -DCHECKER=<check_snapshot.py>
#   -DFLAGS=<Megatron flags>
cmake_minimum_required(VERSION 3.22)
file(REMOVE "${SNAPSHOT}")
execute_process(COMMAND "${EXE}" estimate --megatron-args "${FLAGS}" --world-size 8 --json
                        --snapshot "${SNAPSHOT}" --rank 1
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT exit_code STREQUAL "0")
  message(FATAL_ERROR "megamem failed (${exit_code}): ${err}")
endif()
string(JSON peak GET "${out}" ranks 1 peak_allocated_bytes)
string(JSON static GET "${out}" ranks 1 static_bytes)
execute_process(COMMAND "${PYTHON}" "${CHECKER}" "${SNAPSHOT}" ${peak} ${static}
                RESULT_VARIABLE check_code OUTPUT_VARIABLE check_out ERROR_VARIABLE check_err)
message("${check_out}${check_err}")
if(NOT check_code STREQUAL "0")
  message(FATAL_ERROR "the snapshot does not have the documented structure")
endif()
