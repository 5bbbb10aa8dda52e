/*
 * What the nonblocking and persistent collective tests share: starting a
 * collective in either form with one line, completing it in varied ways,
 * and buffers of int laid out as MPI_INT or as a vector type with gaps
 * that must stay untouched.
 */
#ifndef SHOAL_NBC_TEST_H
#define SHOAL_NBC_TEST_H

#include "coll_test.h"

enum { NB, PERS, BLOCK };
static const char *const nbc_mode_name[] = {"nonblocking", "persistent",
                                            "blocking"};

/*
 * Iteration it of a collective: MPI_<iname>(args..., &req) for NB; for
 * PERS, MPI_<pname>(args..., MPI_INFO_NULL, &req) at it 0, then MPI_Start
 * at every it (the arguments are bound at it 0; the buffers' contents
 * change between starts).
 */
#define NBC_START(mode, it, req, iname, pname, ...)                          \
    do {                                                                     \
        if ((mode) == NB) {                                                  \
            MT_OK(MPI_##iname(__VA_ARGS__, &(req)));                         \
        } else {                                                             \
            if ((it) == 0)                                                   \
                MT_OK(MPI_##pname(__VA_ARGS__, MPI_INFO_NULL, &(req)));      \
            MT_OK(MPI_Start(&(req)));                                        \
        }                                                                    \
    } while (0)

/* Complete req, by MPI_Wait, MPI_Test (a few times, then MPI_Wait: a
 * loop of tests would only burn the CPU the other ranks need when they
 * outnumber the cores) or MPI_Waitall as it varies; a nonblocking request
 * must be MPI_REQUEST_NULL after, a persistent one not. */
static inline void nbc_complete(int mode, MPI_Request *req, int it)
{
    int flag = 0;
    MPI_Status st;

    switch (it % 3) {
    case 0:
        MT_OK(MPI_Wait(req, &st));
        break;
    case 1:
        for (int i = 0; i < 3 && !flag; i++)
            MT_OK(MPI_Test(req, &flag, &st));
        if (!flag)
            MT_OK(MPI_Wait(req, &st));
        break;
    default:
        MT_OK(MPI_Waitall(1, req, &st));
    }
    CT_CHECK((*req == MPI_REQUEST_NULL) == (mode == NB),
             "%s request after completion", nbc_mode_name[mode]);
}

/* The end of a test's iterations: a persistent request is freed. */
static inline void nbc_release(int mode, MPI_Request *req)
{
    if (mode == PERS) {
        MT_OK(MPI_Request_free(req));
        CT_CHECK(*req == MPI_REQUEST_NULL, "Request_free left the handle");
    }
}

/*
 * A buffer layout: MPI_INT (one int an element), or vector(2, 1, 2) of
 * MPI_INT (two ints an element at 0 and 2, extent 3 ints: a gap between
 * them).  Element e, part j (j < k) is int at(e, j) of the buffer.
 */
typedef struct lay {
    MPI_Datatype dt;
    int ext, k;
    const char *name;
} lay_t;

#define NBC_GAP (-7)

static inline int nbc_at(const lay_t *l, int e, int j)
{
    return e * l->ext + 2 * j;
}

/* n elements, every int NBC_GAP. */
static inline int *nbc_buf(const lay_t *l, int n)
{
    int len = n * l->ext + 1;
    int *b = malloc(sizeof(int) * (size_t)len);
    for (int i = 0; i < len; i++)
        b[i] = NBC_GAP;
    return b;
}

/* The n * k values of elements first.. of buf checked against want, and
 * the gaps inside them against NBC_GAP. */
static inline void nbc_check(const char *what, const lay_t *l, const int *buf,
                             int first, int n, const int *want)
{
    for (int e = 0; e < n; e++) {
        for (int j = 0; j < l->k; j++)
            CT_CHECK(buf[nbc_at(l, first + e, j)] == want[e * l->k + j],
                     "%s (%s): element %d part %d is %d, want %d", what,
                     l->name, first + e, j, buf[nbc_at(l, first + e, j)],
                     want[e * l->k + j]);
        if (l->k == 2)
            CT_CHECK(buf[nbc_at(l, first + e, 0) + 1] == NBC_GAP,
                     "%s (%s): gap of element %d written", what, l->name,
                     first + e);
    }
}

/* Store the n * k values of vals in elements first.. of buf. */
static inline void nbc_fill(const lay_t *l, int *buf, int first, int n,
                            const int *vals)
{
    for (int e = 0; e < n; e++)
        for (int j = 0; j < l->k; j++)
            buf[nbc_at(l, first + e, j)] = vals[e * l->k + j];
}

#endif
