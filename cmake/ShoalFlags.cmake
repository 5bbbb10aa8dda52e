# Compiler flags shared by every target: warnings, hardening, sanitizers.

set(SHOAL_WARNINGS
    -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wpointer-arith -Wformat=2 -Wvla -Wundef -Wno-unused-parameter)
if(SHOAL_WERROR)
    list(APPEND SHOAL_WARNINGS -Werror)
endif()
add_compile_options(${SHOAL_WARNINGS} -fno-strict-aliasing)

if(SHOAL_SANITIZE)
    add_compile_options(-fsanitize=${SHOAL_SANITIZE} -fno-omit-frame-pointer
                        -fno-sanitize-recover=all)
    add_link_options(-fsanitize=${SHOAL_SANITIZE})
endif()

# clang, unlike gcc, does not link the sanitizer runtime into shared
# libraries: a sanitized libshoal.so leaves the __asan_*/__ubsan_* symbols to
# the executable that loads it, which -Wl,--no-undefined (src/CMakeLists.txt)
# refuses.  `-z undefs` allows them again; it must come after that option,
# and the shared-library creation flags are the part of the link line that
# does.  (clang's -shared-libsan would avoid this but breaks libFuzzer
# targets: "ASan runtime does not come first in initial library list".)
if(SHOAL_SANITIZE AND CMAKE_C_COMPILER_ID MATCHES "Clang")
    string(APPEND CMAKE_SHARED_LIBRARY_CREATE_C_FLAGS " -Wl,-z,undefs")
endif()
