/*
 * What the collective tests add to mpitest.h: a check whose message takes
 * printf arguments.  (mpitest.h's MT_CHECK puts the condition's text after
 * the caller's arguments, so its format only works without arguments.)
 */
#ifndef SHOAL_COLL_TEST_H
#define SHOAL_COLL_TEST_H

#include "mpitest.h"

#define CT_CHECK(cond, ...)                                                  \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "check failed: %s\n", #cond);                    \
            MT_FAIL(__VA_ARGS__);                                            \
        }                                                                    \
    } while (0)

#endif
