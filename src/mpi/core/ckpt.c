/*
 * Coordinated checkpoint/restart, application-assisted (issue 18 part 3,
 * docs/FT.md "Checkpoint/restart").  The program registers its state
 * regions (MPIX_Checkpoint_register); MPIX_Checkpoint, collective over
 * MPI_COMM_WORLD, makes sure no message crosses the cut, writes every
 * rank's image to SHOAL_CKPT_DIR/ckpt.<epoch>/rank.<r> (tmp, fsync,
 * rename), and rank 0 commits the checkpoint with a COMPLETE file only
 * after every rank confirmed its image; older checkpoints are removed only
 * then.  After shoalrun --restart DIR, MPIX_Checkpoint_restarted (also
 * collective) picks the newest checkpoint that is complete and valid on
 * every rank and copies it into the registered regions.
 *
 * Nothing here is on a path that messages take: the calls are the
 * application's own, between its communication phases.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mpi/core/ckpt_dir.h"
#include "mpi/core/ckpt_fixed.h"
#include "coll/coll.h"
#include "mpi/core/ckpt_objs.h"
#include "mpi/core/obj_arena.h"
#include "mpi/core/ft.h"
#include "mpi/p2p/p2p_engine.h"

#define CK_MAGIC "SHOALCKP"
#define CK_VERSION 6u /* 2: the regions' checksums are base_sum64;
                           3: the messages in flight after the regions;
                           4: ... on any intracommunicator, named by
                              context id, size and group;
                           5: the library's objects after the messages;
                           6: a message's sync flag and sender's request */
#define CK_TAG 4242
#define CK_MAX_CANDIDATES 16
#define CK_DIR_MAX 900 /* longest SHOAL_CKPT_DIR */
#define CK_NAME 64

/* The head of a rank's image; then nreg uint64_t region sizes, then the
 * regions' bytes in registration order, then chan_bytes of messages that
 * were in flight to this rank (ck_msg_t records), then obj_bytes of the
 * library's objects (ckpt_objs.c).  Host byte order: a checkpoint
 * restarts on machines of the same architecture. */
typedef struct ck_head {
    char magic[8];
    uint32_t version;
    uint32_t rank, size, nreg;
    uint64_t epoch;
    uint64_t prog;        /* siphash of the program's name */
    uint64_t data_bytes;  /* the regions' bytes */
    uint64_t chan_bytes;  /* the messages' records */
    uint64_t obj_bytes;   /* the objects' records */
    uint64_t prog_base;   /* where the program and the library were loaded */
    uint64_t lib_base;
    uint64_t arena_hwm;   /* one past the highest object cell ever used */
    uint64_t sum;         /* checksum of all the rest (this field 0) */
    char name[CK_NAME];   /* the program's name, for messages */
} ck_head_t;

/* A message that had arrived here, unreceived, when the checkpoint was
 * cut: its bytes follow, then zeros to a multiple of 8.  Its
 * communicator is named by what the restarted job can check: the
 * point-to-point context id, the size and a digest of the group. */
typedef struct ck_msg {
    uint32_t ctx;       /* the communicator's point-to-point context */
    int32_t src, tag;   /* rank in that communicator, tag */
    int32_t src_world;  /* the sender's world rank */
    uint64_t bytes;
    uint32_t comm_size; /* the communicator's size */
    uint32_t flags;     /* CK_MSG_SYNC */
    uint64_t group;     /* group_digest of its members */
    uint64_t sreq;      /* CK_MSG_SYNC: the sender's request, to ack */
} ck_msg_t;

/* A synchronous send's message: its sender's request (MPI_Issend, or a
 * started MPI_Ssend_init) waits for the match; the image of the sender
 * carries that request (ckpt_objs.c), and the match after a restart acks
 * it as one that came back (ckpt_objs_sync_claim). */
#define CK_MSG_SYNC 1u

#define CK_PAD8(n) (((n) + 7) & ~(uint64_t)7)

typedef struct ck_region {
    void *ptr;
    size_t size;
} ck_region_t;

static struct {
    ck_region_t *reg;
    int nreg, cap;
    int asked;      /* MPIX_Checkpoint_restarted has run */
    int loaded;     /* an image was loaded (the job restarted) */
    uint8_t *img;   /* the loaded image (whole file) */
    uint64_t epoch; /* the loaded checkpoint's */
} ck;

/* The context id of MPIX_Checkpoint_restarted's private communicator
 * while it lives (UINT32_MAX: none): never one whose messages an image
 * carries. */
static uint32_t private_ctx = UINT32_MAX;

#define ck_key ckpt_dir_key

static const char *prog_name(void)
{
    return program_invocation_short_name != NULL
               ? program_invocation_short_name : "?";
}

static uint64_t prog_id(void)
{
    return ckpt_dir_prog_id(prog_name());
}

/* Pieces in which a region is checksummed (and written, and read), so
 * that the checksum runs while the kernel writes or reads the next. */
#define CK_PIECE ((size_t)8 << 20)

/* A region's checksum so far, after the next piece. */
static uint64_t piece_sum(uint64_t acc, const void *p, size_t n)
{
    return base_sum64(p, n, acc);
}

/* Checksum of an image: SipHash of the head (sum 0), the sizes and the
 * checksums of the regions and of the messages (rsum[nreg]), each
 * base_sum64 chained over its CK_PIECE pieces from its index (fast:
 * regions are large; SipHash is about 1 GB/s here). */
static uint64_t image_sum(const ck_head_t *h, const uint64_t *sizes,
                          const uint64_t *rsum)
{
    size_t n = sizeof(*h) + (size_t)h->nreg * 16 + 8;
    uint8_t *buf = malloc(n);
    ck_head_t hz = *h;
    uint64_t sum;

    if (buf == NULL)
        return 0;
    hz.sum = 0;
    memcpy(buf, &hz, sizeof(hz));
    memcpy(buf + sizeof(hz), sizes, (size_t)h->nreg * 8);
    memcpy(buf + sizeof(hz) + (size_t)h->nreg * 8, rsum,
           ((size_t)h->nreg + 1) * 8);
    sum = base_siphash(ck_key, buf, n);
    free(buf);
    return sum;
}

static void remove_join(void);

void mpi_ckpt_fini(void)
{
    remove_join();
    free(ck.reg);
    free(ck.img);
    memset(&ck, 0, sizeof(ck));
}

/* ---- files ---------------------------------------------------------------------- */

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;

    while (n > 0) {
        ssize_t w = write(fd, c, n > (1u << 30) ? (1u << 30) : n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Write region i in pieces, each handed to writeback at once and then
 * checksummed while the kernel writes it; *sum_p is its checksum. */
static int write_region(int fd, int i, uint64_t *sum_p)
{
    const char *c = ck.reg[i].ptr;
    size_t n = ck.reg[i].size;
    off_t at = lseek(fd, 0, SEEK_CUR);
    uint64_t acc = (uint64_t)i;

    while (n > 0) {
        size_t k = n < CK_PIECE ? n : CK_PIECE;
        if (write_all(fd, c, k) != 0)
            return -1;
        if (at >= 0) {
            sync_file_range(fd, at, (off_t)k, SYNC_FILE_RANGE_WRITE);
            at += (off_t)k;
        }
        acc = piece_sum(acc, c, k);
        c += k;
        n -= k;
    }
    *sum_p = acc;
    return 0;
}

static int fsync_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc;

    if (fd < 0)
        return -1;
    rc = fsync(fd);
    close(fd);
    return rc;
}

static int mkdir_p(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);

    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        buf[i] = c;
    }
    return 0;
}

/* Remove a checkpoint directory and the files in it. */
static void remove_ckpt_dir(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    char f[4352];

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(f, sizeof(f), "%s/%s", path, e->d_name);
        unlink(f);
    }
    closedir(d);
    rmdir(path);
}

/* The older checkpoints, removed by a thread of rank 0 once a new one is
 * committed (unlinking large files costs as much as writing them on some
 * file systems): the program goes on meanwhile.  Joined before the next
 * checkpoint lists the directory, and at MPI_Finalize. */
static struct {
    pthread_t thread;
    int running;
    char dir[CK_DIR_MAX + 1];
    uint64_t old[CK_MAX_CANDIDATES];
    int nold;
} rm_bg;

static void remove_olds(const char *dir, const uint64_t *old, int nold)
{
    for (int i = 0; i < nold; i++) {
        char od[960];
        snprintf(od, sizeof(od), "%s/ckpt.%" PRIu64, dir, old[i]);
        remove_ckpt_dir(od);
    }
}

static void *remove_main(void *arg)
{
    (void)arg;
    remove_olds(rm_bg.dir, rm_bg.old, rm_bg.nold);
    return NULL;
}

static void remove_join(void)
{
    if (rm_bg.running)
        pthread_join(rm_bg.thread, NULL);
    rm_bg.running = 0;
}

/* Remove dir's checkpoints old[0..nold) in the background (inline if no
 * thread can be started). */
static void remove_later(const char *dir, const uint64_t *old, int nold)
{
    remove_join();
    if (nold == 0)
        return;
    snprintf(rm_bg.dir, sizeof(rm_bg.dir), "%s", dir);
    memcpy(rm_bg.old, old, (size_t)nold * sizeof(*old));
    rm_bg.nold = nold;
    rm_bg.running = pthread_create(&rm_bg.thread, NULL, remove_main, NULL) == 0;
    if (!rm_bg.running)
        remove_olds(dir, old, nold);
}

/* Write this rank's image of epoch into cdir; 0 or -1 (errno kept in *err). */
static int write_image(const char *cdir, uint64_t epoch, const uint8_t *chan,
                       size_t chan_len, const uint8_t *objs, size_t obj_len,
                       int *err)
{
    char tmp[1024], fin[1024];
    ck_head_t h;
    uint64_t *sizes = calloc(2 * (size_t)ck.nreg + 1, sizeof(*sizes));
    uint64_t *rsum = sizes + ck.nreg;
    int fd = -1, rc = -1;

    *err = ENOMEM;
    if (sizes == NULL)
        goto out;
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, CK_MAGIC, 8);
    h.version = CK_VERSION;
    h.rank = (uint32_t)mpi.world_rank;
    h.size = (uint32_t)mpi.world_size;
    h.nreg = (uint32_t)ck.nreg;
    h.epoch = epoch;
    h.prog = prog_id();
    snprintf(h.name, sizeof(h.name), "%s", prog_name());
    for (int i = 0; i < ck.nreg; i++) {
        sizes[i] = ck.reg[i].size;
        h.data_bytes += ck.reg[i].size;
    }
    h.chan_bytes = chan_len;
    h.obj_bytes = obj_len;
    ckpt_fixed_bases(&h.prog_base, &h.lib_base);
    h.arena_hwm = mpi_arena_hwm();
    snprintf(tmp, sizeof(tmp), "%s/rank.%d.tmp", cdir, mpi.world_rank);
    snprintf(fin, sizeof(fin), "%s/rank.%d", cdir, mpi.world_rank);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        goto fail;
    /* The head goes first with the sum 0 and again at the end with it:
     * the regions are checksummed while the kernel writes them back
     * (started piece by piece), and fsync waits only for what is left. */
    if (write_all(fd, &h, sizeof(h)) != 0 ||
        write_all(fd, sizes, (size_t)ck.nreg * 8) != 0)
        goto fail;
    for (int i = 0; i < ck.nreg; i++)
        if (write_region(fd, i, &rsum[i]) != 0)
            goto fail;
    static const uint8_t none[8];
    if (chan_len == 0)
        chan = none;
    else if (write_all(fd, chan, chan_len) != 0)
        goto fail;
    if (obj_len > 0 && write_all(fd, objs, obj_len) != 0)
        goto fail;
    rsum[ck.nreg] = piece_sum(piece_sum((uint64_t)ck.nreg, chan, chan_len),
                              objs, obj_len);
    h.sum = image_sum(&h, sizes, rsum);
    if (pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
        goto fail;
    if (fsync(fd) != 0)
        goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    if (rename(tmp, fin) != 0)
        goto fail;
    rc = 0;
    *err = 0;
    goto out;
fail:
    *err = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
out:
    free(sizes);
    return rc;
}

/* Read n bytes at p; 0, or -1 with why set. */
static int read_exact(int fd, void *p, size_t n, const char *path, char *why,
                      size_t whylen)
{
    char *c = p;

    while (n > 0) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            snprintf(why, whylen, "%s: read failed: %s", path,
                     r < 0 ? strerror(errno) : "early end of file");
            return -1;
        }
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Is the head h (of a file of len bytes at path) this rank's image of
 * epoch?  1, or 0 with why set. */
static int head_ok(const ck_head_t *h, off_t len, uint64_t epoch,
                   const char *path, char *why, size_t whylen)
{
    if (memcmp(h->magic, CK_MAGIC, 8) != 0 || h->version != CK_VERSION) {
        snprintf(why, whylen, "%s: not a Shoal checkpoint image (version %u)",
                 path, CK_VERSION);
        return 0;
    }
    if (h->prog != prog_id()) {
        snprintf(why, whylen, "%s: written by program '%s', this is '%s'",
                 path, h->name, prog_name());
        return 0;
    }
    if (h->size != (uint32_t)mpi.world_size) {
        snprintf(why, whylen, "%s: written by a job of %u ranks, this one "
                 "has %d", path, h->size, mpi.world_size);
        return 0;
    }
    if (h->rank != (uint32_t)mpi.world_rank || h->epoch != epoch) {
        snprintf(why, whylen, "%s: holds rank %u of epoch %" PRIu64
                 ", expected rank %d of epoch %" PRIu64, path, h->rank,
                 h->epoch, mpi.world_rank, epoch);
        return 0;
    }
    if (h->nreg > ((size_t)len - sizeof(*h)) / 8) {
        snprintf(why, whylen, "%s: truncated (%u regions do not fit)", path,
                 h->nreg);
        return 0;
    }
    return 1;
}

/* Read and check this rank's image of epoch in dir: the image (malloc'd)
 * or NULL with why (a message) set.  The regions are read in pieces and
 * checksummed as they come, while the kernel reads ahead; those
 * registered already go straight into their memory (so a refused image
 * leaves them changed). */
static uint8_t *read_image(const char *dir, uint64_t epoch, char *why,
                           size_t whylen)
{
    char path[1024];
    struct stat st;
    uint8_t *buf = NULL;
    uint64_t *rsum = NULL;
    ck_head_t h;
    int fd;

    snprintf(path, sizeof(path), "%s/ckpt.%" PRIu64 "/rank.%d", dir, epoch,
             mpi.world_rank);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "%s: %s (the rank's file is missing)", path,
                 strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(ck_head_t)) {
        snprintf(why, whylen, "%s: truncated (%lld bytes, less than a head)",
                 path, (long long)st.st_size);
        goto bad;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    buf = malloc((size_t)st.st_size);
    if (buf == NULL) {
        snprintf(why, whylen, "%s: out of memory", path);
        goto bad;
    }
    if (read_exact(fd, buf, sizeof(h), path, why, whylen) != 0)
        goto bad;
    memcpy(&h, buf, sizeof(h));
    h.name[CK_NAME - 1] = '\0';
    if (!head_ok(&h, st.st_size, epoch, path, why, whylen))
        goto bad;
    ckpt_objs_scan_reset();
    size_t need = sizeof(h) + (size_t)h.nreg * 8;
    const uint64_t *sizes = (const uint64_t *)(buf + sizeof(h));
    uint64_t total = 0;
    rsum = calloc((size_t)h.nreg + 1, sizeof(*rsum));
    if (rsum == NULL) {
        snprintf(why, whylen, "%s: out of memory", path);
        goto bad;
    }
    if (read_exact(fd, buf + sizeof(h), (size_t)h.nreg * 8, path, why,
                   whylen) != 0)
        goto bad;
    for (uint32_t i = 0; i < h.nreg && total != UINT64_MAX; i++)
        total = sizes[i] > (uint64_t)st.st_size ? UINT64_MAX
                                                 : total + sizes[i];
    if (total != h.data_bytes || h.chan_bytes > (uint64_t)st.st_size ||
        h.obj_bytes > (uint64_t)st.st_size ||
        need + total + h.chan_bytes + h.obj_bytes != (uint64_t)st.st_size) {
        snprintf(why, whylen, "%s: truncated or padded (%lld bytes, the head "
                 "says %" PRIu64 ")", path, (long long)st.st_size,
                 (uint64_t)need + h.data_bytes + h.chan_bytes + h.obj_bytes);
        goto bad;
    }
    for (uint32_t i = 0; i < h.nreg; i++) {
        /* A region registered already, of its size, is read in place (no
         * copy; buf's pages there are never touched); the others into
         * buf, for a later MPIX_Checkpoint_register. */
        uint8_t *dst = (int)i < ck.nreg && ck.reg[i].size == sizes[i]
                           ? ck.reg[i].ptr : buf + need;
        uint64_t acc = i;
        for (uint64_t off = 0; off < sizes[i]; off += CK_PIECE) {
            size_t k = sizes[i] - off < CK_PIECE ? (size_t)(sizes[i] - off)
                                                 : CK_PIECE;
            if (read_exact(fd, dst + off, k, path, why, whylen) != 0)
                goto bad;
            acc = piece_sum(acc, dst + off, k);
            ckpt_objs_scan(dst + off, k);
        }
        need += sizes[i];
        rsum[i] = acc;
    }
    /* The messages in flight and the objects, into buf after the
     * regions' places. */
    if (read_exact(fd, buf + need, (size_t)(h.chan_bytes + h.obj_bytes),
                   path, why, whylen) != 0)
        goto bad;
    rsum[h.nreg] = piece_sum(piece_sum((uint64_t)h.nreg, buf + need,
                                       (size_t)h.chan_bytes),
                             buf + need + h.chan_bytes, (size_t)h.obj_bytes);
    close(fd);
    fd = -1;
    uint64_t sum = image_sum(&h, sizes, rsum);
    if (sum != h.sum) {
        snprintf(why, whylen, "%s: checksum mismatch (the image is corrupt)",
                 path);
        goto bad;
    }
    free(rsum);
    return buf;
bad:
    if (fd >= 0)
        close(fd);
    free(rsum);
    free(buf);
    return NULL;
}

/* Does DIR/ckpt.<epoch>/COMPLETE commit a checkpoint of this job? */
static int complete_ok(const char *dir, uint64_t epoch, char *why,
                       size_t whylen)
{
    uint64_t p;
    int size, c = ckpt_dir_complete(dir, epoch, &size, &p);

    if (c == 0) {
        snprintf(why, whylen, "%s/ckpt.%" PRIu64 ": not complete (no "
                 "COMPLETE: a checkpoint cut short)", dir, epoch);
        return 0;
    }
    if (c < 0) {
        snprintf(why, whylen, "%s/ckpt.%" PRIu64 "/COMPLETE: unreadable",
                 dir, epoch);
        return 0;
    }
    if (size != mpi.world_size) {
        snprintf(why, whylen, "%s/ckpt.%" PRIu64 ": a checkpoint of %d ranks, "
                 "this job has %d", dir, epoch, size, mpi.world_size);
        return 0;
    }
    if (p != prog_id()) {
        snprintf(why, whylen, "%s/ckpt.%" PRIu64 ": a checkpoint of another "
                 "program (this is '%s')", dir, epoch, prog_name());
        return 0;
    }
    return 1;
}

/* ---- the calls ------------------------------------------------------------------ */

/* Copy region i from the loaded image; MPI_SUCCESS or an error. */
static int restore_region(int i, const char *fn)
{
    ck_head_t h;
    const uint64_t *sizes;
    size_t off;

    memcpy(&h, ck.img, sizeof(h));
    if ((uint32_t)i >= h.nreg)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_SIZE, fn,
                         "region %d is registered, the checkpoint of epoch "
                         "%" PRIu64 " has only %u", i, ck.epoch, h.nreg);
    sizes = (const uint64_t *)(ck.img + sizeof(h));
    if (sizes[i] != ck.reg[i].size)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_SIZE, fn,
                         "region %d is %zu bytes, its image in the checkpoint "
                         "of epoch %" PRIu64 " is %" PRIu64, i,
                         ck.reg[i].size, ck.epoch, sizes[i]);
    off = sizeof(h) + (size_t)h.nreg * 8;
    for (int j = 0; j < i; j++)
        off += (size_t)sizes[j];
    if (ck.reg[i].size > 0)
        memcpy(ck.reg[i].ptr, ck.img + off, ck.reg[i].size);
    return MPI_SUCCESS;
}

int PMPIX_Checkpoint_register(void *ptr, size_t size)
{
    const char *fn = "MPIX_Checkpoint_register";

    MPI_CHECK_INIT(fn);
    if (ptr == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, fn, "ptr is NULL");
    for (int i = 0; i < ck.nreg; i++)
        if (ck.reg[i].ptr == ptr) { /* an update: the new size */
            ck.reg[i].size = size;
            return MPI_SUCCESS;
        }
    if (ck.nreg == ck.cap) {
        int cap = ck.cap ? 2 * ck.cap : 8;
        ck_region_t *r = realloc(ck.reg, (size_t)cap * sizeof(*r));
        if (r == NULL)
            return mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
        ck.reg = r;
        ck.cap = cap;
    }
    ck.reg[ck.nreg].ptr = ptr;
    ck.reg[ck.nreg].size = size;
    ck.nreg++;
    if (ck.loaded) {
        int rc = restore_region(ck.nreg - 1, fn);
        if (rc != MPI_SUCCESS) {
            ck.nreg--;
            return rc;
        }
    }
    return MPI_SUCCESS;
}
SHOAL_MPIX_WEAK(Checkpoint_register)

/* Do the regions registered so far match the image's (a candidate that
 * does not is refused by every rank, rather than failing on one)? */
static int regions_fit(const char *dir, const uint8_t *img, char *why,
                       size_t whylen)
{
    ck_head_t h;
    const uint64_t *sizes = (const uint64_t *)(img + sizeof(h));

    memcpy(&h, img, sizeof(h));
    for (int i = 0; i < ck.nreg; i++) {
        if ((uint32_t)i >= h.nreg) {
            snprintf(why, whylen, "%s/ckpt.%" PRIu64 ": %d regions are "
                     "registered, the image has %u", dir, h.epoch, ck.nreg,
                     h.nreg);
            return 0;
        }
        if (sizes[i] != ck.reg[i].size) {
            snprintf(why, whylen, "%s/ckpt.%" PRIu64 ": region %d is %zu "
                     "bytes here, %" PRIu64 " in the image", dir, h.epoch, i,
                     ck.reg[i].size, sizes[i]);
            return 0;
        }
    }
    return 1;
}

static int chan_check(const char *dir, const uint8_t *p, uint64_t len,
                      uint64_t epoch, char *why, size_t whylen);
static void chan_put(const uint8_t *p, uint64_t len);
static const uint8_t *chan_of(const uint8_t *img, uint64_t *len_p);

/* A private duplicate of MPI_COMM_WORLD that returns errors. */
static int private_comm(MPI_Comm *c)
{
    int rc = PMPI_Comm_dup(MPI_COMM_WORLD, c);

    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_set_errhandler(*c, MPI_ERRORS_RETURN);
    return rc;
}

/* The same for MPIX_Checkpoint_restarted, with the highest context id
 * (the same on every rank, taken without an agreement): the lowest free
 * ones may be those of the communicators the image brings back. */
static int private_comm_high(MPI_Comm *c)
{
    uint32_t ctx = 2 * (MPI_CTX_SLOTS - 1);
    int rc;

    if (mpi_ctx_claim(ctx, 1) != MPI_SUCCESS)
        return private_comm(c);
    rc = mpi_comm_build(MPI_COMM_WORLD, MPI_COMM_WORLD->group, NULL, ctx, c);
    if (rc != MPI_SUCCESS) {
        mpi_ctx_free(ctx);
        return rc;
    }
    return PMPI_Comm_set_errhandler(*c, MPI_ERRORS_RETURN);
}

/* Which registered region holds [p, p + n): 1 with *idx and *off set. */
int ckpt_region_of(const void *p, size_t n, uint32_t *idx, uint64_t *off)
{
    const uint8_t *b = p;

    for (int i = 0; i < ck.nreg; i++) {
        const uint8_t *r = ck.reg[i].ptr;
        if (b >= r && b <= r + ck.reg[i].size &&
            n <= (size_t)(r + ck.reg[i].size - b)) {
            *idx = (uint32_t)i;
            *off = (uint64_t)(b - r);
            return 1;
        }
    }
    return 0;
}

/* The memory at off in region idx, n bytes long: NULL when not there. */
void *ckpt_region_at(uint32_t idx, uint64_t off, size_t n)
{
    if (idx >= (uint32_t)ck.nreg || off > ck.reg[idx].size ||
        n > ck.reg[idx].size - off)
        return NULL;
    return (uint8_t *)ck.reg[idx].ptr + off;
}

/* Where an image's objects are, and how many bytes. */
static const uint8_t *objs_of(const uint8_t *img, uint64_t *len_p)
{
    ck_head_t h;

    memcpy(&h, img, sizeof(h));
    *len_p = h.obj_bytes;
    return img + sizeof(h) + (size_t)h.nreg * 8 + h.data_bytes + h.chan_bytes;
}

/* Make the objects of a candidate's image again: 1, or 0 with why set
 * (and nothing made). */
static int objs_put(const char *dir, const uint8_t *img, uint64_t epoch,
                    char *why, size_t whylen)
{
    ck_head_t h;
    uint64_t len, pb, lb;
    const uint8_t *p = objs_of(img, &len);
    char w[512];
    int ok;

    memcpy(&h, img, sizeof(h));
    if (len == 0)
        return 1;
    ckpt_fixed_bases(&pb, &lb);
    char moved[320] = "";
    if (pb != h.prog_base || lb != h.lib_base)
        snprintf(moved, sizeof(moved), "the program or the Shoal library is "
                 "loaded at another address than when the checkpoint was "
                 "taken (program %#" PRIx64 ", then %#" PRIx64 "; library %#"
                 PRIx64 ", then %#" PRIx64 ")", pb, h.prog_base, lb,
                 h.lib_base);
    /* The records are read in place as structures: aligned. */
    uint8_t *copy = malloc((size_t)len);
    if (copy == NULL) {
        snprintf(why, whylen, "out of memory");
        return 0;
    }
    memcpy(copy, p, (size_t)len);
    ok = ckpt_objs_load(copy, len, moved[0] ? moved : NULL, w, sizeof(w));
    free(copy);
    if (!ok)
        snprintf(why, whylen, "%s/ckpt.%" PRIu64 "/rank.%d: %s", dir, epoch,
                 mpi.world_rank, w);
    return ok;
}

/*
 * At MPI_Init, with a checkpoint directory: the objects' arena, and on a
 * restart, allocations above every cell the candidates' images used, so
 * that the cells the chosen one puts objects back in are free.  Each
 * rank reads the heads of its own images only.
 */
void mpi_ckpt_init_arena(void)
{
    const char *dir = base_cfg.CKPT_DIR;
    uint64_t ep[CK_MAX_CANDIDATES], floor = 0;
    char path[1024];
    int n;

    if (dir == NULL || dir[0] == '\0' || !base_cfg.CKPT_NORANDOM ||
        strlen(dir) > CK_DIR_MAX)
        return;
    mpi_arena_init();
    if (!base_cfg.CKPT_RESTART || !mpi_arena_on())
        return;
    n = ckpt_dir_epochs(dir, ep, CK_MAX_CANDIDATES);
    for (int i = 0; i < n; i++) {
        ck_head_t h;
        snprintf(path, sizeof(path), "%s/ckpt.%" PRIu64 "/rank.%d", dir,
                 ep[i], mpi.world_rank);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
            memcmp(h.magic, CK_MAGIC, 8) == 0 && h.version == CK_VERSION &&
            h.arena_hwm > floor && h.arena_hwm <= MPI_ARENA_CELLS)
            floor = h.arena_hwm;
        close(fd);
    }
    mpi_arena_floor((uint32_t)floor);
}

int PMPIX_Checkpoint_restarted(int *flag)
{
    const char *fn = "MPIX_Checkpoint_restarted";
    const char *dir = base_cfg.CKPT_DIR;
    uint64_t ep[CK_MAX_CANDIDATES];
    int n = 0, rc, pick = -1;
    uint8_t *img = NULL;
    char why[1536];
    MPI_Comm c;

    MPI_CHECK_INIT(fn);
    if (flag == NULL)
        return mpi_error(NULL, MPI_ERR_ARG, fn, "flag is NULL");
    if (ck.asked || !base_cfg.CKPT_RESTART) {
        ck.asked = 1;
        *flag = ck.loaded;
        return MPI_SUCCESS;
    }
    if (dir == NULL || dir[0] == '\0')
        return mpi_error(NULL, MPI_ERR_ARG, fn, "SHOAL_CKPT_RESTART is set "
                         "but SHOAL_CKPT_DIR is empty (use shoalrun "
                         "--restart DIR)");
    if (strlen(dir) > CK_DIR_MAX)
        return mpi_error(NULL, MPI_ERR_ARG, fn, "SHOAL_CKPT_DIR is longer "
                         "than %d bytes", CK_DIR_MAX);
    rc = private_comm_high(&c);
    if (rc != MPI_SUCCESS)
        return mpi_error(NULL, rc, fn, "cannot duplicate MPI_COMM_WORLD");
    private_ctx = c->ctx;
    /* Rank 0 lists the candidates, newest first; every rank checks its
     * own image of each; the newest valid everywhere wins. */
    if (mpi.world_rank == 0)
        n = ckpt_dir_epochs(dir, ep, CK_MAX_CANDIDATES);
    rc = PMPI_Bcast(&n, 1, MPI_INT, 0, c);
    if (rc == MPI_SUCCESS && n > 0)
        rc = PMPI_Bcast(ep, n, MPI_UINT64_T, 0, c);
    /* One candidate at a time, newest first, each rank reading its image
     * (into the registered regions: see read_image), until one is valid
     * on every rank. */
    for (int i = 0; i < n && rc == MPI_SUCCESS && pick < 0; i++) {
        int ok = complete_ok(dir, ep[i], why, sizeof(why)), made = 0;
        if (ok) {
            img = read_image(dir, ep[i], why, sizeof(why));
            ok = img != NULL && regions_fit(dir, img, why, sizeof(why));
            /* The objects first: the messages in flight may be on the
             * communicators they bring back. */
            if (ok)
                ok = made = objs_put(dir, img, ep[i], why, sizeof(why));
            if (ok) {
                uint64_t clen = 0;
                const uint8_t *chan = chan_of(img, &clen);
                ok = chan_check(dir, chan, clen, ep[i], why, sizeof(why));
            }
        }
        /* Said before the ranks agree, so that it is said before any of
         * them can end the job. */
        if (!ok)
            base_error("ckpt", "rank %d: cannot restart from %s",
                       mpi.world_rank, why);
        rc = PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, c);
        if (rc == MPI_SUCCESS && ok) {
            pick = i;
            ckpt_objs_commit();
        } else {
            if (made)
                ckpt_objs_undo();
            free(img);
            img = NULL;
        }
    }
    /* The messages that were in flight at the cut go back before any
     * rank returns (each puts its own back before the all-reduce below),
     * so none of them is overtaken by what the restarted job sends. */
    if (rc == MPI_SUCCESS && pick >= 0) {
        uint64_t clen = 0;
        const uint8_t *chan = chan_of(img, &clen);
        ck.epoch = ep[pick];
        chan_put(chan, clen);
        rc = PMPI_Barrier(c);
    }
    private_ctx = UINT32_MAX;
    PMPI_Comm_free(&c);
    if (rc != MPI_SUCCESS)
        return mpi_error(MPI_COMM_WORLD, rc, fn, "the ranks could not agree "
                         "on a checkpoint");
    if (pick < 0)
        return mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_SUCH_FILE, fn,
                         "no complete and valid checkpoint in %s for this "
                         "job ('%s', %d ranks): cannot restart", dir,
                         prog_name(), mpi.world_size);
    ck.img = img; /* the registered regions are filled already */
    ck.epoch = ep[pick];
    ck.loaded = 1;
    ck.asked = 1;
    if (mpi.world_rank == 0)
        base_info("ckpt", "restarting from %s/ckpt.%" PRIu64, dir, ck.epoch);
    *flag = 1;
    return MPI_SUCCESS;
}
SHOAL_MPIX_WEAK(Checkpoint_restarted)

/*
 * The messages in flight across the cut.  A message that had arrived here
 * unreceived goes into the image when the checkpoint can carry it: its
 * bytes here (eager, or a rendezvous pull_rendezvous received), on the
 * point-to-point context of a communicator carried (carried_comm).  A
 * synchronous one goes with its sender's request id, acked at its match
 * after a restart (the sender's image carries the request).  Anything
 * else that crosses the cut makes the checkpoint fail with
 * MPI_ERR_PENDING: a posted receive that cannot be carried (ckpt_objs.c)
 * or a send still queued, a message on another communicator or a
 * collective's (and a rendezvous beside any of those, or beside a
 * synchronous send, which is then not received).
 */
/* The intracommunicator here whose point-to-point context is ctx, when
 * the checkpoint can carry its messages: MPI_COMM_WORLD, MPI_COMM_SELF,
 * and the program's own intracommunicators not revoked (the registry of
 * mpi/core/ft.c, kept under SHOAL_CKPT_DIR).  NULL otherwise:
 * intercommunicators, a collective's context (ctx + 1), the library's. */
static MPI_Comm carried_comm(uint32_t ctx)
{
    if (ctx == private_ctx)
        return NULL; /* the program's communicator that had it is not made
                        yet: this one is the library's */
    if (ctx == MPI_COMM_WORLD->ctx)
        return MPI_COMM_WORLD;
    if (ctx == MPI_COMM_SELF->ctx)
        return MPI_COMM_SELF;
    if (mpi_ft.by_ctx == NULL || ctx >= MPI_CTX_MAX)
        return NULL;
    MPI_Comm c = mpi_ft.by_ctx[ctx];
    if (c == NULL || !mpi_comm_ok(c) || c->ctx != ctx || c->is_inter ||
        c->revoked)
        return NULL;
    return c;
}

/* A digest of c's members: their world ranks in c's rank order. */
static uint64_t group_digest(MPI_Comm c)
{
    return base_sum64(c->peer_world, (size_t)c->size * sizeof(int),
                      (uint64_t)c->size);
}

typedef struct ck_chan {
    uint8_t *buf; /* ck_msg_t records */
    size_t len, cap;
    long saved, unsaved, posted, queued;
    int nomem;
} ck_chan_t;

static void chan_add(void *arg, const mpi_umsg_t *u)
{
    ck_chan_t *k = arg;
    ck_msg_t m;
    MPI_Comm c = carried_comm(u->ctx);

    if (u->rdv || c == NULL || ((u->flags & MPI_MF_SYNC) && u->sreq == 0)) {
        k->unsaved++;
        return;
    }
    size_t need = sizeof(m) + (size_t)CK_PAD8((uint64_t)u->bytes);
    if (k->len + need > k->cap) {
        size_t cap = k->cap ? k->cap : 4096;
        while (cap < k->len + need)
            cap *= 2;
        uint8_t *b = realloc(k->buf, cap);
        if (b == NULL) {
            k->nomem = 1;
            k->unsaved++;
            return;
        }
        k->buf = b;
        k->cap = cap;
    }
    m = (ck_msg_t){.ctx = u->ctx, .src = u->src, .tag = u->tag,
                   .src_world = u->src_world, .bytes = (uint64_t)u->bytes,
                   .comm_size = (uint32_t)c->size, .group = group_digest(c),
                   .flags = (u->flags & MPI_MF_SYNC) ? CK_MSG_SYNC : 0,
                   .sreq = (u->flags & MPI_MF_SYNC) ? u->sreq : 0};
    memcpy(k->buf + k->len, &m, sizeof(m));
    memcpy(k->buf + k->len + sizeof(m), u->data, (size_t)u->bytes);
    memset(k->buf + k->len + sizeof(m) + u->bytes, 0,
           need - sizeof(m) - (size_t)u->bytes);
    k->len += need;
    k->saved++;
}

/* This rank's point-to-point work that crosses the cut, apart from
 * context ctx (and ctx + 1) of the checkpoint's own communicator: the
 * messages to save into k (reset first) and what cannot be saved. */
static void chan_gather(uint32_t ctx, ck_chan_t *k)
{
    k->len = 0;
    k->saved = k->unsaved = k->posted = 0;
    k->nomem = 0;
    mpi_lock();
    mpi_p2p_pending(ctx, &k->posted, chan_add, k);
    k->queued = !base_list_empty(&mpi_pq.deferred) ||
                !base_list_empty(&mpi_pq.push) ||
                !base_list_empty(&mpi_pq.poll);
    mpi_unlock();
}

/* Nonblocking collectives still running here, of the communicators
 * finish_colls let run to their end (arg: 1 for every intracommunicator
 * found safe, 0 for MPI_COMM_WORLD's alone); called with the engine lock
 * held, by mpi_wait_until. */
static int colls_done(void *arg)
{
    int all = *(const int *)arg;

    for (const base_list_t *e = mpi_pq.poll.next; e != &mpi_pq.poll;
         e = e->next) {
        const struct shoal_mpi_request *r =
            BASE_CONTAINER_OF(e, struct shoal_mpi_request, poll_link);
        if (r->kind == MPI_REQ_COLL && !mpi_req_is_isendrecv(r) &&
            (r->comm == MPI_COMM_WORLD || (all && !r->comm->is_inter)))
            return 0;
    }
    return 1;
}

/* The intracommunicator here of context ctx (the registry of
 * mpi/core/ft.c), or NULL. */
static MPI_Comm comm_of_ctx(uint32_t ctx)
{
    if (ctx == MPI_COMM_WORLD->ctx)
        return MPI_COMM_WORLD;
    if (mpi_ft.by_ctx == NULL || ctx >= MPI_CTX_MAX)
        return NULL;
    MPI_Comm c = mpi_ft.by_ctx[ctx];
    return c != NULL && mpi_comm_ok(c) && c->ctx == ctx && !c->is_inter &&
                   !c->revoked
               ? c
               : NULL;
}

/* Collective calls started on c here (the collective layer's count). */
static uint32_t colls_started(MPI_Comm c)
{
    const coll_comm_t *cc = c->coll;

    return cc != NULL ? cc->seq : 0;
}

/* The distinct contexts of the intracommunicators with a nonblocking
 * collective running here, into v (cap entries, UINT32_MAX when unused);
 * -1 when one cannot be told (an intercommunicator's, a revoked one's,
 * more than cap). */
static int colls_running(uint32_t *v, int cap)
{
    int n = 0;

    for (int i = 0; i < cap; i++)
        v[i] = UINT32_MAX;
    mpi_lock();
    for (const base_list_t *e = mpi_pq.poll.next; e != &mpi_pq.poll;
         e = e->next) {
        const struct shoal_mpi_request *r =
            BASE_CONTAINER_OF(e, struct shoal_mpi_request, poll_link);
        if (r->kind != MPI_REQ_COLL || r->comm == MPI_COMM_WORLD ||
            mpi_req_is_isendrecv(r))
            continue; /* MPI_Isendrecv's: refused later (queued) */
        /* Only a nonblocking collective's schedule is counted by the
         * collective layer; a started persistent one's start is not, nor
         * an MPI_Comm_idup, an agreement's or a shrink's. */
        if (!mpi_coll_req_is_sched(r) || r->persistent ||
            comm_of_ctx(r->comm->ctx) != r->comm) {
            n = -1;
            break;
        }
        int k = 0;
        while (k < n && v[k] != r->comm->ctx)
            k++;
        if (k == n) {
            if (n == cap) {
                n = -1;
                break;
            }
            v[n++] = r->comm->ctx;
        }
    }
    mpi_unlock();
    return n;
}

#define CK_COLLS_MAX 64 /* communicators with collectives running, a rank */

/*
 * The nonblocking collectives started before the checkpoint run to their
 * end at the cut: their requests complete (the program's MPI_Wait after
 * the checkpoint returns at once) and their results are in the program's
 * buffers, and so in the image when registered.  MPI_COMM_WORLD's always:
 * every rank started them before its own MPIX_Checkpoint, a
 * communicator's collectives being called in one order by all its ranks
 * and the checkpoint being one of MPI_COMM_WORLD's.  Another
 * communicator's only when every member has started as many collectives
 * on it as this rank: its collectives need not be ordered against
 * MPI_COMM_WORLD's, so a member may start one only after the checkpoint,
 * and waiting for it would deadlock.  So the ranks exchange which
 * communicators have collectives running (by context id) and each
 * member's count of collectives started on each (coll_comm_t.seq); when
 * every count agrees everywhere, all run to their end, else only
 * MPI_COMM_WORLD's, and the others make the checkpoint fail
 * (MPI_ERR_PENDING), as do intercommunicators'.  Two small
 * all-gathers on MPI_COMM_WORLD, only when some rank has a collective of
 * another communicator running.
 */
static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return x < y ? -1 : x > y;
}

/* Whether every member of each communicator with a collective running
 * somewhere has started as many collectives on it as every other
 * (finish_colls); collective over MPI_COMM_WORLD.  *ok_p: 1 when so. */
static int colls_agree(const uint32_t *mine, int n, int *ok_p)
{
    int p = mpi.world_size, u = 0, ok, low = 0, rc;
    uint32_t *all = malloc((size_t)p * CK_COLLS_MAX * sizeof(*all));

    ok = all != NULL;
    rc = PMPI_Allreduce(&ok, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || !low) {
        free(all);
        *ok_p = 0;
        return rc;
    }
    rc = PMPI_Allgather(mine, CK_COLLS_MAX, MPI_UINT32_T, all, CK_COLLS_MAX,
                        MPI_UINT32_T, MPI_COMM_WORLD);
    /* The contexts named anywhere, sorted and distinct: the same list on
     * every rank. */
    if (rc == MPI_SUCCESS) {
        qsort(all, (size_t)p * CK_COLLS_MAX, sizeof(*all), cmp_u32);
        for (size_t i = 0; i < (size_t)p * CK_COLLS_MAX; i++)
            if (all[i] != UINT32_MAX && (u == 0 || all[u - 1] != all[i]))
                all[u++] = all[i];
    }
    /* Each rank's count on each (UINT32_MAX: not a member). */
    uint32_t *seqs = malloc(((size_t)u + 1) * sizeof(*seqs));
    uint32_t *allseq = malloc((size_t)p * ((size_t)u + 1) * sizeof(*allseq));
    ok = seqs != NULL && allseq != NULL;
    for (int i = 0; ok && i < u; i++) {
        MPI_Comm c = comm_of_ctx(all[i]);
        seqs[i] = c != NULL ? colls_started(c) : UINT32_MAX;
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(&ok, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    ok = rc == MPI_SUCCESS && low;
    if (ok && u > 0)
        rc = PMPI_Allgather(seqs, u, MPI_UINT32_T, allseq, u, MPI_UINT32_T,
                            MPI_COMM_WORLD);
    /* Each of this rank's: every member's count is ours. */
    for (int i = 0; ok && rc == MPI_SUCCESS && i < n; i++) {
        uint32_t *at = bsearch(&mine[i], all, (size_t)u, sizeof(*all),
                               cmp_u32);
        MPI_Comm c = comm_of_ctx(mine[i]);
        if (at == NULL || c == NULL) {
            ok = 0;
            break;
        }
        size_t k = (size_t)(at - all);
        for (int m = 0; m < c->size; m++)
            if (allseq[(size_t)c->peer_world[m] * (size_t)u + k] != seqs[k])
                ok = 0;
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(&ok, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    *ok_p = rc == MPI_SUCCESS && low;
    free(all);
    free(seqs);
    free(allseq);
    return rc;
}

static int finish_colls(void)
{
    uint32_t mine[CK_COLLS_MAX];
    int n = colls_running(mine, CK_COLLS_MAX), any = 0, everything = 0;
    int rc = PMPI_Allreduce(&n, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

    /* -1 here (one that cannot be told) makes any 0 only if nobody has
     * one: then nothing runs but MPI_COMM_WORLD's here anyway. */
    if (rc == MPI_SUCCESS && any != 0) {
        int ok = n >= 0, low = 0;
        rc = PMPI_Allreduce(&ok, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (rc == MPI_SUCCESS && low)
            rc = colls_agree(mine, n, &everything);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    if (everything)
        base_debug("ckpt", "rank %d: the nonblocking collectives of %d "
                   "communicators run to their end at the cut",
                   mpi.world_rank, n);
    return mpi_wait_until(colls_done, &everything);
}

/* One unexpected message of MPI_COMM_WORLD or MPI_COMM_SELF, as
 * pull_rendezvous takes it out and puts it back. */
typedef struct ck_pull {
    uint32_t ctx;
    int src, tag, src_world, rdv, sync;
    uint64_t sreq;
    MPI_Count bytes;
    void *data;
} ck_pull_t;

typedef struct ck_pulls {
    ck_pull_t *m;
    long n, cap, rdv;
    int bad; /* a message the pull cannot take (no memory, a library tag) */
} ck_pulls_t;

static void pull_add(void *arg, const mpi_umsg_t *u)
{
    ck_pulls_t *l = arg;

    if (carried_comm(u->ctx) == NULL)
        return;
    if (u->tag < 0 || ((u->flags & MPI_MF_SYNC) && u->sreq == 0)) {
        l->bad = 1;
        return;
    }
    if (l->n == l->cap) {
        long cap = l->cap ? 2 * l->cap : 64;
        ck_pull_t *m = realloc(l->m, (size_t)cap * sizeof(*m));
        if (m == NULL) {
            l->bad = 1;
            return;
        }
        l->m = m;
        l->cap = cap;
    }
    l->m[l->n++] = (ck_pull_t){.ctx = u->ctx, .src = u->src, .tag = u->tag,
                               .src_world = u->src_world, .rdv = u->rdv,
                               .sync = (u->flags & MPI_MF_SYNC) != 0,
                               .sreq = u->sreq, .bytes = u->bytes};
    l->rdv += u->rdv != 0;
}

/*
 * A rendezvous that waits here unexpected at the cut (a message above
 * SHOAL_MPI_EAGER whose receive is not posted) has its bytes at its
 * sender, whose request the restarted job will not have.  So the cut
 * receives it now into the library's memory (the sender's call completes,
 * as it may once its bytes are buffered): every unexpected message of
 * MPI_COMM_WORLD and MPI_COMM_SELF is taken out in its order of arrival
 * (MPI_Improbe, MPI_Mrecv) and put back in the same order as one whose
 * bytes are here, which the image carries like any eager message.  A
 * synchronous send's message is not acked by that receive
 * (mpi_p2p_hold_sync_acks): it goes back owing its sender the ack, which
 * the program's receive sends.  Done only when nothing else crosses the
 * cut here (no receive posted, no library message, no send queued):
 * otherwise the checkpoint is refused anyway.  MPI_SUCCESS, or the error
 * of a receive.
 */
static int pull_rendezvous(uint32_t ctx)
{
    ck_pulls_t l = {0};
    long posted = 0;
    int rc = MPI_SUCCESS;
    long i;

    mpi_lock();
    mpi_p2p_pending(ctx, &posted, pull_add, &l);
    int queued = !base_list_empty(&mpi_pq.deferred) ||
                 !base_list_empty(&mpi_pq.push) ||
                 !base_list_empty(&mpi_pq.poll);
    mpi_unlock();
    if (l.rdv == 0 || l.bad || posted != ckpt_objs_posted(ctx) || queued) {
        free(l.m);
        return MPI_SUCCESS;
    }
    /* Memory for all first: none is received that cannot be kept (with
     * too little, the rendezvous stays and the checkpoint is refused). */
    for (i = 0; i < l.n; i++) {
        l.m[i].data = malloc(l.m[i].bytes > 0 ? (size_t)l.m[i].bytes : 1);
        if (l.m[i].data == NULL) {
            while (i-- > 0)
                free(l.m[i].data);
            free(l.m);
            return MPI_SUCCESS;
        }
    }
    for (i = 0; i < l.n; i++) {
        ck_pull_t *m = &l.m[i];
        MPI_Comm cm = carried_comm(m->ctx);
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        int flag = 0;
        if (cm == NULL) { /* freed by another thread meanwhile */
            rc = MPI_ERR_COMM;
            break;
        }
        rc = PMPI_Improbe(m->src, m->tag, cm, &flag, &msg, &st);
        if (rc == MPI_SUCCESS && !flag)
            rc = MPI_ERR_INTERN; /* it was listed under the lock */
        if (rc == MPI_SUCCESS) {
            mpi_p2p_hold_sync_acks = 1;
            rc = PMPI_Mrecv(m->data, m->bytes, MPI_BYTE, &msg, &st);
            mpi_p2p_hold_sync_acks = 0;
        }
        if (rc != MPI_SUCCESS)
            break; /* those after stay where they are */
    }
    /* Back, in their order, those taken out (a failed receive's message
     * is lost with its error). */
    mpi_lock();
    for (long j = 0; j < i; j++) {
        ck_pull_t *m = &l.m[j];
        mpi_in_t in = {
            .ctx = m->ctx, .ep = mpi_ep_of(m->ctx), .src = m->src,
            .tag = m->tag,
            .flags = MPI_MF_PULLED | (m->sync ? MPI_MF_SYNC : 0u),
            .rdv = 0, .src_world = m->src_world, .sreq = m->sreq,
            .bytes = m->bytes, .data = m->data,
        };
        mpi_arrive(&in);
    }
    mpi_unlock();
    if (rc == MPI_SUCCESS)
        base_debug("ckpt", "rank %d: %ld rendezvous received at the cut, "
                   "%ld messages put back", mpi.world_rank, l.rdv, l.n);
    for (long j = 0; j < l.n; j++)
        free(l.m[j].data);
    free(l.m);
    return rc;
}

/* The messages of a loaded image (p, len bytes): 1 when every record is
 * well formed and its communicator is here again, with the same size and
 * members (the restarted program made it before MPIX_Checkpoint_restarted,
 * in the same order, so it got the same context id), else 0 with why set.
 * The image's checksum held, so a malformed record was written so: it is
 * refused all the same. */
static int chan_check(const char *dir, const uint8_t *p, uint64_t len,
                      uint64_t epoch, char *why, size_t whylen)
{
    uint64_t off = 0;

    while (off < len) {
        ck_msg_t m;
        if (len - off < sizeof(m))
            goto bad;
        memcpy(&m, p + off, sizeof(m));
        if (m.bytes > len - off - sizeof(m) ||
            CK_PAD8(m.bytes) > len - off - sizeof(m) || m.src < 0 ||
            m.src_world < 0 || m.src_world >= mpi.world_size ||
            m.comm_size == 0 || (uint32_t)m.src >= m.comm_size ||
            (m.flags & ~CK_MSG_SYNC) != 0 ||
            ((m.flags & CK_MSG_SYNC) != 0) != (m.sreq != 0))
            goto bad;
        MPI_Comm c = carried_comm(m.ctx);
        if (c == NULL || (uint32_t)c->size != m.comm_size ||
            group_digest(c) != m.group) {
            snprintf(why, whylen, "%s/ckpt.%" PRIu64 "/rank.%d: a message "
                     "was in flight at the checkpoint on a communicator of "
                     "%u ranks (context id %u) that this process has not "
                     "made again%s: make the program's communicators "
                     "(MPI_Comm_dup, MPI_Comm_split, ...) before "
                     "MPIX_Checkpoint_restarted, in the same order as "
                     "before the checkpoint", dir, epoch, mpi.world_rank,
                     m.comm_size, m.ctx,
                     c == NULL ? "" : " (that context id has another group)");
            return 0;
        }
        if (c->peer_world[m.src] != m.src_world)
            goto bad;
        off += sizeof(m) + CK_PAD8(m.bytes);
    }
    return 1;
bad:
    snprintf(why, whylen, "%s/ckpt.%" PRIu64 "/rank.%d: a message in "
             "flight at byte %" PRIu64 " of its %" PRIu64 " is malformed",
             dir, epoch, mpi.world_rank, off, len);
    return 0;
}

/* Put the messages of a loaded image (checked by chan_check) back where
 * they were: unexpected, in their order, before anything the restarted
 * job sends. */
static void chan_put(const uint8_t *p, uint64_t len)
{
    long n = 0;

    mpi_lock();
    for (uint64_t off = 0; off < len; n++) {
        ck_msg_t m;
        memcpy(&m, p + off, sizeof(m));
        MPI_Comm c = carried_comm(m.ctx);
        mpi_in_t in = {
            .ctx = m.ctx, .ep = c->ep, .src = m.src, .tag = m.tag,
            .flags = MPI_MF_RESTORED |
                     ((m.flags & CK_MSG_SYNC) ? MPI_MF_SYNC : 0u),
            .rdv = 0, .src_world = m.src_world, .sreq = m.sreq,
            .bytes = (MPI_Count)m.bytes, .data = p + off + sizeof(m),
        };
        mpi_arrive(&in);
        off += sizeof(m) + CK_PAD8(m.bytes);
    }
    mpi_unlock();
    if (n > 0)
        base_debug("ckpt", "rank %d: %ld messages in flight at the "
                   "checkpoint are back", mpi.world_rank, n);
}

/* Where an image's messages are, and how many bytes. */
static const uint8_t *chan_of(const uint8_t *img, uint64_t *len_p)
{
    ck_head_t h;

    memcpy(&h, img, sizeof(h));
    *len_p = h.chan_bytes;
    return img + sizeof(h) + (size_t)h.nreg * 8 + h.data_bytes;
}

/* SHOAL_CKPT_KILL=RANK@EPOCH:PHASE (tests): die here. */
static void test_kill(uint64_t epoch, const char *phase)
{
    const char *s = base_cfg.CKPT_KILL;
    unsigned long long e;
    char ph[16];
    int r;

    if (s == NULL || s[0] == '\0')
        return;
    if (sscanf(s, "%d@%llu:%15s", &r, &e, ph) == 3 &&
        r == mpi.world_rank && e == epoch && strcmp(ph, phase) == 0)
        raise(SIGKILL);
}

int PMPIX_Checkpoint(MPI_Comm comm)
{
    const char *fn = "MPIX_Checkpoint";
    const char *dir = base_cfg.CKPT_DIR;
    char cdir[960], path[1024];
    uint64_t epoch = 0, old[CK_MAX_CANDIDATES];
    int rc, nold = 0, ok, err = 0, p = mpi.world_size, me = mpi.world_rank;
    ck_chan_t k = {0};
    MPI_Comm c;

    MPI_CHECK_INIT(fn);
    if (comm != MPI_COMM_WORLD)
        return mpi_error(mpi_comm_ok(comm) ? comm : NULL, MPI_ERR_COMM, fn,
                         "comm must be MPI_COMM_WORLD (checkpoints are of "
                         "the whole job)");
    if (dir == NULL || dir[0] == '\0')
        return mpi_error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                         "no checkpoint directory: run with shoalrun "
                         "--checkpoint-dir DIR (SHOAL_CKPT_DIR)");
    if (strlen(dir) > CK_DIR_MAX)
        return mpi_error(comm, MPI_ERR_ARG, fn, "SHOAL_CKPT_DIR is longer "
                         "than %d bytes", CK_DIR_MAX);
    rc = mpi_ft_entry(comm);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "a rank died or MPI_COMM_WORLD was "
                         "revoked");
    rc = finish_colls();
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "a nonblocking collective started "
                         "before the checkpoint failed");
    rc = private_comm(&c);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "cannot duplicate MPI_COMM_WORLD");

    /* Phase 1, the cut: sends still queued here are pending requests.
     * Then a marker to every peer on the private communicator: the
     * channels are FIFO, so once every marker arrived every message sent
     * before the call is here, matched or unexpected. */
    mpi_progress();
    chan_gather(c->ctx, &k);
    ok = k.queued == 0;
    {
        MPI_Request *r = malloc(2 * (size_t)p * sizeof(*r));
        int nr = 0;
        if (r == NULL) {
            PMPI_Comm_free(&c);
            free(k.buf);
            return mpi_error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
        }
        for (int i = 0; i < p && rc == MPI_SUCCESS; i++) {
            if (i == me)
                continue;
            rc = PMPI_Irecv(NULL, 0, MPI_BYTE, i, CK_TAG, c, &r[nr++]);
            if (rc == MPI_SUCCESS)
                rc = PMPI_Isend(NULL, 0, MPI_BYTE, i, CK_TAG, c, &r[nr++]);
        }
        if (rc == MPI_SUCCESS)
            rc = PMPI_Waitall(nr, r, MPI_STATUSES_IGNORE);
        free(r);
    }
    /* Rendezvous waiting here are received now, and every rank waits
     * until all are: a sender's last bytes are then out of its queues
     * when it looks at them. */
    if (rc == MPI_SUCCESS)
        rc = pull_rendezvous(c->ctx);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Barrier(c);
    if (rc == MPI_SUCCESS) {
        int was_queued = !ok;
        chan_gather(c->ctx, &k);
        /* Receives posted into registered regions, whose requests live
         * in the arena, travel in the image (ckpt_objs.c). */
        k.posted -= ckpt_objs_posted(c->ctx);
        int here = !was_queued && k.posted == 0 && k.unsaved == 0 &&
                   k.queued == 0;
        rc = PMPI_Allreduce(&here, &ok, 1, MPI_INT, MPI_MIN, c);
        if (rc == MPI_SUCCESS && !ok) {
            PMPI_Comm_free(&c);
            free(k.buf);
            if (!here)
                return mpi_error(comm, MPI_ERR_PENDING, fn,
                                 "communication crosses the checkpoint: "
                                 "here %ld receives posted that it cannot "
                                 "carry (their buffers outside the "
                                 "registered regions), %ld messages "
                                 "unreceived that it cannot carry "
                                 "(on an intercommunicator, a revoked or "
                                 "the library's own communicator, or a "
                                 "rendezvous beside those or beside a "
                                 "synchronous send%s), %s; "
                                 "complete them first", k.posted,
                                 k.unsaved,
                                 k.nomem ? "; or no memory to copy them"
                                         : "",
                                 k.queued || was_queued
                                     ? "requests running (sends queued, "
                                       "nonblocking collectives of other "
                                       "communicators, file accesses)"
                                     : "no request running");
            return mpi_error(comm, MPI_ERR_PENDING, fn,
                             "communication crosses the checkpoint on "
                             "another rank; complete it first");
        }
    }

    /* Phase 2: rank 0 picks the epoch (past every ckpt.<n> there is, torn
     * ones too) and makes its directory. */
    if (rc == MPI_SUCCESS) {
        uint64_t msg[2] = {0, 0};
        if (me == 0) {
            remove_join(); /* the last checkpoint's cleanup is over */
            nold = ckpt_dir_epochs(dir, old, CK_MAX_CANDIDATES);
            epoch = nold > 0 ? old[0] + 1 : 1;
            if (ck.loaded && epoch <= ck.epoch)
                epoch = ck.epoch + 1;
            snprintf(cdir, sizeof(cdir), "%s/ckpt.%" PRIu64, dir, epoch);
            msg[0] = epoch;
            msg[1] = mkdir_p(cdir) == 0 ? 0 : (uint64_t)errno;
        }
        rc = PMPI_Bcast(msg, 2, MPI_UINT64_T, 0, c);
        epoch = msg[0];
        if (rc == MPI_SUCCESS && msg[1] != 0) {
            PMPI_Comm_free(&c);
            free(k.buf);
            return mpi_error(comm, MPI_ERR_IO, fn, "cannot make %s/ckpt.%"
                             PRIu64 ": %s", dir, epoch,
                             strerror((int)msg[1]));
        }
    }
    snprintf(cdir, sizeof(cdir), "%s/ckpt.%" PRIu64, dir, epoch);

    /* Phase 3: every rank writes its image (tmp, fsync, rename). */
    int wrote = 0;
    if (rc == MPI_SUCCESS) {
        test_kill(epoch, "made");
        uint8_t *objs = NULL;
        size_t olen = 0;
        int here = ckpt_objs_save(c->ctx, &objs, &olen) == MPI_SUCCESS;
        if (!here)
            err = ENOMEM;
        else
            here = write_image(cdir, epoch, k.buf, k.len, objs, olen,
                               &err) == 0;
        free(objs);
        wrote = here;
        if (here)
            test_kill(epoch, "written");
        rc = PMPI_Allreduce(&here, &ok, 1, MPI_INT, MPI_MIN, c);
    }

    /* Phase 4: all confirmed: rank 0 commits (COMPLETE, fsync'd, and the
     * directories), then removes the older checkpoints. */
    if (rc == MPI_SUCCESS && ok) {
        int done = 1;
        if (me == 0) {
            int fd;
            snprintf(path, sizeof(path), "%s/COMPLETE", cdir);
            char line[160];
            int len = snprintf(line, sizeof(line),
                               "shoal-checkpoint 1 epoch=%" PRIu64
                               " ranks=%d prog=%" PRIx64 "\n",
                               epoch, p, prog_id());
            done = fsync_path(cdir) == 0;
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (!done || fd < 0 || write_all(fd, line, (size_t)len) != 0 ||
                fsync(fd) != 0)
                done = 0;
            if (fd >= 0 && close(fd) != 0)
                done = 0;
            if (!done)
                err = errno;
            if (done && (fsync_path(cdir) != 0 || fsync_path(dir) != 0)) {
                done = 0;
                err = errno;
            }
            if (done)
                test_kill(epoch, "complete");
        }
        rc = PMPI_Bcast(&done, 1, MPI_INT, 0, c);
        ok = done;
        if (rc == MPI_SUCCESS && ok && me == 0)
            remove_later(dir, old, nold);
    }
    PMPI_Comm_free(&c);
    free(k.buf);
    if (rc != MPI_SUCCESS)
        return mpi_error(comm, rc, fn, "the checkpoint's coordination "
                         "failed");
    if (!ok) {
        if (me == 0)
            remove_ckpt_dir(cdir); /* never complete: not used anyway */
        if (err != 0 || (me != 0 && !wrote))
            return mpi_error(comm, MPI_ERR_IO, fn, "writing %s failed here: "
                             "%s; the previous checkpoint stays", cdir,
                             strerror(err ? err : EIO));
        return mpi_error(comm, MPI_ERR_IO, fn, "writing %s failed on another "
                         "rank; the previous checkpoint stays", cdir);
    }
    return MPI_SUCCESS;
}
SHOAL_MPIX_WEAK(Checkpoint)
