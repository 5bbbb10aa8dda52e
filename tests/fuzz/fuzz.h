/*
 * What every fuzz target shares: the libFuzzer entry point it defines and
 * CHECK, an oracle that aborts (libFuzzer and fuzz_main.c then report the
 * input) whatever the build type.
 */
#ifndef SHOAL_TEST_FUZZ_H
#define SHOAL_TEST_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond))                                                         \
            abort();                                                         \
    } while (0)

#endif /* SHOAL_TEST_FUZZ_H */
