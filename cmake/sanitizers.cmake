# MEGAMEM_SANITIZE=ON (preset native-asan): AddressSanitizer + UndefinedBehaviorSanitizer on
# every target, and any UB report fails the test that triggered it. Under clang with
# libFuzzer's runtime installed (Debian: clang, libclang-rt-dev) every target also gets
# libFuzzer's coverage instrumentation and MEGAMEM_FUZZ turns on, so tests/fuzz/ builds its
# harnesses against the same instrumented core the unit and CLI tests run on.
option(MEGAMEM_SANITIZE "Build with -fsanitize=address,undefined" OFF)
set(MEGAMEM_FUZZ OFF)
if(MEGAMEM_SANITIZE)
  set(megamem_sanitize_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined
                             -fno-omit-frame-pointer)
  add_compile_options(${megamem_sanitize_flags})
  add_link_options(${megamem_sanitize_flags})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND NOT EMSCRIPTEN)
    # The compiler alone is not enough: libFuzzer's runtime ships separately.
    include(CheckCXXSourceCompiles)
    set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer)
    check_cxx_source_compiles(
      "#include <cstddef>\n#include <cstdint>\nextern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }"
      MEGAMEM_HAVE_LIBFUZZER)
    unset(CMAKE_REQUIRED_LINK_OPTIONS)
    if(MEGAMEM_HAVE_LIBFUZZER)
      add_compile_options(-fsanitize=fuzzer-no-link)
      set(MEGAMEM_FUZZ ON)
    endif()
  endif()
endif()
