# Strict warnings for megamem's own targets: megamem_set_warnings(<target> [CONVERSION]).
# CONVERSION adds -Wconversion (the core keeps byte arithmetic free of silent narrowing).
function(megamem_set_warnings target)
  cmake_parse_arguments(ARG "CONVERSION" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wshadow -Wnon-virtual-dtor)
  if(ARG_CONVERSION)
    target_compile_options(${target} PRIVATE -Wconversion -Wsign-conversion)
  endif()
endfunction()
