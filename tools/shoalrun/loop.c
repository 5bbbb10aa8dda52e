/*
 * The poll() loop.  Callbacks may add and remove watches while a round is
 * being served: removal only marks the slot, and the array is compacted
 * between rounds, so no callback runs for an fd that was removed (and
 * perhaps reused) earlier in the same round.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shoalrun.h"

void shoalrun_loop_init(shoalrun_loop_t *l)
{
    memset(l, 0, sizeof(*l));
}

void shoalrun_loop_fini(shoalrun_loop_t *l)
{
    free(l->watches);
    free(l->pfds);
    memset(l, 0, sizeof(*l));
}

static int loop_grow(shoalrun_loop_t *l)
{
    size_t cap = l->cap ? 2 * l->cap : 16;
    shoalrun_watch_t *w = realloc(l->watches, cap * sizeof(*w));

    if (w == NULL)
        return base_err(SHOAL_ERR_NOMEM, "shoalrun: out of memory");
    l->watches = w;
    struct pollfd *p = realloc(l->pfds, cap * sizeof(*p));
    if (p == NULL)
        return base_err(SHOAL_ERR_NOMEM, "shoalrun: out of memory");
    l->pfds = p;
    l->cap = cap;
    return SHOAL_OK;
}

int shoalrun_loop_add(shoalrun_loop_t *l, int fd, short events,
                      shoalrun_io_fn fn, void *ctx)
{
    if (l->n == l->cap) {
        int status = loop_grow(l);
        if (status != SHOAL_OK)
            return status;
    }
    l->watches[l->n++] = (shoalrun_watch_t){fd, events, fn, ctx};
    return SHOAL_OK;
}

static shoalrun_watch_t *loop_find(shoalrun_loop_t *l, int fd)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->watches[i].fd == fd)
            return &l->watches[i];
    return NULL;
}

void shoalrun_loop_set_events(shoalrun_loop_t *l, int fd, short events)
{
    shoalrun_watch_t *w = loop_find(l, fd);

    if (w != NULL)
        w->events = events;
}

void shoalrun_loop_remove(shoalrun_loop_t *l, int fd)
{
    shoalrun_watch_t *w = loop_find(l, fd);

    if (w != NULL)
        w->fd = -1;
}

static void loop_compact(shoalrun_loop_t *l)
{
    size_t j = 0;

    for (size_t i = 0; i < l->n; i++)
        if (l->watches[i].fd >= 0)
            l->watches[j++] = l->watches[i];
    l->n = j;
}

int shoalrun_loop_once(shoalrun_loop_t *l, int timeout_ms)
{
    loop_compact(l);
    size_t n = l->n;
    for (size_t i = 0; i < n; i++) {
        l->pfds[i].fd = l->watches[i].fd;
        /* A watch with no events still hears of hang-ups; park it. */
        l->pfds[i].events = l->watches[i].events;
        l->pfds[i].revents = 0;
        if (l->watches[i].events == 0)
            l->pfds[i].fd = -1;
    }
    int ready = poll(l->pfds, n, timeout_ms);
    if (ready < 0)
        return errno == EINTR ? SHOAL_OK
                              : base_err(SHOAL_ERR_SYSTEM, "poll: %s",
                                         strerror(errno));
    for (size_t i = 0; i < n && ready > 0; i++) {
        if (l->pfds[i].revents == 0)
            continue;
        ready--;
        /* Removed (and maybe replaced) by an earlier callback this round. */
        if (l->watches[i].fd != l->pfds[i].fd)
            continue;
        shoalrun_watch_t w = l->watches[i];
        w.fn(w.ctx, w.fd, l->pfds[i].revents);
    }
    return SHOAL_OK;
}
