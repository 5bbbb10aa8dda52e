#define _DEFAULT_SOURCE
/*
 * Nonblocking point-to-point and the request calls: Wait/Test and their
 * all/any/some forms, persistent requests, cancel, Request_free,
 * Request_get_status, probes and matched receives, Sendrecv(_replace),
 * synchronous-send completion, generalized requests.
 */
#include "mpitest.h"

#include <unistd.h>

static int rank, size;

static void ring_waitall(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[8], in[8] = {0};
    MPI_Request r[16];
    MPI_Status st[16];

    for (int i = 0; i < 8; i++)
        out[i] = rank * 100 + i;
    for (int i = 0; i < 8; i++)
        MT_OK(MPI_Irecv(&in[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &r[i]));
    for (int i = 0; i < 8; i++)
        MT_OK(MPI_Isend(&out[7 - i], 1, MPI_INT, right, 7 - i,
                        MPI_COMM_WORLD, &r[8 + i]));
    MT_OK(MPI_Waitall(16, r, st));
    for (int i = 0; i < 8; i++) {
        MT_CHECK(in[i] == left * 100 + i, "ring in[%d]=%d", i, in[i]);
        MT_CHECK(st[i].MPI_SOURCE == left && st[i].MPI_TAG == i,
                 "ring status %d", i);
        MT_CHECK(r[i] == MPI_REQUEST_NULL, "freed");
    }
}

static void any_some(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int in[6], out[6], idx[6], done = 0, n, index, flag;
    MPI_Request r[6], s[6];
    MPI_Status st[6];

    for (int i = 0; i < 6; i++) {
        out[i] = i;
        MT_OK(MPI_Irecv(&in[i], 1, MPI_INT, left, 100 + i, MPI_COMM_WORLD,
                        &r[i]));
    }
    for (int i = 0; i < 6; i++)
        MT_OK(MPI_Isend(&out[i], 1, MPI_INT, right, 100 + i, MPI_COMM_WORLD,
                        &s[i]));
    MT_OK(MPI_Waitany(6, r, &index, &st[0]));
    MT_CHECK(index >= 0 && index < 6 && r[index] == MPI_REQUEST_NULL &&
                 in[index] == index,
             "waitany index %d", index);
    done = 1;
    while (done < 6) {
        MT_OK(MPI_Waitsome(6, r, &n, idx, st));
        MT_CHECK(n >= 1 && n != MPI_UNDEFINED, "waitsome count %d", n);
        for (int k = 0; k < n; k++)
            MT_CHECK(in[idx[k]] == idx[k] && st[k].MPI_TAG == 100 + idx[k],
                     "waitsome entry");
        done += n;
    }
    MT_OK(MPI_Waitsome(6, r, &n, idx, st));
    MT_CHECK(n == MPI_UNDEFINED, "all null: MPI_UNDEFINED, got %d", n);
    MT_OK(MPI_Testany(6, r, &index, &flag, MPI_STATUS_IGNORE));
    MT_CHECK(flag && index == MPI_UNDEFINED, "testany of nulls");
    do {
        MT_OK(MPI_Testall(6, s, &flag, MPI_STATUSES_IGNORE));
    } while (!flag);
    MT_OK(MPI_Testsome(6, s, &n, idx, MPI_STATUSES_IGNORE));
    MT_CHECK(n == MPI_UNDEFINED, "testsome of nulls");
}

static void persistent(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = 0, in = -1;
    MPI_Request r[2];

    MT_OK(MPI_Recv_init(&in, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &r[0]));
    MT_OK(MPI_Send_init(&out, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &r[1]));
    for (int it = 0; it < 20; it++) {
        out = rank * 1000 + it;
        MT_OK(MPI_Startall(2, r));
        MT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        MT_CHECK(r[0] != MPI_REQUEST_NULL, "persistent survives");
        MT_CHECK(in == left * 1000 + it, "persistent round %d got %d", it,
                 in);
    }
    /* Waiting on an inactive persistent request returns at once. */
    MT_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    MT_OK(MPI_Request_free(&r[0]));
    MT_OK(MPI_Request_free(&r[1]));
    MT_CHECK(r[0] == MPI_REQUEST_NULL, "free sets null");
}

static void cancel_recv(void)
{
    int x;
    MPI_Request r;
    MPI_Status st;
    int flag = 0;

    MT_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 31999, MPI_COMM_WORLD,
                    &r));
    MT_OK(MPI_Cancel(&r));
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_Test_cancelled(&st, &flag));
    MT_CHECK(flag, "receive was cancelled");
    /* A cancelled receive matches nothing: a later message goes to the
     * next receive. */
    MT_OK(MPI_Irecv(&x, 1, MPI_INT, rank, 31998, MPI_COMM_WORLD, &r));
    MT_OK(MPI_Cancel(&r));
    MT_OK(MPI_Wait(&r, &st));
    x = 77;
    MT_OK(MPI_Send(&x, 1, MPI_INT, rank, 31998, MPI_COMM_WORLD));
    x = 0;
    MT_OK(MPI_Recv(&x, 1, MPI_INT, rank, 31998, MPI_COMM_WORLD, &st));
    MT_CHECK(x == 77, "message after a cancelled receive");
    /* A matched receive cannot be cancelled. */
    MT_OK(MPI_Send(&x, 1, MPI_INT, rank, 31997, MPI_COMM_WORLD));
    MT_OK(MPI_Irecv(&x, 1, MPI_INT, rank, 31997, MPI_COMM_WORLD, &r));
    MT_OK(MPI_Cancel(&r));
    MT_OK(MPI_Wait(&r, &st));
    MT_OK(MPI_Test_cancelled(&st, &flag));
    MT_CHECK(!flag, "matched receive not cancelled");
}

static void probes(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int v[3] = {rank, rank + 1, rank + 2}, w[3] = {0}, count, flag = 0;
    MPI_Status st;
    MPI_Message m;
    MPI_Request r, s;

    MT_OK(MPI_Isend(v, 3, MPI_INT, right, 8, MPI_COMM_WORLD, &s));
    MT_OK(MPI_Probe(left, 8, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    MT_CHECK(count == 3 && st.MPI_SOURCE == left, "probe status");
    MT_OK(MPI_Iprobe(MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &flag, &st));
    MT_CHECK(flag, "iprobe sees the probed message");
    MT_OK(MPI_Mprobe(left, 8, MPI_COMM_WORLD, &m, &st));
    /* After Mprobe nobody else can receive it. */
    MT_OK(MPI_Iprobe(left, 8, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    MT_CHECK(!flag, "mprobed message is taken");
    MT_OK(MPI_Mrecv(w, 3, MPI_INT, &m, &st));
    MT_CHECK(m == MPI_MESSAGE_NULL && w[2] == left + 2, "mrecv data");
    MT_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));

    MT_OK(MPI_Isend(v, 3, MPI_INT, right, 9, MPI_COMM_WORLD, &s));
    do {
        MT_OK(MPI_Improbe(left, 9, MPI_COMM_WORLD, &flag, &m, &st));
    } while (!flag);
    MT_OK(MPI_Imrecv(w, 3, MPI_INT, &m, &r));
    MT_OK(MPI_Wait(&r, &st));
    MT_CHECK(st.MPI_TAG == 9 && w[0] == left, "imrecv");
    MT_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MT_OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st));
    MT_CHECK(m == MPI_MESSAGE_NO_PROC, "no-proc message");
    MT_OK(MPI_Mrecv(w, 3, MPI_INT, &m, &st));
    MT_CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "no-proc mrecv");
}

static void sendrecvs(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double a[100], b[100];
    MPI_Status st;

    for (int i = 0; i < 100; i++)
        a[i] = rank + i * 0.5;
    MT_OK(MPI_Sendrecv(a, 100, MPI_DOUBLE, right, 3, b, 100, MPI_DOUBLE,
                       left, 3, MPI_COMM_WORLD, &st));
    MT_CHECK(b[99] == left + 49.5 && st.MPI_SOURCE == left, "sendrecv");
    MT_OK(MPI_Sendrecv_replace(a, 100, MPI_DOUBLE, right, 4, left, 4,
                               MPI_COMM_WORLD, &st));
    MT_CHECK(a[10] == left + 5.0, "sendrecv_replace");

    /* MPI 4.0's nonblocking forms: one request over both halves, the
     * receive's status; a large one (rendezvous) and a derived type */
    {
        enum { N = 40000 };
        double *big = malloc(N * sizeof(double)), *got = malloc(N * sizeof(double));
        MPI_Request rq[2];
        MPI_Status sts[2];
        MPI_Datatype every2;
        int count = -1, flag = 0;

        for (int i = 0; i < N; i++)
            big[i] = rank * 1e6 + i;
        MT_OK(MPI_Isendrecv(big, N, MPI_DOUBLE, right, 5, got, N, MPI_DOUBLE,
                            MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &rq[0]));
        for (int i = 0; i < 100; i++)
            a[i] = rank * 1000 + i;
        MT_OK(MPI_Type_vector(50, 1, 2, MPI_DOUBLE, &every2));
        MT_OK(MPI_Type_commit(&every2));
        MT_OK(MPI_Isendrecv_replace(a, 1, every2, left, 6, right, 6,
                                    MPI_COMM_WORLD, &rq[1]));
        MT_OK(MPI_Waitall(2, rq, sts));
        MT_CHECK(sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == 5,
                 "isendrecv status %d/%d", sts[0].MPI_SOURCE, sts[0].MPI_TAG);
        MT_OK(MPI_Get_count(&sts[0], MPI_DOUBLE, &count));
        MT_CHECK(count == N, "isendrecv count %d", count);
        MT_CHECK(got[N - 1] == left * 1e6 + N - 1 && got[0] == left * 1e6,
                 "isendrecv data");
        for (int i = 0; i < 100; i++)
            MT_CHECK(a[i] == (i % 2 ? rank * 1000 + i : right * 1000 + i),
                     "isendrecv_replace a[%d] = %g", i, a[i]);
        MT_CHECK(sts[1].MPI_SOURCE == right, "isendrecv_replace source");
        /* PROC_NULL on both sides completes at once */
        MT_OK(MPI_Isendrecv_replace_c(a, 3, MPI_DOUBLE, MPI_PROC_NULL, 0,
                                      MPI_PROC_NULL, 0, MPI_COMM_WORLD,
                                      &rq[0]));
        MT_OK(MPI_Test(&rq[0], &flag, &sts[0]));
        MT_CHECK(flag && sts[0].MPI_SOURCE == MPI_PROC_NULL,
                 "isendrecv_replace to PROC_NULL");
        MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        MT_ERR(MPI_ERR_RANK, MPI_Isendrecv(a, 1, MPI_DOUBLE, size, 0, b, 1,
                                           MPI_DOUBLE, 0, 0, MPI_COMM_WORLD,
                                           &rq[0]));
        MT_ERR(MPI_ERR_ARG, MPI_Isendrecv_c(a, 1, MPI_DOUBLE, 0, 0, b, 1,
                                            MPI_DOUBLE, 0, 0, MPI_COMM_WORLD,
                                            NULL));
        MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        MT_OK(MPI_Type_free(&every2));
        free(big);
        free(got);
    }
}

/* Issend completes only once the receive matched. */
static void ssend_semantics(void)
{
    int x = 1, flag = 0;
    MPI_Request r;

    if (size < 2 || rank > 1)
        return;
    if (rank == 0) {
        MT_OK(MPI_Issend(&x, 1, MPI_INT, 1, 60, MPI_COMM_WORLD, &r));
        for (int i = 0; i < 200; i++) {
            MT_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
            MT_CHECK(!flag, "Issend completed before the receive was posted");
            usleep(100);
        }
        MT_OK(MPI_Send(&x, 1, MPI_INT, 1, 61, MPI_COMM_WORLD));
        MT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        MT_OK(MPI_Recv(&x, 1, MPI_INT, 0, 61, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
        MT_OK(MPI_Recv(&x, 1, MPI_INT, 0, 60, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
    }
}

static int gq(void *state, MPI_Status *st)
{
    st->MPI_SOURCE = 123;
    st->MPI_TAG = *(int *)state;
    st->MPI_ERROR = MPI_SUCCESS;
    MPI_Status_set_elements(st, MPI_INT, 3);
    MPI_Status_set_cancelled(st, 0);
    return MPI_SUCCESS;
}
static int gfree_calls;
static int gf(void *state)
{
    (void)state;
    gfree_calls++;
    return MPI_SUCCESS;
}
static int gc(void *state, int complete)
{
    (void)state;
    (void)complete;
    return MPI_SUCCESS;
}

static void grequest(void)
{
    MPI_Request r;
    MPI_Status st;
    int flag, tag = 17, count;

    MT_OK(MPI_Grequest_start(gq, gf, gc, &tag, &r));
    MT_OK(MPI_Test(&r, &flag, &st));
    MT_CHECK(!flag, "generalized request not complete yet");
    MT_OK(MPI_Grequest_complete(r));
    MT_OK(MPI_Wait(&r, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    MT_CHECK(st.MPI_SOURCE == 123 && st.MPI_TAG == 17 && count == 3 &&
                 gfree_calls == 1,
             "generalized request status/free");
}

int main(int argc, char **argv)
{
    MT_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ring_waitall();
    any_some();
    persistent();
    cancel_recv();
    probes();
    sendrecvs();
    ssend_semantics();
    grequest();
    MT_OK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_nonblocking: OK\n");
    return 0;
}
