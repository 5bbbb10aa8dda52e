/*
 * Singleton backend: a program started without a launcher is rank 0 of 1.
 * Its store lives in this process but keeps the launcher's rules (a put is
 * visible after the next fence; values are no longer than a PMI-1 line
 * allows), so code that works alone also works under a launcher.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "base/base_strmap.h"
#include "boot/boot_internal.h"
#include "boot/pmi_wire.h"

typedef struct single {
    base_strmap_t published;
    base_strmap_t pending; /* puts since the last fence */
} single_t;

static void free_values(base_strmap_t *m)
{
    const char *k;
    void *v;

    for (size_t i = 0; base_strmap_next(m, &i, &k, &v);)
        free(v);
    base_strmap_fini(m);
}

static int single_store(base_strmap_t *m, const char *key, char *value)
{
    void *old = NULL;
    int status = base_strmap_put(m, key, value, &old);

    if (status != SHOAL_OK)
        free(value);
    free(old);
    return status;
}

static int single_put(void *ctx, const char *key, const char *value)
{
    single_t *s = ctx;
    char *copy = strdup(value);

    if (copy == NULL)
        return base_err(SHOAL_ERR_NOMEM, "boot: out of memory");
    return single_store(&s->pending, key, copy);
}

static int single_get(void *ctx, const char *key, char *value, size_t cap)
{
    single_t *s = ctx;
    const char *v = base_strmap_get(&s->published, key);

    if (v == NULL)
        return SHOAL_ERR_NOT_FOUND;
    if (strlen(v) >= cap)
        return base_err(SHOAL_ERR_TOO_LARGE, "boot value too long");
    strcpy(value, v);
    return SHOAL_OK;
}

/* As much as a PMI-1 put line with a short kvsname would carry. */
static size_t single_room(void *ctx, size_t keylen)
{
    size_t fixed = 48 + keylen;

    return fixed < PMI_LINE_MAX ? PMI_LINE_MAX - fixed : 0;
}

static int single_fence(void *ctx)
{
    single_t *s = ctx;
    const char *k;
    void *v;
    int status = SHOAL_OK;

    for (size_t i = 0; base_strmap_next(&s->pending, &i, &k, &v);) {
        if (status == SHOAL_OK)
            status = single_store(&s->published, k, v);
        else
            free(v);
    }
    base_strmap_fini(&s->pending);
    base_strmap_init(&s->pending);
    return status;
}

static void single_abort(void *ctx, int code, const char *msg)
{
}

static int single_fini(void *ctx)
{
    single_t *s = ctx;

    free_values(&s->published);
    free_values(&s->pending);
    free(s);
    return SHOAL_OK;
}

int boot_single_backend(boot_backend_t *be, char *jobid, size_t jobid_cap)
{
    single_t *s = calloc(1, sizeof(*s));

    if (s == NULL)
        return base_err(SHOAL_ERR_NOMEM, "boot: out of memory");
    base_strmap_init(&s->published);
    base_strmap_init(&s->pending);
    *be = (boot_backend_t){
        .name = "single",
        .kvs = {.ctx = s,
                .put = single_put,
                .get = single_get,
                .room = single_room,
                .key_max = 63},
        .fence = single_fence,
        .barrier = single_fence,
        .abort = single_abort,
        .fini = single_fini,
    };
    /* Unique per process so two singletons never share /dev/shm names. */
    snprintf(jobid, jobid_cap, "single-%ld-%llx", (long)getpid(),
             (unsigned long long)base_time_ns());
    return SHOAL_OK;
}
