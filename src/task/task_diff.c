/*
 * Page diffs: encoding against twins, decoding, applying (task_diff.h has
 * the format).
 */
#include <stdlib.h>

#include "base/base.h"
#include "task/task_diff.h"
#include "task/task_varint.h"

/* A run's length is written when the run closes; until then it keeps room
 * for the longest one (7 bytes: 48 bits) and moves its bytes down after. */
#define LEN_ROOM 7u

void task_diff_writer_init(task_diff_writer_t *w, void *buf, size_t cap)
{
    *w = (task_diff_writer_t){.buf = buf, .cap = buf ? cap : 0,
                              .grow = buf == NULL};
    w->len = TASK_DIFF_HDR;
    if (w->cap < TASK_DIFF_HDR && !w->grow)
        w->status = base_err(SHOAL_ERR_TOO_LARGE, "task diff: a %zu-byte "
                             "buffer cannot hold the header", cap);
}

void task_diff_writer_fini(task_diff_writer_t *w)
{
    if (w->grow)
        free(w->buf);
    w->buf = NULL;
    w->cap = w->len = 0;
}

static int room(task_diff_writer_t *w, size_t more)
{
    if (w->len + more <= w->cap)
        return SHOAL_OK;
    if (!w->grow)
        return w->status = base_err(SHOAL_ERR_TOO_LARGE, "task diff: "
                                    "more than the %zu bytes of the buffer",
                                    w->cap);
    size_t cap = w->cap < 4096 ? 4096 : w->cap;
    while (cap < w->len + more)
        cap *= 2;
    uint8_t *b = realloc(w->buf, cap);
    if (b == NULL)
        return w->status = base_err(SHOAL_ERR_NOMEM, "task diff: %zu "
                                    "bytes", cap);
    w->buf = b;
    w->cap = cap;
    return SHOAL_OK;
}

static void close_run(task_diff_writer_t *w)
{
    uint8_t *h = w->buf + w->open_pos;
    size_t n = task_varint_put(h, w->open_off - w->end);

    n += task_varint_put(h + n, w->open_len);
    memmove(h + n, h + w->open_hdr, w->open_len);
    w->len = w->open_pos + n + w->open_len;
    w->end = w->open_off + w->open_len;
    w->nruns++;
    w->open = 0;
}

/* Appends changed bytes at off (>= the end of everything before). */
static int append(task_diff_writer_t *w, uint64_t off, const uint8_t *b,
                  size_t n)
{
    if (w->open && off == w->open_off + w->open_len) {
        if (room(w, n) != SHOAL_OK)
            return w->status;
        memcpy(w->buf + w->len, b, n);
        w->len += n;
        w->open_len += n;
        return SHOAL_OK;
    }
    if (w->open)
        close_run(w);
    size_t hdr = task_varint_len(off - w->end) + LEN_ROOM;
    if (room(w, hdr + n) != SHOAL_OK)
        return w->status;
    w->open = 1;
    w->open_off = off;
    w->open_len = n;
    w->open_pos = w->len;
    w->open_hdr = hdr;
    memcpy(w->buf + w->len + hdr, b, n);
    w->len += hdr + n;
    return SHOAL_OK;
}

static int check_order(task_diff_writer_t *w, uint64_t off, size_t len)
{
    if (w->status != SHOAL_OK)
        return w->status;
    if (off < w->floor)
        return w->status = base_err(SHOAL_ERR_INVALID, "task diff: offset "
                                    "%llu added after %llu", (unsigned long
                                    long)off, (unsigned long long)w->floor);
    if (off > TASK_DIFF_MAX_SPAN || len > TASK_DIFF_MAX_SPAN - off)
        return w->status = base_err(SHOAL_ERR_TOO_LARGE, "task diff: bytes "
                                    "past 2^48");
    w->floor = off + len;
    return SHOAL_OK;
}

static uint64_t load64(const uint8_t *p)
{
    uint64_t v;

    memcpy(&v, p, 8);
    return v;
}

int task_diff_add(task_diff_writer_t *w, uint64_t off, const void *twin,
                  const void *cur, size_t len)
{
    const uint8_t *t = twin, *c = cur;
    size_t i = 0;

    if (check_order(w, off, len) != SHOAL_OK)
        return w->status;
    while (i < len) {
        /* Unchanged words go by eight bytes at a time. */
        while (i + 8 <= len && load64(t + i) == load64(c + i))
            i += 8;
        while (i < len && t[i] == c[i])
            i++;
        size_t s = i;
        while (i < len && t[i] != c[i])
            i++;
        if (i > s && append(w, off + s, c + s, i - s) != SHOAL_OK)
            return w->status;
    }
    return SHOAL_OK;
}

int task_diff_add_bytes(task_diff_writer_t *w, uint64_t off,
                        const void *bytes, size_t len)
{
    if (check_order(w, off, len) != SHOAL_OK)
        return w->status;
    return len == 0 ? SHOAL_OK : append(w, off, bytes, len);
}

int task_diff_finish(task_diff_writer_t *w, const uint8_t **out,
                     size_t *len)
{
    if (w->status == SHOAL_OK && w->grow)
        room(w, 0); /* a growable writer has no buffer until its first run */
    if (w->status != SHOAL_OK)
        return w->status;
    if (w->open)
        close_run(w);
    w->buf[0] = 'T';
    w->buf[1] = 'D';
    w->buf[2] = TASK_DIFF_VERSION;
    w->buf[3] = 0;
    for (int i = 0; i < 4; i++)
        w->buf[4 + i] = (uint8_t)(w->nruns >> (8 * i));
    *out = w->buf;
    *len = w->len;
    return SHOAL_OK;
}

/* ---- decoding ------------------------------------------------------------ */

static int bad(const task_diff_iter_t *it, const char *why)
{
    return base_err(SHOAL_ERR_PROTOCOL, "task diff: %s (byte %zu of %zu)",
                    why, it->pos, it->len);
}

int task_diff_iter_init(task_diff_iter_t *it, const uint8_t *diff,
                        size_t len, uint64_t limit)
{
    *it = (task_diff_iter_t){.diff = diff, .len = len, .limit = limit,
                             .first = 1};
    if (len < TASK_DIFF_HDR)
        return bad(it, "shorter than its header");
    if (diff[0] != 'T' || diff[1] != 'D')
        return bad(it, "no 'TD' magic");
    if (diff[2] != TASK_DIFF_VERSION || diff[3] != 0)
        return bad(it, "unknown version or flags");
    for (int i = 3; i >= 0; i--)
        it->left = it->left << 8 | diff[4 + i];
    it->pos = TASK_DIFF_HDR;
    return SHOAL_OK;
}

int task_diff_iter_next(task_diff_iter_t *it, task_diff_run_t *run)
{
    uint64_t gap, n;
    size_t k;

    if (it->left == 0)
        return it->pos == it->len ? 0 : bad(it, "bytes after the last run");
    k = task_varint_get(it->diff + it->pos, it->len - it->pos,
                        TASK_DIFF_MAX_SPAN, &gap);
    if (k == 0)
        return bad(it, "bad run gap");
    it->pos += k;
    if (gap == 0 && !it->first)
        return bad(it, "runs touch (gap 0)");
    k = task_varint_get(it->diff + it->pos, it->len - it->pos,
                        TASK_DIFF_MAX_SPAN, &n);
    if (k == 0 || n == 0)
        return bad(it, "bad run length");
    it->pos += k;
    if (n > it->len - it->pos)
        return bad(it, "run longer than the diff");
    if (gap > it->limit - it->end || n > it->limit - it->end - gap)
        return bad(it, "run past the end of the region");
    run->off = it->end + gap;
    run->len = n;
    run->bytes = it->diff + it->pos;
    it->pos += n;
    it->end = run->off + n;
    it->left--;
    it->first = 0;
    return 1;
}

int task_diff_skip_build(const uint8_t *diff, size_t len, uint64_t limit,
                         task_diff_skip_t *sk)
{
    task_diff_iter_t it;
    task_diff_run_t run;
    size_t cap = 0, k = 0;
    int r = task_diff_iter_init(&it, diff, len, limit);

    sk->at = NULL;
    sk->n = 0;
    if (r == SHOAL_OK) {
        cap = it.left / TASK_DIFF_SKIP_RUNS;
        if (cap > 0 && (sk->at = malloc(cap * sizeof(*sk->at))) == NULL)
            return base_err(SHOAL_ERR_NOMEM, "task: a diff's skip table");
    }
    while (r == SHOAL_OK && (r = task_diff_iter_next(&it, &run)) == 1) {
        r = SHOAL_OK;
        if (++k % TASK_DIFF_SKIP_RUNS == 0 && sk->n < cap)
            sk->at[sk->n++] = it;
    }
    if (r < 0) {
        task_diff_skip_free(sk);
        return r;
    }
    return SHOAL_OK;
}

void task_diff_skip_free(task_diff_skip_t *sk)
{
    free(sk->at);
    sk->at = NULL;
    sk->n = 0;
}

void task_diff_skip_seek(const task_diff_skip_t *sk, uint64_t off,
                         task_diff_iter_t *it)
{
    size_t lo = 0, hi = sk->n; /* the answer is in [lo, hi): at[lo-1] */

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sk->at[mid].end <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && sk->at[lo - 1].pos > it->pos)
        *it = sk->at[lo - 1];
}

int task_diff_check(const uint8_t *diff, size_t len, uint64_t limit,
                    uint32_t *nruns, uint64_t *nbytes)
{
    task_diff_iter_t it;
    task_diff_run_t run;
    uint64_t bytes = 0;
    uint32_t runs = 0;
    int r = task_diff_iter_init(&it, diff, len, limit);

    while (r == SHOAL_OK && (r = task_diff_iter_next(&it, &run)) == 1) {
        runs++;
        bytes += run.len;
        r = SHOAL_OK;
    }
    if (r < 0)
        return r;
    if (nruns)
        *nruns = runs;
    if (nbytes)
        *nbytes = bytes;
    return SHOAL_OK;
}

int task_diff_apply(const uint8_t *diff, size_t len, void *base, size_t size)
{
    task_diff_iter_t it;
    task_diff_run_t run;
    int r = task_diff_check(diff, len, size, NULL, NULL);

    if (r != SHOAL_OK)
        return r;
    task_diff_iter_init(&it, diff, len, size);
    while (task_diff_iter_next(&it, &run) == 1)
        memcpy((uint8_t *)base + run.off, run.bytes, run.len);
    return SHOAL_OK;
}
