/*
 * Shoal status codes.
 *
 * Every public Shoal function that can fail returns an int: SHOAL_OK (0) on
 * success or a negative SHOAL_ERR_* code.  The list below is the only place
 * the codes are defined; shoal_strerror() and shoal_err_name() are generated
 * from it.  Codes in [SHOAL_ERR_LAST_LINK_FAILURE, SHOAL_ERR_FIRST_LINK_FAILURE]
 * report a failed peer or link (test with SHOAL_ERR_IS_LINK_FAILURE).
 */
#ifndef SHOAL_ERRORS_H
#define SHOAL_ERRORS_H

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, one-line description) */
#define SHOAL_ERROR_LIST(X)                                                  \
    X(OK, 0, "success")                                                      \
    X(ERR_INVALID, -1, "invalid argument")                                   \
    X(ERR_NOMEM, -2, "out of memory")                                        \
    X(ERR_NOT_INIT, -3, "Shoal is not initialized")                          \
    X(ERR_ALREADY, -4, "already initialized or already in use")              \
    X(ERR_AGAIN, -5, "resources temporarily exhausted; try again")           \
    X(ERR_RANK, -6, "rank out of range")                                     \
    X(ERR_HANDLER, -7, "handler index not registered")                      \
    X(ERR_TOO_LARGE, -8, "payload or argument count over the maximum")       \
    X(ERR_SEGMENT, -9, "range outside the target's registered segment")     \
    X(ERR_IN_HANDLER, -10, "call not allowed inside a handler")              \
    X(ERR_TIMEOUT, -11, "timed out")                                         \
    X(ERR_UNSUPPORTED, -12, "operation not supported here")                  \
    X(ERR_CONFIG, -13, "invalid SHOAL_* configuration value")                \
    X(ERR_BOOT, -14, "bootstrap (launcher or PMI) failure")                  \
    X(ERR_SYSTEM, -15, "operating-system call failed")                       \
    X(ERR_PROTOCOL, -16, "malformed or unexpected protocol message")         \
    X(ERR_NOT_FOUND, -17, "not found")                                       \
    X(ERR_BUSY, -18, "object busy")                                          \
    X(ERR_INTERNAL, -19, "internal error")                                   \
    X(ERR_PEER_DEAD, -32, "peer process died")                               \
    X(ERR_PEER_UNREACHABLE, -33, "peer unreachable")

typedef enum shoal_status {
#define SHOAL_X_ENUM_(name, value, text) SHOAL_##name = (value),
    SHOAL_ERROR_LIST(SHOAL_X_ENUM_)
#undef SHOAL_X_ENUM_
    SHOAL_ERR_FIRST_LINK_FAILURE = -32,
    SHOAL_ERR_LAST_LINK_FAILURE = -47
} shoal_status_t;

#define SHOAL_ERR_IS_LINK_FAILURE(s)                                         \
    ((s) <= SHOAL_ERR_FIRST_LINK_FAILURE && (s) >= SHOAL_ERR_LAST_LINK_FAILURE)

#if defined(__GNUC__)
#define SHOAL_API __attribute__((visibility("default")))
#else
#define SHOAL_API
#endif

/* Description of a status code ("unknown status" for values not in the list). */
SHOAL_API const char *shoal_strerror(int status);

/* Symbolic name of a status code, e.g. "SHOAL_ERR_RANK". */
SHOAL_API const char *shoal_err_name(int status);

/*
 * The detailed message of the last error a Shoal call returned on the calling
 * thread, e.g. "shoal_am_request_short: destination rank 9 out of range
 * [0, 4)".  Valid until the next failing Shoal call on this thread; an empty
 * string when none failed.
 */
SHOAL_API const char *shoal_error_detail(void);

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_ERRORS_H */
