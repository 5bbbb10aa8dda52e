/*
 * Checkpoint/restart (docs/FT.md): a 1-D heat equation over the ranks,
 * halo exchange each iteration, MPIX_Checkpoint every K iterations; a
 * rank may kill itself (SIGKILL) at a chosen iteration, and the job run
 * again with shoalrun --restart must write the same result, bit for bit,
 * as an uninterrupted run (tests/mpi/ckpt_test.sh compares them).
 *
 * usage: mpi_ckpt_heat ITERS K RANK@ITER[:MARKER]|- OUT
 *                      [b2b|pending|inflight|smaller|poll[:USEC]]
 *   K:       a checkpoint every K iterations; 0: none
 *   RANK@ITER:MARKER: the rank kills itself only if it can create the
 *            file MARKER (once, however often the job is restarted)
 *   b2b:     two checkpoints back to back at each point
 *   pending: first check that a checkpoint is refused on every rank with
 *            MPI_ERR_PENDING while communication it cannot carry crosses
 *            it: a message on an intercommunicator, a
 *            posted receive (not registered), an MPI_Ibarrier on a
 *            duplicate that rank 0 starts before it and the others after
 *            it; and that one with a message in flight on the duplicate
 *            is taken, one with a synchronous send in flight (also beside
 *            a rendezvous, which the cut pulls in: the synchronous send
 *            must stay pending until its receive), and one with
 *            an ordinary message in flight on MPI_COMM_WORLD
 *   inflight: at each checkpoint the next iteration's halo values are
 *            sent first (eager), with two more messages of one tag (their
 *            order checked), a 200-byte one, one to itself on
 *            MPI_COMM_SELF, one on each of the program's communicators
 *            (a duplicate of MPI_COMM_WORLD and a split into even and odd
 *            ranks, made before MPIX_Checkpoint_restarted: with
 *            CKPT_COMMS_LATE=1, after it, which a restart must refuse),
 *            with CKPT_HANDLES=1 the program makes its objects only
 *            when not restarted: the handles of its communicators (and
 *            of a Cartesian one, a vector datatype and a group) are in a
 *            registered region and a restart must bring the objects back
 *            at those handles, with their names, error handler and
 *            topology, keyvals and attributes (those on MPI_COMM_WORLD
 *            excepted), the split's own error handler, a user
 *            operation and an info object; a message in flight on the Cartesian one, of the
 *            vector type, is checked too, and an MPI_Issend on the
 *            duplicate whose receive is posted after the checkpoint (its
 *            request registered: after a restart the receive's match
 *            completes it);
 *            and a rendezvous (BIG bytes, above
 *            SHOAL_MPI_EAGER's 16 KiB) by MPI_Isend, waited for after
 *            the checkpoint: all in flight at the cut, received after it
 *            (or after a restart, from the image) and checked; and an
 *            MPI_Iallreduce on MPI_COMM_WORLD started before the
 *            checkpoint and waited for after it, its result (in a
 *            registered region) checked at the next iteration
 *   smaller: the cells' region registered 8 bytes short (a restart
 *            from a normal run's checkpoint must be refused)
 *   poll:    MPIX_Checkpoint_if_requested after every iteration (the
 *            checkpoints shoalrun asks for); rank 0 says where one was
 *            taken, and every rank checks they all took it at the same
 *            iteration; with USEC, rank 0 sleeps that long each iteration
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 64 /* cells per rank */
#define BIG (256 * 1024) /* inflight: the rendezvous's bytes */

static void die(const char *what, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;

    MPI_Error_string(rc, s, &n);
    fprintf(stderr, "FAIL: %s: %s\n", what, s);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check(const char *what, int rc)
{
    if (rc != MPI_SUCCESS)
        die(what, rc);
}

/* The pattern of byte i of the 200-byte message of iteration it from
 * rank r. */
static unsigned char pat(int it, int r, int i)
{
    return (unsigned char)(it * 31 + r * 7 + i);
}

/* inflight: the rendezvous, its request waited for after the
 * checkpoint (the buffer is the sender's until then). */
static unsigned char big[BIG];
static MPI_Request big_req = MPI_REQUEST_NULL;
/* inflight: the Iallreduce's result (registered) and request. */
static double ared;
static MPI_Request ared_req = MPI_REQUEST_NULL;
/* inflight: the program's own communicators, a duplicate of
 * MPI_COMM_WORLD and the even and odd ranks (MPI_Comm_split), made
 * before MPIX_Checkpoint_restarted (with CKPT_COMMS_LATE=1 after it: a
 * restart must then be refused, their messages having nowhere to go). */
static MPI_Comm dup_c = MPI_COMM_NULL, half_c = MPI_COMM_NULL;
/* CKPT_HANDLES=1: more objects, all made once, their handles registered. */
static int handles;
static MPI_Comm cart_c = MPI_COMM_NULL;
static MPI_Datatype vec_t = MPI_DATATYPE_NULL;
static MPI_Group half_g = MPI_GROUP_NULL;
/* ... and keyvals with attributes on the duplicate, on MPI_COMM_WORLD
 * (not brought back) and on the type; the delete callback counts its
 * calls. */
static int comm_kv = MPI_KEYVAL_INVALID, type_kv = MPI_KEYVAL_INVALID;
static int deletes;

/* ... a user error handler on the split (held by it alone) and a user
 * operation (its handle registered). */
static MPI_Op sum_op = MPI_OP_NULL;
/* ... and a receive posted before the checkpoint (from the left, on the
 * duplicate), matched after it: its request and buffer registered.  On
 * rank 0 it is from MPI_PROC_NULL, complete at once and not waited for
 * till after the checkpoint. */
static MPI_Request pr_req = MPI_REQUEST_NULL;
static int pr_buf[2];
/* ... and a synchronous send (MPI_Issend to the right, on the duplicate)
 * whose receive is posted only after the checkpoint: its request
 * registered (its buffer need not be: the message has gone). */
static MPI_Request ss_req = MPI_REQUEST_NULL;
/* ... and an MPI_Iallreduce on the duplicate started before the
 * checkpoint (it runs to its end at the cut), its request and result
 * registered, waited for after it. */
static MPI_Request dsum_req = MPI_REQUEST_NULL;
static int dsum, dsum_in;
/* ... and a generalized request started before the checkpoint and
 * completed by the program after it; its handle and extra state
 * registered, its query function puts the state in the status's tag. */
static MPI_Request gr_req = MPI_REQUEST_NULL;
static int gr_state, gr_frees;

static int gr_query(void *st, MPI_Status *s)
{
    s->MPI_SOURCE = MPI_UNDEFINED;
    s->MPI_TAG = *(int *)st;
    s->MPI_ERROR = MPI_SUCCESS;
    MPI_Status_set_elements(s, MPI_BYTE, 0);
    MPI_Status_set_cancelled(s, 0);
    return MPI_SUCCESS;
}

static int gr_free(void *st)
{
    (void)st;
    gr_frees++;
    return MPI_SUCCESS;
}

static int gr_cancel(void *st, int complete)
{
    (void)st, (void)complete;
    return MPI_SUCCESS;
}

/* ... and an info object with two keys, its handle registered. */
static MPI_Info kept_info = MPI_INFO_NULL;
static int errh_calls, op_calls;

static void my_errh(MPI_Comm *c, int *code, ...)
{
    (void)c;
    if (*code == 99)
        errh_calls++;
}

static void my_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    op_calls++;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static int count_delete(MPI_Comm c, int k, void *val, void *extra)
{
    (void)c, (void)k, (void)extra;
    if ((intptr_t)val == 1234 || (intptr_t)val == 4321)
        deletes++;
    return MPI_SUCCESS;
}

static void make_comms(int rank)
{
    check("dup", MPI_Comm_dup(MPI_COMM_WORLD, &dup_c));
    check("split", MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half_c));
    if (!handles)
        return;
    int size, dims[1], periods[1] = {0};
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    dims[0] = size;
    check("cart", MPI_Cart_create(dup_c, 1, dims, periods, 0, &cart_c));
    check("vector", MPI_Type_vector(2, 1, 2, MPI_INT, &vec_t));
    check("commit", MPI_Type_commit(&vec_t));
    check("group", MPI_Comm_group(half_c, &half_g));
    check("name", MPI_Comm_set_name(dup_c, "heat-dup"));
    check("errhandler", MPI_Comm_set_errhandler(dup_c, MPI_ERRORS_RETURN));
    check("comm keyval", MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete,
                                                &comm_kv, NULL));
    check("type keyval", MPI_Type_create_keyval(MPI_TYPE_DUP_FN,
                                                MPI_TYPE_NULL_DELETE_FN,
                                                &type_kv, NULL));
    check("set attr", MPI_Comm_set_attr(dup_c, comm_kv, (void *)1234));
    check("set attr", MPI_Comm_set_attr(MPI_COMM_WORLD, comm_kv,
                                        (void *)4321));
    check("set type attr", MPI_Type_set_attr(vec_t, type_kv, (void *)77));
    MPI_Errhandler eh;
    check("create errhandler", MPI_Comm_create_errhandler(my_errh, &eh));
    check("set errhandler", MPI_Comm_set_errhandler(half_c, eh));
    check("free errhandler", MPI_Errhandler_free(&eh));
    check("op create", MPI_Op_create(my_sum, 1, &sum_op));
    check("info create", MPI_Info_create(&kept_info));
    check("info set", MPI_Info_set(kept_info, "heat_grid", "1-D"));
    check("info set", MPI_Info_set(kept_info, "striping_unit", "65536"));
}

/* CKPT_HANDLES=1 after a restart: the objects are back, as they were. */
static void check_handles(int rank)
{
    int size, res = -1, n = 0, st = -1, coords[1] = {-1}, ts = 0;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Errhandler eh;
    MPI_Aint lb, ext;
    MPI_Group g;

    MPI_Comm_size(MPI_COMM_WORLD, &size);
    {
        char v[MPI_MAX_INFO_VAL + 1], k[MPI_MAX_INFO_KEY + 1];
        int nk = 0, fl = 0;
        check("info nkeys", MPI_Info_get_nkeys(kept_info, &nk));
        check("info nthkey", MPI_Info_get_nthkey(kept_info, 1, k));
        check("info get", MPI_Info_get(kept_info, "heat_grid",
                                       MPI_MAX_INFO_VAL, v, &fl));
        if (nk != 2 || strcmp(k, "striping_unit") != 0 || !fl ||
            strcmp(v, "1-D") != 0)
            die("the info object is not back as it was", MPI_ERR_INFO);
    }
    check("compare", MPI_Comm_compare(dup_c, MPI_COMM_WORLD, &res));
    if (res != MPI_CONGRUENT)
        die("the duplicate is not congruent to MPI_COMM_WORLD", MPI_ERR_COMM);
    check("get name", MPI_Comm_get_name(dup_c, name, &n));
    if (strcmp(name, "heat-dup") != 0)
        die("the duplicate's name is lost", MPI_ERR_COMM);
    check("get errhandler", MPI_Comm_get_errhandler(dup_c, &eh));
    if (eh != MPI_ERRORS_RETURN)
        die("the duplicate's error handler is lost", MPI_ERR_COMM);
    check("topo test", MPI_Topo_test(cart_c, &st));
    check("coords", st == MPI_CART ? MPI_Cart_coords(cart_c, rank, 1, coords)
                                   : MPI_ERR_TOPOLOGY);
    if (coords[0] != rank)
        die("the Cartesian communicator's coordinates", MPI_ERR_TOPOLOGY);
    check("type size", MPI_Type_size(vec_t, &ts));
    check("type extent", MPI_Type_get_extent(vec_t, &lb, &ext));
    if (ts != 2 * (int)sizeof(int) || ext != 3 * (MPI_Aint)sizeof(int))
        die("the vector type's size or extent", MPI_ERR_TYPE);
    check("comm group", MPI_Comm_group(half_c, &g));
    check("group compare", MPI_Group_compare(g, half_g, &res));
    if (res != MPI_IDENT)
        die("the group is not the split's", MPI_ERR_GROUP);
    check("group free", MPI_Group_free(&g));
    check("rank", MPI_Comm_rank(half_c, &n));
    if (n != rank / 2)
        die("the split's rank", MPI_ERR_COMM);
    void *v = NULL;
    int flag = 0;
    check("get attr", MPI_Comm_get_attr(dup_c, comm_kv, &v, &flag));
    if (!flag || (intptr_t)v != 1234)
        die("the duplicate's attribute", MPI_ERR_KEYVAL);
    /* MPI_COMM_WORLD's are not brought back (libraries set theirs
     * again at their start) */
    check("get attr", MPI_Comm_get_attr(MPI_COMM_WORLD, comm_kv, &v, &flag));
    if (flag)
        die("MPI_COMM_WORLD's attribute came back", MPI_ERR_KEYVAL);
    check("get type attr", MPI_Type_get_attr(vec_t, type_kv, &v, &flag));
    if (!flag || (intptr_t)v != 77)
        die("the type's attribute", MPI_ERR_KEYVAL);
    /* the copy callback runs on a duplicate, the delete one on its free */
    MPI_Comm d2;
    check("dup of the duplicate", MPI_Comm_dup(dup_c, &d2));
    check("get attr", MPI_Comm_get_attr(d2, comm_kv, &v, &flag));
    if (!flag || (intptr_t)v != 1234)
        die("the attribute copied by MPI_COMM_DUP_FN", MPI_ERR_KEYVAL);
    check("free", MPI_Comm_free(&d2));
    if (deletes != 1)
        die("the delete callback after a restart", MPI_ERR_KEYVAL);
    /* the split's own error handler, and the operation */
    check("call errhandler", MPI_Comm_call_errhandler(half_c, 99));
    if (errh_calls != 1)
        die("the split's error handler after a restart", MPI_ERR_OTHER);
    int one = rank, sum = 0;
    check("allreduce", MPI_Allreduce(&one, &sum, 1, MPI_INT, sum_op,
                                     MPI_COMM_WORLD));
    if (sum != size * (size - 1) / 2 || (size > 1 && op_calls == 0))
        die("the user operation after a restart", MPI_ERR_OP);
}

/* inflight: the messages besides the halos, sent before the checkpoint
 * after iteration it to the right neighbour and to itself. */
static void extras_out(int it, int rank, int right)
{
    int a[2] = {it, 1}, b[2] = {it, 2}, me[2] = {it, rank};
    unsigned char m[200];

    for (int i = 0; i < 200; i++)
        m[i] = pat(it, rank, i);
    check("send a", MPI_Send(a, 2, MPI_INT, right, 3, MPI_COMM_WORLD));
    check("send b", MPI_Send(b, 2, MPI_INT, right, 3, MPI_COMM_WORLD));
    check("send m", MPI_Send(m, 200, MPI_BYTE, right, 4, MPI_COMM_WORLD));
    check("send self", MPI_Send(me, 2, MPI_INT, 0, 5, MPI_COMM_SELF));
    /* on the program's communicators: to the right on the duplicate, to
     * the next rank of the same parity on the half (itself when alone) */
    int d[2] = {it, rank + 100}, h[2] = {it, rank + 200}, hr, hs;
    check("send dup", MPI_Send(d, 2, MPI_INT, right, 7, dup_c));
    MPI_Comm_rank(half_c, &hr);
    MPI_Comm_size(half_c, &hs);
    check("send half", MPI_Send(h, 2, MPI_INT, (hr + 1) % hs, 8, half_c));
    if (handles) {
        int q[3] = {it, -5, rank};
        check("send cart", MPI_Send(q, 1, vec_t, right, 9, cart_c));
        pr_buf[0] = pr_buf[1] = -1;
        check("irecv posted across", MPI_Irecv(pr_buf, 2, MPI_INT,
                                               rank > 0 ? rank - 1
                                                        : MPI_PROC_NULL,
                                               11, dup_c, &pr_req));
        int ss[2] = {it, rank + 300};
        check("issend across", MPI_Issend(ss, 2, MPI_INT, right, 12, dup_c,
                                          &ss_req));
        gr_state = it * 7 + rank;
        check("grequest start", MPI_Grequest_start(gr_query, gr_free,
                                                   gr_cancel, &gr_state,
                                                   &gr_req));
        dsum_in = it * 10 + rank;
        dsum = -1;
        check("iallreduce on the duplicate",
              MPI_Iallreduce(&dsum_in, &dsum, 1, MPI_INT, MPI_SUM, dup_c,
                             &dsum_req));
    }
    for (int i = 0; i < BIG; i++)
        big[i] = pat(it, rank, i * 3);
    check("isend big", MPI_Isend(big, BIG, MPI_BYTE, right, 6,
                                 MPI_COMM_WORLD, &big_req));
    static double mine;
    mine = it * 1000.0 + rank;
    check("iallreduce", MPI_Iallreduce(&mine, &ared, 1, MPI_DOUBLE, MPI_SUM,
                                       MPI_COMM_WORLD, &ared_req));
}

/* ... and their receipt, checked, at iteration it from the left one. */
static void extras_in(int it, int rank, int left)
{
    int a[2] = {0, 0}, b[2] = {0, 0}, me[2] = {0, 0}, n = 0;
    unsigned char m[200];
    MPI_Status st;

    check("recv a", MPI_Recv(a, 2, MPI_INT, left, 3, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE));
    check("recv b", MPI_Recv(b, 2, MPI_INT, left, 3, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE));
    check("recv m", MPI_Recv(m, 200, MPI_BYTE, left, 4, MPI_COMM_WORLD, &st));
    check("recv self", MPI_Recv(me, 2, MPI_INT, 0, 5, MPI_COMM_SELF,
                                MPI_STATUS_IGNORE));
    int d[2] = {0, 0}, h[2] = {0, 0}, hr, hs;
    MPI_Status dst, hst;
    check("recv dup", MPI_Recv(d, 2, MPI_INT, left, 7, dup_c, &dst));
    if (left != MPI_PROC_NULL &&
        (d[0] != it || d[1] != left + 100 || dst.MPI_SOURCE != left))
        die("the message on the duplicate", MPI_ERR_OTHER);
    MPI_Comm_rank(half_c, &hr);
    MPI_Comm_size(half_c, &hs);
    int hleft = (hr + hs - 1) % hs;
    check("recv half", MPI_Recv(h, 2, MPI_INT, hleft, 8, half_c, &hst));
    /* world rank of hleft: same parity, hleft-th of them */
    if (h[0] != it || h[1] != hleft * 2 + rank % 2 + 200 ||
        hst.MPI_SOURCE != hleft)
        die("the message on the split communicator", MPI_ERR_OTHER);
    if (handles) {
        int s[2] = {it, rank}, size;
        MPI_Status pst;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
        check("send to the posted receive",
              MPI_Send(s, 2, MPI_INT, right, 11, dup_c));
        check("wait for the posted receive", MPI_Wait(&pr_req, &pst));
        if (left != MPI_PROC_NULL &&
            (pr_buf[0] != it || pr_buf[1] != left || pst.MPI_SOURCE != left))
            die("the receive posted across the checkpoint", MPI_ERR_OTHER);
        if (left == MPI_PROC_NULL && pst.MPI_SOURCE != MPI_PROC_NULL)
            die("the status of the receive completed before the checkpoint",
                MPI_ERR_OTHER);
        int gflag = 1, frees = gr_frees;
        MPI_Status gst;
        check("test the generalized request", MPI_Test(&gr_req, &gflag,
                                                       MPI_STATUS_IGNORE));
        if (gflag)
            die("a generalized request completed by nobody", MPI_ERR_OTHER);
        check("grequest complete", MPI_Grequest_complete(gr_req));
        check("wait for the generalized request", MPI_Wait(&gr_req, &gst));
        if (gst.MPI_TAG != it * 7 + rank || gr_frees != frees + 1 ||
            gr_req != MPI_REQUEST_NULL)
            die("the generalized request across the checkpoint",
                MPI_ERR_OTHER);
        check("wait for the iallreduce on the duplicate",
              MPI_Wait(&dsum_req, MPI_STATUS_IGNORE));
        if (dsum != it * 10 * size + size * (size - 1) / 2)
            die("the iallreduce on the duplicate across the checkpoint",
                MPI_ERR_OTHER);
        int ss[2] = {0, 0};
        check("recv the synchronous send",
              MPI_Recv(ss, 2, MPI_INT, left, 12, dup_c, MPI_STATUS_IGNORE));
        if (left != MPI_PROC_NULL && (ss[0] != it || ss[1] != left + 300))
            die("the synchronous send across the checkpoint", MPI_ERR_OTHER);
        check("wait for the synchronous send",
              MPI_Wait(&ss_req, MPI_STATUS_IGNORE));
        int q[3] = {-7, -7, -7};
        check("recv cart", MPI_Recv(q, 1, vec_t, left, 9, cart_c,
                                    MPI_STATUS_IGNORE));
        if (left != MPI_PROC_NULL &&
            (q[0] != it || q[1] != -7 || q[2] != left))
            die("the message of the vector type on the Cartesian "
                "communicator", MPI_ERR_OTHER);
    }
    static unsigned char got[BIG];
    MPI_Status bst;
    int bn = 0;
    check("recv big", MPI_Recv(got, BIG, MPI_BYTE, left, 6, MPI_COMM_WORLD,
                               &bst));
    if (left != MPI_PROC_NULL) {
        MPI_Get_count(&bst, MPI_BYTE, &bn);
        if (bn != BIG)
            die("the rendezvous's length", MPI_ERR_OTHER);
        for (int i = 0; i < BIG; i++)
            if (got[i] != pat(it, left, i * 3))
                die("the rendezvous's bytes", MPI_ERR_OTHER);
    }
    if (left != MPI_PROC_NULL) {
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (a[0] != it || a[1] != 1 || b[0] != it || b[1] != 2)
            die("two messages of one tag in flight: wrong or out of order",
                MPI_ERR_OTHER);
        if (n != 200 || st.MPI_SOURCE != left || st.MPI_TAG != 4)
            die("the 200-byte message's status", MPI_ERR_OTHER);
        for (int i = 0; i < 200; i++)
            if (m[i] != pat(it, left, i))
                die("the 200-byte message's bytes", MPI_ERR_OTHER);
    }
    if (me[0] != it || me[1] != rank)
        die("the message to itself", MPI_ERR_OTHER);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (ared != size * (it * 1000.0) + size * (size - 1) / 2.0)
        die("the Iallreduce started before the checkpoint", MPI_ERR_OTHER);
}

/* pending: rank 1 receives the 7 that rank 0 sent with tag on comm. */
static void recv_seven(int rank, int tag, MPI_Comm comm)
{
    int y = 0;

    if (rank != 1)
        return;
    check("recv", MPI_Recv(&y, 1, MPI_INT, 0, tag, comm, MPI_STATUS_IGNORE));
    if (y != 7)
        die("message", MPI_ERR_OTHER);
}

int main(int argc, char **argv)
{
    static double u[N + 2], v[N + 2];
    int ahead = 0; /* the halos of iteration it + 1 are sent already */
    int rank, size, it = 0, flag, kill_rank = -1, kill_it = -1, cls, rc;

    if (argc < 5) {
        fprintf(stderr, "usage: %s ITERS K RANK@ITER|- OUT "
                        "[b2b|pending|smaller]\n", argv[0]);
        return 2;
    }
    int iters = atoi(argv[1]), k = atoi(argv[2]);
    const char *mode = argc > 5 ? argv[5] : "";
    const char *marker = strchr(argv[3], ':');
    if (strcmp(argv[3], "-") != 0 &&
        sscanf(argv[3], "%d@%d", &kill_rank, &kill_it) != 2)
        return 2;
    if (marker != NULL)
        marker++;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* The arguments are checked. */
    if (MPIX_Checkpoint_register(NULL, 8) != MPI_ERR_ARG ||
        MPIX_Checkpoint_restarted(NULL) != MPI_ERR_ARG)
        die("argument checks", MPI_ERR_OTHER);
    rc = MPIX_Checkpoint(MPI_COMM_SELF);
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_COMM)
        die("MPIX_Checkpoint(MPI_COMM_SELF) is not MPI_ERR_COMM", rc);
    int taken;
    if (MPIX_Checkpoint_if_requested(MPI_COMM_WORLD, NULL) != MPI_ERR_ARG)
        die("MPIX_Checkpoint_if_requested(taken NULL)", MPI_ERR_OTHER);
    rc = MPIX_Checkpoint_if_requested(MPI_COMM_SELF, &taken);
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_COMM)
        die("MPIX_Checkpoint_if_requested(MPI_COMM_SELF) is not "
            "MPI_ERR_COMM", rc);
    int poll = strncmp(mode, "poll", 4) == 0;
    long nap = poll && mode[4] == ':' ? atol(mode + 5) : 0;

    /* The state: the iteration and the cells (the halo too, harmless). */
    check("register it", MPIX_Checkpoint_register(&it, sizeof(it)));
    check("register u", MPIX_Checkpoint_register(u, sizeof(u)));
    /* an update of the size; "smaller" leaves it 8 bytes short */
    check("register u again",
          MPIX_Checkpoint_register(u, sizeof(u) - (strcmp(mode, "smaller")
                                                   ? 0 : 8)));
    check("register ahead", MPIX_Checkpoint_register(&ahead, sizeof(ahead)));
    check("register ared", MPIX_Checkpoint_register(&ared, sizeof(ared)));
    const char *late = getenv("CKPT_COMMS_LATE");
    int comms_late = late != NULL && strcmp(late, "1") == 0;
    const char *hv = getenv("CKPT_HANDLES");
    handles = hv != NULL && strcmp(hv, "1") == 0;
    if (handles) {
        check("register dup", MPIX_Checkpoint_register(&dup_c, sizeof(dup_c)));
        check("register half",
              MPIX_Checkpoint_register(&half_c, sizeof(half_c)));
        check("register cart",
              MPIX_Checkpoint_register(&cart_c, sizeof(cart_c)));
        check("register vec", MPIX_Checkpoint_register(&vec_t, sizeof(vec_t)));
        check("register group",
              MPIX_Checkpoint_register(&half_g, sizeof(half_g)));
        check("register keyval",
              MPIX_Checkpoint_register(&comm_kv, sizeof(comm_kv)));
        check("register keyval",
              MPIX_Checkpoint_register(&type_kv, sizeof(type_kv)));
        check("register op", MPIX_Checkpoint_register(&sum_op, sizeof(sum_op)));
        check("register request",
              MPIX_Checkpoint_register(&pr_req, sizeof(pr_req)));
        check("register buffer",
              MPIX_Checkpoint_register(pr_buf, sizeof(pr_buf)));
        check("register synchronous send",
              MPIX_Checkpoint_register(&ss_req, sizeof(ss_req)));
        check("register info",
              MPIX_Checkpoint_register(&kept_info, sizeof(kept_info)));
        check("register iallreduce",
              MPIX_Checkpoint_register(&dsum_req, sizeof(dsum_req)));
        check("register grequest",
              MPIX_Checkpoint_register(&gr_req, sizeof(gr_req)));
        check("register grequest's state",
              MPIX_Checkpoint_register(&gr_state, sizeof(gr_state)));
        check("register iallreduce's result",
              MPIX_Checkpoint_register(&dsum, sizeof(dsum)));
    }
    if (strcmp(mode, "inflight") == 0 && !comms_late && !handles)
        make_comms(rank);
    check("restarted", MPIX_Checkpoint_restarted(&flag));
    if (strcmp(mode, "inflight") == 0 && (comms_late || (handles && !flag)))
        make_comms(rank);
    if (handles && flag)
        check_handles(rank);
    if (flag) {
        if (rank == 0)
            printf("restarted at iteration %d\n", it);
    } else {
        for (int i = 0; i < N + 2; i++)
            u[i] = (double)((rank * N + i) % 7) * 0.25;
    }

    if (strcmp(mode, "pending") == 0 && size > 1 && !flag) {
        int x = 7, y = 0;
        MPI_Request r = MPI_REQUEST_NULL, r2 = MPI_REQUEST_NULL;
        MPI_Comm dup;
        check("dup", MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        check("errhandler", MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
        /* on an intercommunicator (the even ranks and the odd ones) */
        MPI_Comm half, inter;
        check("split", MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        check("intercomm", MPI_Intercomm_create(half, 0, MPI_COMM_WORLD,
                                                rank % 2 ? 0 : 1, 95,
                                                &inter));
        check("errhandler", MPI_Comm_set_errhandler(inter,
                                                    MPI_ERRORS_RETURN));
        if (rank == 0)
            check("send", MPI_Send(&x, 1, MPI_INT, 0, 99, inter));
        rc = MPIX_Checkpoint(MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_PENDING)
            die("a checkpoint with a message in flight on an "
                "intercommunicator is not refused", rc);
        recv_seven(rank, 99, inter);
        check("free", MPI_Comm_free(&inter));
        check("free", MPI_Comm_free(&half));
        /* on a duplicate of MPI_COMM_WORLD: carried */
        if (rank == 0)
            check("send", MPI_Send(&x, 1, MPI_INT, 1, 99, dup));
        check("checkpoint with a message in flight on a duplicate",
              MPIX_Checkpoint(MPI_COMM_WORLD));
        recv_seven(rank, 99, dup);
        /* a synchronous send, matched only after the checkpoint: carried
         * (the receiver's image owes its sender the ack) */
        if (rank == 0)
            check("issend", MPI_Issend(&x, 1, MPI_INT, 1, 97, MPI_COMM_WORLD,
                                       &r));
        check("checkpoint with a synchronous send in flight",
              MPIX_Checkpoint(MPI_COMM_WORLD));
        if (rank == 1) {
            check("recv", MPI_Recv(&y, 1, MPI_INT, 0, 97, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE));
            if (y != 7)
                die("the synchronous send carried", MPI_ERR_OTHER);
        }
        if (rank == 0)
            check("wait", MPI_Wait(&r, MPI_STATUS_IGNORE));
        /* the same beside a rendezvous unreceived, which the cut pulls
         * in (receiving every unexpected message and putting it back):
         * that must not complete the synchronous send, whose receive is
         * the program's, after rank 0 has seen it still pending */
        static char rbig[BIG];
        if (rank == 0) {
            check("issend", MPI_Issend(&x, 1, MPI_INT, 1, 93, MPI_COMM_WORLD,
                                       &r));
            check("isend big", MPI_Isend(rbig, BIG, MPI_BYTE, 1, 92,
                                         MPI_COMM_WORLD, &r2));
        }
        check("checkpoint with a rendezvous beside a synchronous send",
              MPIX_Checkpoint(MPI_COMM_WORLD));
        if (rank == 1) {
            check("recv go", MPI_Recv(&y, 1, MPI_INT, 0, 91, MPI_COMM_WORLD,
                                      MPI_STATUS_IGNORE));
            check("recv", MPI_Recv(&y, 1, MPI_INT, 0, 93, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE));
            if (y != 7)
                die("the synchronous send beside a rendezvous", MPI_ERR_OTHER);
            check("recv big", MPI_Recv(rbig, BIG, MPI_BYTE, 0, 92,
                                       MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        if (rank == 0) {
            int done = 1;
            usleep(20000);
            check("test", MPI_Test(&r, &done, MPI_STATUS_IGNORE));
            if (done)
                die("a synchronous send completed before its receive",
                    MPI_ERR_OTHER);
            check("send go", MPI_Send(&x, 1, MPI_INT, 1, 91, MPI_COMM_WORLD));
            check("wait", MPI_Wait(&r, MPI_STATUS_IGNORE));
            check("wait", MPI_Wait(&r2, MPI_STATUS_IGNORE));
        }
        /* a posted receive */
        if (rank == size - 1) /* a receive nobody sends to */
            check("irecv", MPI_Irecv(&y, 1, MPI_INT, 0, 98, MPI_COMM_WORLD,
                                     &r));
        rc = MPIX_Checkpoint(MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_PENDING)
            die("a checkpoint with a receive posted is not refused", rc);
        if (rank == size - 1) {
            check("cancel", MPI_Cancel(&r));
            check("wait", MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
        /* a nonblocking collective of another communicator, which the
         * other ranks start only after the checkpoint (legal: it is not
         * MPI_COMM_WORLD's): refused, and the checkpoint must not wait
         * for it (it would wait for ever) */
        if (rank == 0)
            check("ibarrier", MPI_Ibarrier(dup, &r));
        rc = MPIX_Checkpoint(MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_PENDING)
            die("a checkpoint with an MPI_Ibarrier of a duplicate running "
                "is not refused", rc);
        if (rank != 0)
            check("ibarrier", MPI_Ibarrier(dup, &r));
        check("wait", MPI_Wait(&r, MPI_STATUS_IGNORE));
        /* ... but started by every rank before it, it runs to its end at
         * the cut: taken, and its request is complete after */
        int s_in = rank + 1, s_out = 0, flag2 = 0;
        check("iallreduce", MPI_Iallreduce(&s_in, &s_out, 1, MPI_INT,
                                           MPI_SUM, dup, &r));
        check("checkpoint with an MPI_Iallreduce of a duplicate started "
              "everywhere", MPIX_Checkpoint(MPI_COMM_WORLD));
        check("test", MPI_Test(&r, &flag2, MPI_STATUS_IGNORE));
        if (!flag2 || s_out != size * (size + 1) / 2)
            die("the MPI_Iallreduce of the duplicate did not end at the cut",
                MPI_ERR_OTHER);
        /* an MPI_Isendrecv whose peer posts its part only after the
         * checkpoint: not a collective, so the cut must not wait for it
         * (it would wait for ever): refused */
        if (rank == 0)
            check("isendrecv", MPI_Isendrecv(&x, 1, MPI_INT, 1, 89, &y, 1,
                                             MPI_INT, 1, 89, MPI_COMM_WORLD,
                                             &r));
        rc = MPIX_Checkpoint(MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_PENDING)
            die("a checkpoint with an MPI_Isendrecv unmatched is not "
                "refused", rc);
        if (rank == 1)
            check("sendrecv", MPI_Sendrecv(&x, 1, MPI_INT, 0, 89, &y, 1,
                                           MPI_INT, 0, 89, MPI_COMM_WORLD,
                                           MPI_STATUS_IGNORE));
        if (rank == 0)
            check("wait", MPI_Wait(&r, MPI_STATUS_IGNORE));
        /* an ordinary message in flight on MPI_COMM_WORLD: carried */
        if (rank == 0)
            check("send", MPI_Send(&x, 1, MPI_INT, 1, 96, MPI_COMM_WORLD));
        check("checkpoint with a message in flight",
              MPIX_Checkpoint(MPI_COMM_WORLD));
        recv_seven(rank, 96, MPI_COMM_WORLD);
        check("free", MPI_Comm_free(&dup));
        if (rank == 0)
            printf("pending checkpoints refused\n");
    }
    int inflight = strcmp(mode, "inflight") == 0;

    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    while (it < iters) {
        if (ahead) {
            /* sent before the checkpoint: here, or from the image */
            check("halo", MPI_Recv(&u[N + 1], 1, MPI_DOUBLE, right, 1,
                                   MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check("halo", MPI_Recv(&u[0], 1, MPI_DOUBLE, left, 2,
                                   MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            extras_in(it, rank, left);
            ahead = 0;
        } else {
            check("halo", MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 1, &u[N + 1],
                                       1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD,
                                       MPI_STATUS_IGNORE));
            check("halo", MPI_Sendrecv(&u[N], 1, MPI_DOUBLE, right, 2, &u[0],
                                       1, MPI_DOUBLE, left, 2, MPI_COMM_WORLD,
                                       MPI_STATUS_IGNORE));
        }
        for (int i = 1; i <= N; i++)
            v[i] = u[i] + 0.2 * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        memcpy(&u[1], &v[1], N * sizeof(double));
        it++;
        if (poll) {
            if (rank == 0 && nap > 0)
                usleep((useconds_t)nap);
            check("checkpoint if requested",
                  MPIX_Checkpoint_if_requested(MPI_COMM_WORLD, &taken));
            if (taken) {
                int lo, hi;
                check("allreduce", MPI_Allreduce(&it, &lo, 1, MPI_INT,
                                                 MPI_MIN, MPI_COMM_WORLD));
                check("allreduce", MPI_Allreduce(&it, &hi, 1, MPI_INT,
                                                 MPI_MAX, MPI_COMM_WORLD));
                if (lo != hi)
                    die("the ranks checkpointed at different iterations",
                        MPI_ERR_OTHER);
                if (rank == 0) {
                    printf("checkpoint taken at iteration %d\n", it);
                    fflush(stdout);
                }
            }
        }
        if (k > 0 && it % k == 0) {
            if (inflight && it < iters) {
                check("halo ahead", MPI_Send(&u[1], 1, MPI_DOUBLE, left, 1,
                                             MPI_COMM_WORLD));
                check("halo ahead", MPI_Send(&u[N], 1, MPI_DOUBLE, right, 2,
                                             MPI_COMM_WORLD));
                extras_out(it, rank, right);
                ahead = 1;
            }
            check("checkpoint", MPIX_Checkpoint(MPI_COMM_WORLD));
            check("wait big", MPI_Wait(&big_req, MPI_STATUS_IGNORE));
            check("wait iallreduce", MPI_Wait(&ared_req, MPI_STATUS_IGNORE));
            if (strcmp(mode, "b2b") == 0)
                check("checkpoint 2", MPIX_Checkpoint(MPI_COMM_WORLD));
        }
        if (rank == kill_rank && it == kill_it &&
            (marker == NULL ||
             open(marker, O_WRONLY | O_CREAT | O_EXCL, 0644) >= 0))
            raise(SIGKILL);
    }

    double *all = rank == 0 ? malloc((size_t)size * N * sizeof(double)) : NULL;
    check("gather", MPI_Gather(&u[1], N, MPI_DOUBLE, all, N, MPI_DOUBLE, 0,
                               MPI_COMM_WORLD));
    if (rank == 0) {
        FILE *f = fopen(argv[4], "wb");
        if (f == NULL || fwrite(all, sizeof(double), (size_t)size * N, f) !=
                             (size_t)size * N || fclose(f) != 0)
            die("writing the result", MPI_ERR_IO);
        printf("done: %d iterations\n", it);
        free(all);
    }
    if (dup_c != MPI_COMM_NULL) {
        check("free", MPI_Comm_free(&dup_c));
        check("free", MPI_Comm_free(&half_c));
    }
    if (handles) {
        check("free", MPI_Comm_free(&cart_c));
        check("free", MPI_Type_free(&vec_t));
        check("free", MPI_Group_free(&half_g));
        check("delete attr", MPI_Comm_delete_attr(MPI_COMM_WORLD, comm_kv));
        check("free keyval", MPI_Comm_free_keyval(&comm_kv));
        check("free keyval", MPI_Type_free_keyval(&type_kv));
        check("op free", MPI_Op_free(&sum_op));
        check("info free", MPI_Info_free(&kept_info));
        /* after a restart too: the duplicate's and MPI_COMM_WORLD's */
        if (deletes < 2)
            die("the delete callbacks", MPI_ERR_KEYVAL);
    }
    MPI_Finalize();
    return 0;
}
