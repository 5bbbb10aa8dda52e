/*
 * Buffered sends: the attached buffer, carved first-fit into blocks that
 * each hold one packed message until its send completes.
 *
 * A block is its 16-byte header followed by the packed message, rounded up
 * to 16 bytes; blocks in use form a list in address order, so free space
 * is the gaps between them.  What a message costs beyond its size (header,
 * rounding, and once the alignment of the buffer's start: at most 46
 * bytes) stays inside MPI_BSEND_OVERHEAD, so a buffer of the sum of
 * size + MPI_BSEND_OVERHEAD over the messages always holds them, as the
 * standard promises.
 */
#include <string.h>

#include "mpi/p2p/p2p_engine.h"

typedef struct bblock {
    struct bblock *next;
    size_t len; /* whole block, header included */
} bblock_t;

_Static_assert(sizeof(bblock_t) == 16, "blocks and data stay 16-aligned");
_Static_assert(15 + sizeof(bblock_t) + 15 <= MPI_BSEND_OVERHEAD,
               "alignment, header and rounding fit the overhead");

static char *buffer;
static size_t buffer_size;
static bblock_t *used; /* by address */

static size_t align_up(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

/* First fit: a block of len bytes, or NULL. */
static bblock_t *bblock_alloc(size_t len)
{
    char *start = buffer ? (char *)(((uintptr_t)buffer + 15) & ~(uintptr_t)15)
                         : NULL;
    char *end = buffer + buffer_size;
    bblock_t **link = &used;
    char *cursor = start;

    if (buffer == NULL)
        return NULL;
    for (;;) {
        char *limit = *link ? (char *)*link : end;
        if (limit >= cursor && (size_t)(limit - cursor) >= len) {
            bblock_t *b = (bblock_t *)cursor;
            b->len = len;
            b->next = *link;
            *link = b;
            return b;
        }
        if (*link == NULL)
            return NULL;
        cursor = (char *)*link + (*link)->len;
        link = &(*link)->next;
    }
}

void mpi_bsend_release(void *block)
{
    for (bblock_t **link = &used; *link; link = &(*link)->next)
        if (*link == block) {
            *link = ((bblock_t *)block)->next;
            return;
        }
}

int mpi_bsend_start(MPI_Request user, int blocking)
{
    MPI_Count bytes = user->count * user->dt->size;
    bblock_t *b;
    MPI_Request r;
    int rc;

    (void)blocking;
    if (user->peer == MPI_PROC_NULL) {
        mpi_req_complete(user);
        return MPI_SUCCESS;
    }
    b = bblock_alloc(align_up(sizeof(*b) + (size_t)bytes));
    if (b == NULL)
        return MPI_ERR_BUFFER;
    char *data = (char *)(b + 1);
    if (bytes > 0) {
        mpi_dt_cursor_t c;
        mpi_dt_cursor_init(&c, user->dt, user->count, user->buf, 0);
        mpi_dt_cursor_pack(&c, data, bytes);
    }
    r = mpi_req_alloc(MPI_REQ_SEND, user->comm);
    if (r == NULL) {
        mpi_bsend_release(b);
        return MPI_ERR_NO_MEM;
    }
    r->buf = data;
    r->count = bytes;
    r->dt = MPI_BYTE;
    r->peer = user->peer;
    r->tag = user->tag;
    r->mode = MPI_P2P_STANDARD;
    r->ctx_off = user->ctx_off;
    r->bsend_block = b;
    rc = mpi_send_start(r);
    if (rc != MPI_SUCCESS) {
        r->bsend_block = NULL;
        mpi_bsend_release(b);
        mpi_req_free(r);
        return rc;
    }
    /* The data is ours now: the user's send is complete. */
    mpi_req_complete(user);
    return MPI_SUCCESS;
}

static int attach(void *buf, MPI_Count size, const char *fn)
{
    MPI_CHECK_INIT(fn);
    if (buf == NULL || size < 0)
        return mpi_error(NULL, MPI_ERR_BUFFER, fn,
                         "buffer is NULL or size %lld is negative",
                         (long long)size);
    mpi_lock();
    if (buffer != NULL) {
        mpi_unlock();
        return mpi_error(NULL, MPI_ERR_BUFFER, fn,
                         "a buffer is already attached (detach it first)");
    }
    buffer = buf;
    buffer_size = (size_t)size;
    used = NULL;
    mpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void *buf, int size)
{
    return attach(buf, size, "MPI_Buffer_attach");
}
SHOAL_MPI_WEAK(Buffer_attach)

int PMPI_Buffer_attach_c(void *buf, MPI_Count size)
{
    return attach(buf, size, "MPI_Buffer_attach_c");
}
SHOAL_MPI_WEAK(Buffer_attach_c)

static int all_free(void *arg)
{
    (void)arg;
    return used == NULL;
}

/* Wait for the buffered messages to leave, then hand the buffer back. */
static int detach(void *buffer_addr, MPI_Count *size, const char *fn)
{
    int rc;

    MPI_CHECK_INIT(fn);
    if (buffer_addr == NULL || size == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, fn,
                         "buffer_addr or size is NULL");
    if (buffer == NULL) {
        *(void **)buffer_addr = NULL;
        *size = 0;
        return MPI_SUCCESS;
    }
    rc = mpi_wait_until(all_free, NULL);
    if (rc != MPI_SUCCESS)
        return mpi_error(NULL, rc, fn, "waiting for buffered sends failed");
    mpi_lock();
    *(void **)buffer_addr = buffer;
    *size = (MPI_Count)buffer_size;
    buffer = NULL;
    buffer_size = 0;
    mpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    return detach(buffer_addr, size, "MPI_Buffer_detach_c");
}
SHOAL_MPI_WEAK(Buffer_detach_c)

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    MPI_Count n = 0;
    int rc;

    if (size == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, "MPI_Buffer_detach",
                         "size is NULL");
    rc = detach(buffer_addr, &n, "MPI_Buffer_detach");
    if (rc == MPI_SUCCESS)
        *size = (int)n;
    return rc;
}
SHOAL_MPI_WEAK(Buffer_detach)
