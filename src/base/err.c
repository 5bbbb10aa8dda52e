/* Status strings and the per-thread detail of the last error. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"

#define BASE_ERR_DETAIL_MAX 512

static _Thread_local char err_detail[BASE_ERR_DETAIL_MAX];

const char *shoal_strerror(int status)
{
    switch (status) {
#define BASE_X_CASE(name, value, text)                                       \
    case value:                                                              \
        return text;
        SHOAL_ERROR_LIST(BASE_X_CASE)
#undef BASE_X_CASE
    default:
        return "unknown status";
    }
}

const char *shoal_err_name(int status)
{
    switch (status) {
#define BASE_X_CASE(name, value, text)                                       \
    case value:                                                              \
        return "SHOAL_" #name;
        SHOAL_ERROR_LIST(BASE_X_CASE)
#undef BASE_X_CASE
    default:
        return "SHOAL_ERR_UNKNOWN";
    }
}

const char *shoal_error_detail(void)
{
    return err_detail;
}

int base_verr(int status, const char *fmt, va_list ap)
{
    char text[sizeof(err_detail)];

    /*
     * Through a copy: callers may pass shoal_error_detail() itself as an
     * argument, to wrap the previous detail in a new one.
     */
    vsnprintf(text, sizeof(text), fmt, ap);
    memcpy(err_detail, text, sizeof(err_detail));
    base_debug("err", "%s (%s)", err_detail, shoal_err_name(status));
    return status;
}

int base_err(int status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    base_verr(status, fmt, ap);
    va_end(ap);
    return status;
}

void base_err_clear(void)
{
    err_detail[0] = '\0';
}

void base_fatal(const char *fmt, ...)
{
    char msg[BASE_ERR_DETAIL_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    base_log_emit(BASE_LOG_ERROR, "fatal", "%s", msg);
    abort();
}
