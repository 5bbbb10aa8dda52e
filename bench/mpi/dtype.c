/*
 * Noncontiguous messages: rank 0 sends `size` records of a resized struct
 * {int; double} (24-byte extent, 12 bytes of data) to rank 1, which
 * receives each into a freshly allocated, untouched buffer (calloc, so
 * the unpack also takes the page faults, as a program that allocates per
 * message does) and answers with an empty message.  The value is the
 * time per message in milliseconds.  `size` counts records, not bytes.
 * After each size one message carries a pattern that rank 1 checks.
 */
#include "mpibench.h"

typedef struct {
    int i;
    double d;
    double gap;
} rec_t;

static const mb_bench_t bench = {
    .name = "dtype",
    .what = "resized struct {int; double} into fresh buffers, ms per message"
            " (size = records of 24-byte extent); lower is better",
    .sizes = "65536,262144,1048576",
    .iters = 24,
    .floor = 3,
};

static MPI_Datatype rec_type;
static rec_t *src;

static void one_message(const mb_opts_t *o, long size, void *arg)
{
    int *bad = arg;

    if (o->rank == 0) {
        MPI_Send(src, (int)size, rec_type, 1, MB_TAG_DATA, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_BYTE, 1, MB_TAG_ACK, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    } else if (o->rank == 1) {
        rec_t *dst = calloc((size_t)size, sizeof(rec_t));
        if (dst == NULL)
            MPI_Abort(MPI_COMM_WORLD, 1);
        MPI_Recv(dst, (int)size, rec_type, 0, MB_TAG_DATA, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        if (bad != NULL)
            for (long k = 0; k < size; k++)
                if (dst[k].i != (int)k || dst[k].d != (double)k * 0.5 ||
                    dst[k].gap != 0.0)
                    *bad = 1;
        free(dst);
        MPI_Send(NULL, 0, MPI_BYTE, 0, MB_TAG_ACK, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    mb_opts_t o;
    int rc = mb_start(&bench, &o, &argc, &argv);
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, st;

    if (rc >= 0)
        return rc;
    MPI_Type_create_struct(2, bl, disp, types, &st);
    MPI_Type_create_resized(st, 0, (MPI_Aint)sizeof(rec_t), &rec_type);
    MPI_Type_commit(&rec_type);
    long most = 0;
    for (int s = 0; s < o.nsizes; s++)
        most = o.sizes[s] > most ? o.sizes[s] : most;
    src = calloc((size_t)most + 1, sizeof(rec_t));
    if (src == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long k = 0; k <= most; k++) {
        src[k].i = (int)k;
        src[k].d = (double)k * 0.5;
        src[k].gap = -1.0;
    }
    for (int s = 0; s < o.nsizes; s++) {
        long size = o.sizes[s];
        int bad = 0, any = 0;
        for (long w = mb_warmup(&o, size * 12); w > 0; w--)
            one_message(&o, size, NULL);
        double t = mb_time_steps(&o, size, mb_iters(&o, size * 12),
                                 one_message, NULL);
        one_message(&o, size, &bad);
        MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (any) {
            if (o.rank == 0)
                fprintf(stderr, "dtype: wrong data at size %ld\n", size);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        mb_report(&o, size, t * 1e3);
    }
    MPI_Type_free(&rec_type);
    MPI_Type_free(&st);
    free(src);
    return mb_finish(&o);
}
