/*
 * PMI-2 wire format (see ../shared/notes/launchers.md §2.2), shared by the
 * PMI-2 client and its tests.  After a PMI-1 style "cmd=init pmi_version=2"
 * line, every message is a 6-character decimal length (servers differ:
 * Hydra right-aligns it, Slurm left-aligns it) followed by that many bytes
 * of body "cmd=<name>;key=value;...;".  A ';' inside a value is written
 * doubled (";;"), as the PMI-2 wire description says; keys hold no '=' or
 * ';'.  Everything here is a pure function over caller memory: nothing
 * allocates or does I/O (tests/fuzz/fuzz_pmi2_wire.c feeds it garbage).
 */
#ifndef SHOAL_PMI2_WIRE_H
#define SHOAL_PMI2_WIRE_H

#include <stddef.h>

#include "boot/pmi_wire.h"

/* Width of the length field that precedes every body. */
#define PMI2_HDR_LEN 6
/*
 * Longest body we send or accept.  Far above any reply we ask for (a value
 * is at most 1023 characters under Hydra, a few thousand under Slurm) and
 * far below the 999999 the header could say, so a corrupt header is caught.
 */
#define PMI2_BODY_MAX 8192
/* More tokens than any PMI-2 message has; the rest is rejected. */
#define PMI2_TOKENS_MAX 32

/* A parsed body.  The tokens point into buf (values unescaped). */
typedef struct pmi2_msg {
    char buf[PMI2_BODY_MAX + 1];
    const char *cmd;
    int ntokens;
    pmi_token_t tokens[PMI2_TOKENS_MAX];
} pmi2_msg_t;

/*
 * The body length in a 6-byte header: decimal digits with spaces before or
 * after (not between).  SHOAL_ERR_PROTOCOL when it is anything else, 0, or
 * more than PMI2_BODY_MAX.
 */
int pmi2_parse_header(const char *hdr, size_t *len_p);

/*
 * Parse one body of len bytes.  SHOAL_ERR_PROTOCOL with a detail when it is
 * empty, too long, holds a control byte, a token without '=' or with an
 * empty key, a repeated key, too many tokens, or no cmd.  The final ';' may
 * be missing (lenient, as servers differ in small ways).
 */
int pmi2_parse(pmi2_msg_t *msg, const char *body, size_t len);

/* The value of key, or NULL when the message has none. */
const char *pmi2_get(const pmi2_msg_t *msg, const char *key);

/*
 * The integer value of key.  SHOAL_ERR_NOT_FOUND when absent,
 * SHOAL_ERR_PROTOCOL when not a decimal integer.
 */
int pmi2_get_long(const pmi2_msg_t *msg, const char *key, long *out);

/*
 * A boolean: 1 for TRUE, 0 for FALSE (any case), def when key is absent,
 * -1 when the value is something else.
 */
int pmi2_get_bool(const pmi2_msg_t *msg, const char *key, int def);

/* The reply's rc: 0 when absent, else its value (-1 when not an integer). */
long pmi2_rc(const pmi2_msg_t *msg);

/*
 * Builds one framed message (header + body).  Errors stick: after a failed
 * add, pmi2_fmt_end returns the first error, so callers check once.
 */
typedef struct pmi2_fmt {
    char buf[PMI2_HDR_LEN + PMI2_BODY_MAX + 1]; /* + NUL */
    size_t len;
    int status;
} pmi2_fmt_t;

void pmi2_fmt_init(pmi2_fmt_t *f, const char *cmd);
/* Add key=value; (';' in value doubled). */
void pmi2_fmt_add(pmi2_fmt_t *f, const char *key, const char *value);
void pmi2_fmt_add_long(pmi2_fmt_t *f, const char *key, long value);
/*
 * Write the length header.  SHOAL_ERR_TOO_LARGE when the body exceeds
 * PMI2_BODY_MAX, SHOAL_ERR_INVALID for a bad key or value.  The message is
 * buf[0..len).
 */
int pmi2_fmt_end(pmi2_fmt_t *f);

#endif /* SHOAL_PMI2_WIRE_H */
