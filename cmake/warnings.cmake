# Strict warnings for megamem's own targets: megamem_set_warnings(<target> [CONVERSION]).
# CONVERSION adds -Wconversion (the core keeps byte arithmetic free of silent narrowing).
function(megamem_set_warnings target)
  cmake_parse_arguments(ARG "CONVERSION" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wshadow -Wnon-virtual-dtor)
  # GCC 12 reports -Wrestrict inside libstdc++'s std::string at -O2/-O3 for correct code
  # (GCC bug 105651, fixed in GCC 13); Debian 12's g++ is 12, and Release builds hit it.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(ARG_CONVERSION)
    target_compile_options(${target} PRIVATE -Wconversion -Wsign-conversion)
  endif()
endfunction()
