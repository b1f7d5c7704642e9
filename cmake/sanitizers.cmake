# MEGAMEM_SANITIZE=ON (preset native-asan): AddressSanitizer + UndefinedBehaviorSanitizer on
# every target, and any UB report fails the test that triggered it.
option(MEGAMEM_SANITIZE "Build with -fsanitize=address,undefined" OFF)
if(MEGAMEM_SANITIZE)
  set(megamem_sanitize_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined
                             -fno-omit-frame-pointer)
  add_compile_options(${megamem_sanitize_flags})
  add_link_options(${megamem_sanitize_flags})
endif()
