/*
 * MPI_Bcast and MPI_Ibcast across hosts, for the multicast broadcast
 * (docs/DATAGRAM.md): every size of a list from every root of a list, the
 * data checked on every rank, a derived datatype among them.
 *
 *   mh_bcast [--sizes LIST] [--roots all|LIST] [--reps N] [--sleep-rank R]
 *            [--die-rank R]
 *
 * LIST is comma-separated sizes with k/m suffixes (default 1,...,64m).
 * --sleep-rank R: rank R sleeps 300 ms before each broadcast (a late
 * receiver).  --die-rank R: rank R kills itself (SIGKILL) in the middle of
 * the first broadcast of 16 MiB or more (the others must get an error, not
 * hang).  --exit-rank R: rank R exits with status 0 (a death the launcher
 * leaves to the library to report) 30 ms into that broadcast.
 * --overlap K: then, for each size, K MPI_Ibcasts at once (roots 0, 1,
 * ...), each into its own buffer, completed by one MPI_Waitall.  Prints
 * "ok bcast N calls" on rank 0, or "FAIL ..." and exits 1; a broadcast
 * that fails prints "error rank R: MESSAGE" and the rank exits 2.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static int me, np;

static uint8_t pattern(long size, int root, int rep, long i)
{
    return (uint8_t)(i * 131 + size * 7 + root * 31 + rep * 17 + (i >> 12));
}

static long parse_size(const char *t)
{
    char *end;
    long v = strtol(t, &end, 10);
    if (*end == 'k' || *end == 'K')
        v <<= 10;
    else if (*end == 'm' || *end == 'M')
        v <<= 20;
    return v;
}

static int fill_list(const char *text, long *out, int cap)
{
    char *copy = strdup(text), *save = NULL, *t;
    int n = 0;
    for (t = strtok_r(copy, ",", &save); t && n < cap;
         t = strtok_r(NULL, ",", &save))
        out[n++] = parse_size(t);
    free(copy);
    return n;
}

static void fail(const char *what, long size, int root, long at)
{
    printf("FAIL rank %d: %s (size %ld root %d at %ld)\n", me, what, size,
           root, at);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* One broadcast of size bytes from root; mode 0 MPI_Bcast of bytes, 1
 * MPI_Ibcast, 2 a strided vector of ints (one int every two), 3 a
 * persistent MPI_Bcast_init started twice (new data each start; the
 * second is the one checked). */
static void exit_now(int sig)
{
    (void)sig;
    _exit(0);
}

static int one(long size, int root, int rep, int mode, int die_rank,
               int exit_rank)
{
    long n = mode == 2 ? size / 4 : size;
    size_t span = mode == 2 ? (size_t)n * 8 : (size_t)size;
    uint8_t *buf = malloc(span ? span : 1);
    MPI_Datatype vec = MPI_BYTE;
    int rc;

    if (buf == NULL)
        fail("malloc", size, root, 0);
    memset(buf, 0xee, span ? span : 1);
    if (mode == 2) {
        MPI_Type_vector((int)n, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
    }
    if (me == root)
        for (long i = 0; i < (mode == 2 ? n * 4 : n); i++) {
            long at = mode == 2 ? (i / 4) * 8 + i % 4 : i;
            buf[at] = pattern(size, root, rep, i);
        }
    if (die_rank == me && size >= (16 << 20)) {
        usleep(20000);
        kill(getpid(), SIGKILL);
    }
    if (exit_rank == me && size >= (16 << 20)) {
        struct itimerval it = {{0, 0}, {0, 30000}};
        signal(SIGALRM, exit_now);
        setitimer(ITIMER_REAL, &it, NULL);
    }
    if (mode == 3) {
        MPI_Request r;
        rc = MPI_Bcast_init(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &r);
        for (int start = 0; start < 2 && rc == MPI_SUCCESS; start++) {
            if (me == root)
                for (long i = 0; i < n; i++)
                    buf[i] = pattern(size, root, rep + 1 - start, i);
            rc = MPI_Start(&r);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS && start == 0)
                for (long i = 0; i < n; i++)
                    if (buf[i] != pattern(size, root, rep + 1, i))
                        fail("wrong byte (first start)", size, root, i);
        }
        if (rc == MPI_SUCCESS)
            rc = MPI_Request_free(&r);
    } else if (mode == 1) {
        MPI_Request r;
        rc = MPI_Ibcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD, &r);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (mode == 2) {
        rc = MPI_Bcast(buf, 1, vec, root, MPI_COMM_WORLD);
    } else {
        rc = MPI_Bcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
    }
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        printf("error rank %d: %s\n", me, msg);
        fflush(stdout);
        free(buf);
        return rc;
    }
    for (long i = 0; i < (mode == 2 ? n * 4 : n); i++) {
        long at = mode == 2 ? (i / 4) * 8 + i % 4 : i;
        if (buf[at] != pattern(size, root, rep, i))
            fail("wrong byte", size, root, i);
    }
    if (mode == 2) {
        for (long i = 0; i < n; i++)
            if (buf[i * 8 + 4] != 0xee)
                fail("gap written", size, root, i);
        MPI_Type_free(&vec);
    }
    free(buf);
    return MPI_SUCCESS;
}

/* K overlapping MPI_Ibcasts of size bytes from roots 0, 1, ... */
static int overlapped(long size, int k)
{
    MPI_Request *r = malloc(sizeof(*r) * (size_t)k);
    uint8_t **b = malloc(sizeof(*b) * (size_t)k);
    int rc = MPI_SUCCESS;

    for (int j = 0; j < k; j++) {
        int root = j % np;
        b[j] = malloc((size_t)size);
        if (b[j] == NULL)
            fail("malloc", size, root, 0);
        for (long i = 0; i < size; i++)
            b[j][i] = me == root ? pattern(size, root, 100 + j, i) : 0xee;
        if (rc == MPI_SUCCESS)
            rc = MPI_Ibcast(b[j], (int)size, MPI_BYTE, root, MPI_COMM_WORLD,
                            &r[j]);
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Waitall(k, r, MPI_STATUSES_IGNORE);
    for (int j = 0; j < k; j++) {
        for (long i = 0; rc == MPI_SUCCESS && i < size; i++)
            if (b[j][i] != pattern(size, j % np, 100 + j, i))
                fail("wrong byte (overlapping)", size, j % np, i);
        free(b[j]);
    }
    free(b);
    free(r);
    return rc;
}

int main(int argc, char **argv)
{
    long sizes[64];
    int nsizes, roots[64], nroots = 0, reps = 1, sleep_rank = -1,
                           die_rank = -1, exit_rank = -1, calls = 0,
                           overlap = 0;
    const char *size_text = "1,2,3,100,1000,1423,1424,1425,4k,65535,65536,"
                            "100000,1m,4m,16m,64m";
    const char *root_text = "0";

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            size_text = argv[++i];
        else if (!strcmp(argv[i], "--roots") && i + 1 < argc)
            root_text = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sleep-rank") && i + 1 < argc)
            sleep_rank = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--die-rank") && i + 1 < argc)
            die_rank = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--exit-rank") && i + 1 < argc)
            exit_rank = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--overlap") && i + 1 < argc)
            overlap = atoi(argv[++i]);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    nsizes = fill_list(size_text, sizes, 64);
    if (!strcmp(root_text, "all")) {
        for (int r = 0; r < np && r < 64; r++)
            roots[nroots++] = r;
    } else {
        long tmp[64];
        nroots = fill_list(root_text, tmp, 64);
        for (int i = 0; i < nroots; i++)
            roots[i] = (int)(tmp[i] % np);
    }
    for (int rep = 0; rep < reps; rep++)
        for (int si = 0; si < nsizes; si++)
            for (int ri = 0; ri < nroots; ri++) {
                int mode = (si + ri + rep) % 4;
                if (mode == 2 && sizes[si] < 8)
                    mode = 0;
                if (sleep_rank == me)
                    usleep(300000);
                if (one(sizes[si], roots[ri], rep, mode, die_rank,
                        exit_rank) != MPI_SUCCESS)
                {
                    /* A peer is gone: finalizing would wait for it.  A
                     * failed rank stops the job at once, so give the other
                     * survivors time to see their own error first. */
                    usleep(500000);
                    return 2;
                }
                calls++;
            }
    for (int si = 0; overlap > 0 && si < nsizes; si++) {
        if (sizes[si] < 1)
            continue;
        if (overlapped(sizes[si], overlap) != MPI_SUCCESS)
            return 2;
        calls += overlap;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        printf("ok bcast %d calls\n", calls);
    MPI_Finalize();
    return 0;
}
