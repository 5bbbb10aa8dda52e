/*
 * The death notice's arguments (AM_SYS_DEAD, am_tell.c): which ranks a
 * notice names.  Pure (no state, no allocation), so the fuzz target
 * (tests/fuzz/fuzz_am_notice.c) builds it alone.
 *
 * Two forms, told apart by the argument count:
 *   1 argument     the single-rank form: args[0] is the rank (a rank's
 *                  own death told to it, fail-stop, names only it)
 *   2 to 5         the set form, version 1: args[0] is a header,
 *                  AM_NOTICE_V1 in bits 63..56, bits 55..32 zero, and in
 *                  bits 31..0 the word w0 of the rank bitmap the set
 *                  starts at; args[1..k] are k words of that bitmap,
 *                  ranks w0 * 64 + 64 * i + bit (a window of up to 256
 *                  ranks: a host's ranks in blocks fit in one)
 * A notice is taken only when every rank it names is a rank of the job
 * and it names at least one; anything else is malformed (dropped, logged).
 */
#ifndef SHOAL_AM_NOTICE_H
#define SHOAL_AM_NOTICE_H

#include <stdint.h>

#define AM_NOTICE_V1 0xd1u   /* the set form's tag and version */
#define AM_NOTICE_WORDS 4u   /* bitmap words in one notice, at most */

typedef struct am_notice {
    uint32_t w0;                     /* first bitmap word */
    unsigned nwords;                 /* 1..AM_NOTICE_WORDS */
    uint64_t bits[AM_NOTICE_WORDS];  /* ranks w0 * 64 on */
} am_notice_t;

/* The next notice's window of the bitmap dead (words words) from word *w
 * on: 1 and n filled (its first and last words not zero), *w past it; 0
 * when no rank is left from *w on. */
int am_notice_next(const uint64_t *dead, uint32_t words, uint32_t *w,
                   am_notice_t *n);

/* n as arguments of the set form; returns their count (2..5). */
unsigned am_notice_encode(const am_notice_t *n, uint64_t *args);

/* The ranks a notice of nargs arguments names, in a job of size ranks:
 * 1 and n filled (the single-rank form as a one-word window), 0 when it
 * is malformed. */
int am_notice_decode(const uint64_t *args, unsigned nargs, int size,
                     am_notice_t *n);

/* Does n name rank? */
int am_notice_has(const am_notice_t *n, int rank);

#endif /* SHOAL_AM_NOTICE_H */
