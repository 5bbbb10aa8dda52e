/*
 * Collectives: the time of one call of MPI_Barrier, MPI_Bcast,
 * MPI_Allreduce, MPI_Reduce, MPI_Allgather or MPI_Alltoall on
 * MPI_COMM_WORLD, any number of ranks.
 *
 * Every rank times back-to-back calls in batches and keeps its median batch
 * (mb_time_steps); the value reported is the largest of the ranks' medians
 * (a collective is as slow as its slowest participant), in microseconds
 * per call.  Rooted operations (bcast, reduce) rotate the root: call i uses
 * root i mod ranks, so that no rank is always the one that returns first
 * and back-to-back calls cannot pipeline from one root.
 *
 * Sizes: bcast, the bytes broadcast; allreduce and reduce, the bytes of
 * MPI_DOUBLEs reduced with MPI_SUM (sizes that are not a multiple of 8 are
 * skipped); allgather and alltoall, the bytes each rank sends to each rank
 * (the receive buffer holds ranks*size).  Barrier has no size: its one line
 * is "0 <us>".
 *
 * After the timed calls of each size one more call carries known values
 * that are checked (allreduce: the sum of each rank's numbers; bcast,
 * reduce: from and to the last rank; allgather, alltoall: a pattern naming
 * source, destination and offset); a wrong result aborts the run.
 */
#include "mpibench.h"

enum { OP_BARRIER, OP_BCAST, OP_ALLREDUCE, OP_REDUCE, OP_ALLGATHER,
       OP_ALLTOALL, OP_COUNT };

static const char *const op_names[OP_COUNT] = {
    "barrier", "bcast", "allreduce", "reduce", "allgather", "alltoall",
};

static int ops[OP_COUNT];
static int nops;
static double budget = 1.0; /* seconds per size, at most */

/* --op LIST: names, comma-separated, each once, in the order given. */
static int parse_ops(const char *text)
{
    char buf[128], *tok, *save;

    if (strlen(text) >= sizeof(buf))
        return -1;
    strcpy(buf, text);
    nops = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < OP_COUNT && strcmp(tok, op_names[k]) != 0)
            k++;
        if (k == OP_COUNT)
            return -1;
        for (int j = 0; j < nops; j++)
            if (ops[j] == k)
                return -1;
        ops[nops++] = k;
    }
    return nops > 0 ? 0 : -1;
}

static int coll_option(const char *name, const char *value)
{
    if (strcmp(name, "--op") == 0 || strcmp(name, "--ops") == 0)
        return parse_ops(value) == 0 ? 0 : -1;
    if (strcmp(name, "--budget") == 0) {
        char *end;
        double v = strtod(value, &end);
        if (end == value || *end != '\0' || v < 0)
            return -1;
        budget = v;
        return 0;
    }
    return 1;
}

static const mb_bench_t bench = {
    .name = "coll",
    .what = "time per collective call, microseconds, the largest of the "
            "ranks' median batches; lower is better",
    .sizes = "8,256,4K,64K,1M",
    .iters = 1000,
    .floor = 10,
    .min_ranks = 1,
    .ranks = "any number of ranks",
    .option = coll_option,
    .extra_usage =
        "  --op LIST         collectives, comma-separated, in this order\n"
        "                    (default barrier,bcast,allreduce,reduce,\n"
        "                    allgather,alltoall; --ops is the same)\n"
        "  --budget S        at most about S seconds of timed calls per\n"
        "                    size (and S/4 of warm-up): fewer iterations\n"
        "                    when calls are slow (default 1; 0: no limit)\n",
};

typedef struct coll_ctx {
    int op;
    long count; /* doubles, for the reductions */
    long i;     /* calls made: the root of rooted operations rotates */
    char *sbuf, *rbuf;
} coll_ctx_t;

static void one_call(const mb_opts_t *o, long size, void *arg)
{
    coll_ctx_t *c = arg;
    int root = (int)(c->i++ % o->nranks);

    switch (c->op) {
    case OP_BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case OP_BCAST:
        MPI_Bcast(c->sbuf, (int)size, MPI_BYTE, root, MPI_COMM_WORLD);
        break;
    case OP_ALLREDUCE:
        MPI_Allreduce(c->sbuf, c->rbuf, (int)c->count, MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD);
        break;
    case OP_REDUCE:
        MPI_Reduce(c->sbuf, c->rbuf, (int)c->count, MPI_DOUBLE, MPI_SUM, root,
                   MPI_COMM_WORLD);
        break;
    case OP_ALLGATHER:
        MPI_Allgather(c->sbuf, (int)size, MPI_BYTE, c->rbuf, (int)size,
                      MPI_BYTE, MPI_COMM_WORLD);
        break;
    case OP_ALLTOALL:
        MPI_Alltoall(c->sbuf, (int)size, MPI_BYTE, c->rbuf, (int)size,
                     MPI_BYTE, MPI_COMM_WORLD);
        break;
    }
}

static unsigned char pattern(long i, int from, int to, long size)
{
    return (unsigned char)(i * 31 + from * 101 + to * 57 + size * 7 + 1);
}

static void wrong(const mb_opts_t *o, const coll_ctx_t *c, long size,
                  long at, const char *what)
{
    fprintf(stderr, "coll: %s gave a wrong result at size %ld on rank %d "
            "(%s, offset %ld)\n", op_names[c->op], size, o->rank, what, at);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* One call with known values, checked on every rank that receives. */
static void verify(const mb_opts_t *o, coll_ctx_t *c, long size)
{
    int n = o->nranks, me = o->rank, last = n - 1;
    double *sd = (double *)(void *)c->sbuf, *rd = (double *)(void *)c->rbuf;

    switch (c->op) {
    case OP_BARRIER:
        MPI_Barrier(MPI_COMM_WORLD); /* nothing to compare */
        return;
    case OP_BCAST:
        for (long i = 0; i < size; i++)
            c->sbuf[i] = me == last ? (char)pattern(i, last, 0, size) : 0;
        MPI_Bcast(c->sbuf, (int)size, MPI_BYTE, last, MPI_COMM_WORLD);
        for (long i = 0; i < size; i++)
            if ((unsigned char)c->sbuf[i] != pattern(i, last, 0, size))
                wrong(o, c, size, i, "root: the last rank");
        return;
    case OP_ALLREDUCE:
    case OP_REDUCE:
        /* Small integers: every sum is exact in a double. */
        for (long i = 0; i < c->count; i++) {
            sd[i] = me + 1 + (double)(i % 13);
            rd[i] = -1;
        }
        if (c->op == OP_ALLREDUCE)
            MPI_Allreduce(sd, rd, (int)c->count, MPI_DOUBLE, MPI_SUM,
                          MPI_COMM_WORLD);
        else
            MPI_Reduce(sd, rd, (int)c->count, MPI_DOUBLE, MPI_SUM, last,
                       MPI_COMM_WORLD);
        if (c->op == OP_ALLREDUCE || me == last)
            for (long i = 0; i < c->count; i++)
                if (rd[i] != (double)n * (n + 1) / 2 + (double)n * (i % 13))
                    wrong(o, c, size, i * 8,
                          c->op == OP_REDUCE ? "root: the last rank" : "sum");
        return;
    case OP_ALLGATHER:
        for (long i = 0; i < size; i++)
            c->sbuf[i] = (char)pattern(i, me, 0, size);
        memset(c->rbuf, 0, (size_t)(size * n));
        MPI_Allgather(c->sbuf, (int)size, MPI_BYTE, c->rbuf, (int)size,
                      MPI_BYTE, MPI_COMM_WORLD);
        for (int r = 0; r < n; r++)
            for (long i = 0; i < size; i++)
                if ((unsigned char)c->rbuf[r * size + i] !=
                    pattern(i, r, 0, size))
                    wrong(o, c, size, r * size + i, "block");
        return;
    case OP_ALLTOALL:
        for (int d = 0; d < n; d++)
            for (long i = 0; i < size; i++)
                c->sbuf[d * size + i] = (char)pattern(i, me, d, size);
        memset(c->rbuf, 0, (size_t)(size * n));
        MPI_Alltoall(c->sbuf, (int)size, MPI_BYTE, c->rbuf, (int)size,
                     MPI_BYTE, MPI_COMM_WORLD);
        for (int r = 0; r < n; r++)
            for (long i = 0; i < size; i++)
                if ((unsigned char)c->rbuf[r * size + i] !=
                    pattern(i, r, me, size))
                    wrong(o, c, size, r * size + i, "block");
        return;
    }
}

/* What the timed calls send: doubles 1.0 (so the reductions never meet a
 * NaN or a denormal), in the first bytes of the send buffer. */
static void fill_ones(char *buf, size_t bytes)
{
    double one = 1.0;

    for (size_t i = 0; i + sizeof(one) <= bytes; i += sizeof(one))
        memcpy(buf + i, &one, sizeof(one));
}

/*
 * Warm-up and iterations: mb_warmup and mb_iters, both cut when calls are
 * slow (more ranks than CPUs, say) so that the warm-up takes about a
 * quarter of --budget and the timed calls about --budget.  The estimates
 * are the largest over ranks, so every rank makes the same calls.
 */
static long iterations(const mb_opts_t *o, coll_ctx_t *c, long size)
{
    long n = mb_iters(o, size), warm = mb_warmup(o, size);
    double t0 = MPI_Wtime();

    one_call(o, size, c);
    double first = mb_max_over_ranks(MPI_Wtime() - t0);
    if (budget > 0 && first * (double)warm > budget / 4)
        warm = (long)(budget / 4 / first);
    t0 = MPI_Wtime();
    for (long i = 0; i < warm; i++)
        one_call(o, size, c);
    double per = warm > 0 ? (MPI_Wtime() - t0) / (double)warm : first;
    per = mb_max_over_ranks(per);
    if (budget > 0 && per > 0 && per * (double)n > budget) {
        n = (long)(budget / per);
        if (n < o->floor)
            n = o->floor;
        if (n < 1)
            n = 1;
    }
    return n;
}

int main(int argc, char **argv)
{
    mb_opts_t o;

    ops[0] = OP_BARRIER, ops[1] = OP_BCAST, ops[2] = OP_ALLREDUCE;
    ops[3] = OP_REDUCE, ops[4] = OP_ALLGATHER, ops[5] = OP_ALLTOALL;
    nops = OP_COUNT;
    int rc = mb_start(&bench, &o, &argc, &argv);
    if (rc >= 0)
        return rc;

    /* Buffers for ranks*max_size: allgather and alltoall. */
    size_t bytes = (size_t)o.max_size * (size_t)o.nranks + 64;
    coll_ctx_t c = {0};
    c.sbuf = malloc(bytes);
    c.rbuf = malloc(bytes);
    if (c.sbuf == NULL || c.rbuf == NULL) {
        fprintf(stderr, "coll: out of memory (2 x %zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Fault the pages in before anything is timed. */
    memset(c.rbuf, 0, bytes);
    fill_ones(c.sbuf, bytes);
    if (o.rank == 0) {
        printf("# root of bcast and reduce: call i uses root i mod %d; "
               "budget %g s per size\n", o.nranks, budget);
        fflush(stdout);
    }

    for (int k = 0; k < nops; k++) {
        c.op = ops[k];
        if (o.rank == 0) {
            printf("# op: %s\n", op_names[c.op]);
            fflush(stdout);
        }
        for (int s = 0; s < o.nsizes; s++) {
            long size = c.op == OP_BARRIER ? 0 : o.sizes[s];
            int reduction = c.op == OP_ALLREDUCE || c.op == OP_REDUCE;

            if (c.op == OP_BARRIER && s > 0)
                break; /* one line: barrier has no size */
            if (reduction && size % 8 != 0) {
                if (o.rank == 0)
                    printf("# %s: size %ld skipped (not a multiple of 8 "
                           "bytes of MPI_DOUBLE)\n", op_names[c.op], size);
                continue;
            }
            c.count = size / 8;
            c.i = 0;
            fill_ones(c.sbuf, (size_t)size * (size_t)o.nranks);
            long n = iterations(&o, &c, size);
            double t = mb_time_steps_max(&o, size, n, one_call, &c);
            verify(&o, &c, size);
            mb_report(&o, size, t * 1e6);
        }
    }
    free(c.sbuf);
    free(c.rbuf);
    return mb_finish(&o);
}
