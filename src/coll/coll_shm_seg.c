/*
 * The shared segment of a communicator: made on first use by its rank 0
 * (memfd_create, ftruncate, mmap: anonymous, so nothing can be left behind
 * in /dev/shm), and mapped by the others after they take a copy of rank 0's
 * descriptor with pidfd_getfd (or, where that is refused, by opening
 * /proc/<pid>/fd/<n>, which needs only read access to the process).
 *
 * The set-up is a protocol of messages on the tag of the call that first
 * needed the segment, posted from poll steps, so any call may drive it:
 *   rank 0 -> all:  {ok, fd, len, token}   (ok = 0 if it could not create)
 *   all -> rank 0:  {ok}                   (mapped and checked the header)
 *   rank 0 -> all:  {ok}                   the verdict: every rank mapped
 * so every rank learns the same verdict; when it is "failed", every call
 * on the communicator runs through messages instead (coll_shm_fb.c).
 * Rank 0 closes its descriptor after the verdict: from then on the segment
 * lives only in the mappings and goes away with the last munmap.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "coll_shm.h"

size_t shm_seg_len(int p)
{
    size_t off = shm_sets_off(p) + (size_t)SHM_NSETS * (size_t)p * SHM_BLOCK;
    return base_align_up(off, 4096) +
           (size_t)SHM_NAREAS * (size_t)p * (size_t)SHM_SLOT;
}

/*
 * Test hook: SHOALTEST_COLL_SHM_FAIL=create makes rank 0 fail to create the
 * segment, =map makes the last rank fail to map it; either way every rank
 * must fall back to messages.  (Not a SHOAL_ variable: those are checked
 * against the registry.)
 */
static int test_fail(const char *what)
{
    const char *v = getenv("SHOALTEST_COLL_SHM_FAIL");
    return v != NULL && strcmp(v, what) == 0;
}

static int seg_create(coll_shm_t *m)
{
    size_t len = shm_seg_len(m->p);
    void *base;
    int fd;

    if (test_fail("create")) {
        base_info("coll", "shared-memory collectives: creation refused "
                          "(SHOALTEST_COLL_SHM_FAIL)");
        return -1;
    }
    fd = memfd_create("shoal-coll", MFD_CLOEXEC);
    if (fd < 0) {
        base_info("coll", "shared-memory collectives: memfd_create: %s",
                  strerror(errno));
        return -1;
    }
    if (ftruncate(fd, (off_t)len) != 0) {
        base_info("coll",
                  "shared-memory collectives: segment of %zu bytes: "
                  "%s",
                  len, strerror(errno));
        close(fd);
        return -1;
    }
    base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        base_info("coll", "shared-memory collectives: mmap of %zu bytes: %s",
                  len, strerror(errno));
        close(fd);
        return -1;
    }
    m->base = base;
    m->len = len;
    m->fd = fd;
    m->hdr = base;
    m->hdr->magic = SHM_MAGIC;
    m->hdr->token = (uint64_t)base_time_ns() ^ ((uint64_t)getpid() << 32) ^
                    (uint64_t)(uintptr_t)base;
    m->hdr->len = len;
    m->hdr->size = (uint32_t)m->p;
    m->hdr->nsets = SHM_NSETS;
    return 0;
}

/* A descriptor for rank 0's memfd number fd: a copy through its pidfd,
 * else a new open of the same file through /proc. */
static int peer_fd(int pid, int fd)
{
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    int mine = -1;
    char path[64];

    if (pidfd >= 0) {
        mine = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
        close(pidfd);
        if (mine >= 0)
            return mine;
    }
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
    mine = open(path, O_RDWR | O_CLOEXEC);
    if (mine < 0)
        base_info("coll",
                  "shared-memory collectives: cannot reach rank 0's "
                  "segment (pidfd_getfd and %s: %s)",
                  path, strerror(errno));
    return mine;
}

static int seg_map(coll_comm_t *c, coll_shm_t *m, const shm_msg_t *info)
{
    int pid = c->ops->peer_pid(c->ctx, 0);
    struct stat st;
    void *base;
    int fd;

    if (pid <= 0 || info->len != shm_seg_len(m->p) ||
        (m->rank == m->p - 1 && test_fail("map")))
        return -1;
    fd = peer_fd(pid, info->fd);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < info->len) {
        close(fd);
        return -1;
    }
    base = mmap(NULL, (size_t)info->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                0);
    close(fd);
    if (base == MAP_FAILED)
        return -1;
    m->base = base;
    m->len = (size_t)info->len;
    m->hdr = base;
    /* The descriptor number could name another file by now only if rank 0
     * misbehaved; the token says it is the segment it announced. */
    if (m->hdr->magic != SHM_MAGIC || m->hdr->token != info->token ||
        m->hdr->size != (uint32_t)m->p) {
        munmap(base, m->len);
        m->base = NULL;
        m->hdr = NULL;
        return -1;
    }
    return 0;
}

static void seg_unmap(coll_shm_t *m)
{
    if (m->base != NULL)
        munmap(m->base, m->len);
    m->base = NULL;
    m->hdr = NULL;
    if (m->fd >= 0)
        close(m->fd);
    m->fd = -1;
}

/* ---- the set-up protocol ------------------------------------------------- */

static int post(coll_comm_t *c, int send, void *buf, int peer)
{
    coll_shm_t *m = c->shm;
    void *req = NULL;
    int rc;

    if (send)
        rc = c->ops->isend(c->ctx, buf, (int64_t)sizeof(shm_msg_t),
                           c->ops->byte_dt, peer, m->tag, &req);
    else
        rc = c->ops->irecv(c->ctx, buf, (int64_t)sizeof(shm_msg_t),
                           c->ops->byte_dt, peer, m->tag, &req);
    if (rc == 0)
        m->reqs[m->nreq++] = req;
    return rc;
}

/* 1 when the posted messages are done (first error in *rc), else 0. */
static int msgs_done(coll_comm_t *c, int *rc)
{
    coll_shm_t *m = c->shm;
    int done = 1;

    *rc = 0;
    if (m->nreq == 0)
        return 1;
    *rc = c->ops->testall(c->ctx, m->nreq, m->reqs, &done);
    if (!done)
        return 0;
    m->nreq = 0;
    return 1;
}

static void finish_setup(coll_shm_t *m, int ok)
{
    if (m->fd >= 0) {
        close(m->fd);
        m->fd = -1;
    }
    if (!ok)
        seg_unmap(m);
    free(m->reqs);
    free(m->status);
    m->reqs = NULL;
    m->status = NULL;
    m->state = ok ? SHM_ST_READY : SHM_ST_FAILED;
    if (m->rank == 0)
        base_info("coll", "shared-memory collectives on %d ranks: %s", m->p,
                  ok ? "segment shared" : "through messages");
}

static int fail_setup(coll_shm_t *m, int rc)
{
    /* A set-up message failed (a peer died): nothing can be shared. */
    if (m->nreq == 0)
        finish_setup(m, 0);
    else
        m->state = SHM_ST_FAILED; /* requests still point into m */
    return shm_err(rc);
}

static int setup_root(coll_comm_t *c, coll_shm_t *m)
{
    int rc = 0, p = m->p;

    switch (m->step) {
    case 0:
        m->info.ok = seg_create(m) == 0;
        m->info.fd = m->fd;
        m->info.len = m->len;
        m->info.token = m->hdr != NULL ? m->hdr->token : 0;
        for (int q = 1; q < p && rc == 0; q++) {
            rc = post(c, 1, &m->info, q);
            if (rc == 0)
                rc = post(c, 0, &m->status[q], q);
        }
        if (rc != 0)
            return fail_setup(m, rc);
        m->step = 1;
        /* fall through */
    case 1:
        if (!msgs_done(c, &rc))
            return 0;
        if (rc != 0)
            return fail_setup(m, rc);
        m->verdict.ok = m->info.ok;
        for (int q = 1; q < p; q++)
            m->verdict.ok &= m->status[q].ok == 1;
        for (int q = 1; q < p && rc == 0; q++)
            rc = post(c, 1, &m->verdict, q);
        if (rc != 0)
            return fail_setup(m, rc);
        m->step = 2;
        /* fall through */
    case 2:
        if (!msgs_done(c, &rc))
            return 0;
        if (rc != 0)
            return fail_setup(m, rc);
        finish_setup(m, m->verdict.ok);
        return 1;
    }
    return 1;
}

static int setup_other(coll_comm_t *c, coll_shm_t *m)
{
    int rc = 0;

    switch (m->step) {
    case 0:
        rc = post(c, 0, &m->info, 0);
        if (rc != 0)
            return fail_setup(m, rc);
        m->step = 1;
        /* fall through */
    case 1:
        if (!msgs_done(c, &rc))
            return 0;
        if (rc != 0)
            return fail_setup(m, rc);
        m->mine.ok = m->info.ok == 1 && seg_map(c, m, &m->info) == 0;
        rc = post(c, 1, &m->mine, 0);
        if (rc == 0)
            rc = post(c, 0, &m->verdict, 0);
        if (rc != 0)
            return fail_setup(m, rc);
        m->step = 2;
        /* fall through */
    case 2:
        if (!msgs_done(c, &rc))
            return 0;
        if (rc != 0)
            return fail_setup(m, rc);
        finish_setup(m, m->verdict.ok == 1 && m->mine.ok);
        return 1;
    }
    return 1;
}

int shm_setup_progress(coll_comm_t *c)
{
    coll_shm_t *m = c->shm;

    if (BASE_LIKELY(m->state >= SHM_ST_READY))
        return 1;
    if (m->state == SHM_ST_NEW) {
        int n = m->rank == 0 ? 2 * m->p : 2;
        m->reqs = calloc((size_t)n, sizeof(void *));
        if (m->rank == 0)
            m->status = calloc((size_t)m->p, sizeof(shm_msg_t));
        if (m->reqs == NULL || (m->rank == 0 && m->status == NULL)) {
            /* Without memory we cannot even tell the others: the
             * collective cannot complete correctly. */
            free(m->reqs);
            free(m->status);
            m->reqs = NULL;
            m->status = NULL;
            return base_err(SHOAL_ERR_NOMEM, "shared-memory collective set-up");
        }
        m->state = SHM_ST_SETUP;
    }
    return m->rank == 0 ? setup_root(c, m) : setup_other(c, m);
}

void coll_shm_fini(coll_comm_t *c)
{
    coll_shm_t *m = c->shm;

    if (m == NULL)
        return;
    c->shm = NULL;
    if (m->nreq > 0) {
        /* Set-up messages still in flight point into m: keep it. */
        base_warn("coll", "communicator freed during the set-up of its "
                          "shared-memory collectives");
        return;
    }
    seg_unmap(m);
    free(m->reqs);
    free(m->status);
    free(m->records);
    free(m->bells);
    free(m);
}
