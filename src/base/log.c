/*
 * Logging.  One write(2) per line so that lines of concurrent ranks do not
 * interleave inside a line; the level comes from SHOAL_LOG.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base.h"

int base_log_level = BASE_LOG_WARN;

static char log_prefix[64] = "shoal";

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG",
                                          "TRACE"};

void base_log_set_prefix(const char *prefix)
{
    snprintf(log_prefix, sizeof(log_prefix), "%s", prefix);
}

void base_log_emit(int level, const char *subsys, const char *fmt, ...)
{
    char line[1024];
    int saved_errno = errno;
    int n;
    va_list ap;

    if (level < 0 || level > BASE_LOG_TRACE)
        level = BASE_LOG_ERROR;
    n = snprintf(line, sizeof(line), "%s %s %s: ", log_prefix,
                 level_names[level], subsys);
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof(line)) {
        va_start(ap, fmt);
        int m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
        va_end(ap);
        n = (m < 0) ? n : n + m;
    }
    if ((size_t)n >= sizeof(line) - 1)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    /* One write per line; a short write to a pipe is not worth retrying. */
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
    errno = saved_errno;
}
