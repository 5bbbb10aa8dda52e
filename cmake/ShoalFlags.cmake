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
