/*
 * PMI-1 wire format, shared by the client (boot_pmi1.c) and the server in
 * shoalrun.  A message is one line "cmd=<name> key=value ...\n": tokens
 * separated by spaces, each split on its first '=', in any order (servers
 * differ: Hydra puts rc last, Slurm first).  A line, newline included, is at
 * most PMI_LINE_MAX bytes: Slurm loses anything longer, so we neither send
 * nor accept more.  Nothing here allocates.
 */
#ifndef SHOAL_PMI_WIRE_H
#define SHOAL_PMI_WIRE_H

#include <stddef.h>

/* Longest line, '\n' included (Slurm's limit; Hydra accepts more). */
#define PMI_LINE_MAX 1024
/* More tokens than any PMI-1 message has; the rest is rejected. */
#define PMI_TOKENS_MAX 24

typedef struct pmi_token {
    const char *key;
    const char *value;
} pmi_token_t;

/* A parsed line.  The tokens point into buf. */
typedef struct pmi_msg {
    char buf[PMI_LINE_MAX];
    const char *cmd;
    int ntokens;
    pmi_token_t tokens[PMI_TOKENS_MAX];
} pmi_msg_t;

/*
 * Parse one line of len bytes (a trailing '\n' is optional and not counted
 * as content).  SHOAL_ERR_PROTOCOL with a detail when the line is empty, too
 * long, holds a control character, a token without '=' or with an empty
 * key, a repeated key, too many tokens, or no cmd.
 */
int pmi_parse(pmi_msg_t *msg, const char *line, size_t len);

/* The value of key, or NULL when the message has none. */
const char *pmi_get(const pmi_msg_t *msg, const char *key);

/*
 * The integer value of key.  SHOAL_ERR_NOT_FOUND when absent,
 * SHOAL_ERR_PROTOCOL when not a decimal integer.
 */
int pmi_get_long(const pmi_msg_t *msg, const char *key, long *out);

/* A whole-string decimal integer: 0, or -1 when text is anything else. */
int pmi_to_long(const char *text, long *out);

/* The reply's rc: 0 when absent (servers omit it on success), else its value
 * (a non-integer rc counts as -1). */
long pmi_rc(const pmi_msg_t *msg);

/*
 * An abort request needs its own parser: MPICH sends its message raw,
 * spaces and all ("cmd=abort exitcode=1 message=Fatal error in ..."), and
 * Flux names it error_msg.  Returns 1 when line is an abort (filling the
 * exit code, 1 when absent or malformed, and the message with control bytes
 * replaced, "" when absent), 0 when it is some other line.
 */
int pmi_parse_abort(const char *line, size_t len, long *code_p, char *msg,
                    size_t msg_cap);

/* True when s may be a PMI value: no space, '\n' or other control byte. */
int pmi_value_ok(const char *s);
/* True when s may be a PMI key: non-empty, a value without '='. */
int pmi_key_ok(const char *s);

/*
 * Builds one line.  Errors stick: after a failed add, pmi_fmt_end returns
 * the first error, so callers check once.
 */
typedef struct pmi_fmt {
    char buf[PMI_LINE_MAX + 1]; /* + NUL */
    size_t len;
    int status;
} pmi_fmt_t;

void pmi_fmt_init(pmi_fmt_t *f, const char *cmd);
void pmi_fmt_add(pmi_fmt_t *f, const char *key, const char *value);
void pmi_fmt_add_long(pmi_fmt_t *f, const char *key, long value);
/*
 * Append the newline.  SHOAL_ERR_TOO_LARGE when the line would exceed
 * PMI_LINE_MAX, SHOAL_ERR_INVALID for a bad key or value.
 */
int pmi_fmt_end(pmi_fmt_t *f);

/*
 * Splits a byte stream into lines.  Feed it what read(2) returned, then take
 * lines until it has none.  A line longer than PMI_LINE_MAX is reported once
 * (SHOAL_ERR_PROTOCOL) and its bytes are skipped up to the next newline, so
 * one bad line does not lose the stream.
 */
typedef struct pmi_linebuf {
    char buf[2 * PMI_LINE_MAX];
    size_t len;
    int skipping; /* inside an over-long line */
} pmi_linebuf_t;

void pmi_linebuf_init(pmi_linebuf_t *lb);
/* Where to read(2) into, and how much room there is (never 0). */
char *pmi_linebuf_space(pmi_linebuf_t *lb, size_t *room_p);
/* Record n bytes read into the space. */
void pmi_linebuf_added(pmi_linebuf_t *lb, size_t n);
/*
 * Copy the next complete line (with its '\n', NUL-terminated) into line
 * (PMI_LINE_MAX + 1 bytes) and store its length.  Returns 1 when a line was
 * taken, 0 when none is complete, SHOAL_ERR_PROTOCOL for an over-long line.
 */
int pmi_linebuf_take(pmi_linebuf_t *lb, char *line, size_t *len_p);
/*
 * Copy up to n held bytes, raw, to out (for a protocol that leaves lines
 * behind, as PMI-2 does after its init line).  Returns how many.
 */
size_t pmi_linebuf_take_bytes(pmi_linebuf_t *lb, char *out, size_t n);
/* Bytes held that do not yet form a line. */
size_t pmi_linebuf_pending(const pmi_linebuf_t *lb);

#endif /* SHOAL_PMI_WIRE_H */
