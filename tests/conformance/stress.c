/* Conformance generator: scenarios aimed at kinds of bug that the random
 * cases of p2p.c and coll.c reach too rarely, with the sizes and timing that
 * expose them (docs/TESTING.md, "Targeted scenarios"):
 *
 *   bigtype  large noncontiguous messages (a resized struct {int; double},
 *            strided doubles; 3-8 MiB of data) sent back to back into freshly
 *            calloc'ed, untouched receive buffers: a lost wake-up shows as a
 *            case far over its time budget;
 *   sleeper  one rank sleeps outside MPI while the others make calls that
 *            must be local: hundreds of Isend/Issend/Ibsend/Bsend and
 *            persistent starts past any channel or credit window, or
 *            nonblocking and persistent collectives; every call is timed;
 *   idup     MPI_Comm_idup of intercommunicators (also of ones built with
 *            MPI_Comm_create_group, two pending on one parent) with
 *            point-to-point traffic between the idups that deadlocks if an
 *            idup waits for the other ranks. */
#define _GNU_SOURCE 1  /* MAP_ANONYMOUS */
#include "conform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static uint64_t skey(int a, int b)
{
    return ((uint64_t)g_case << 32) ^ ((uint64_t)(a + 7) << 20) ^ (uint64_t)b ^ 0x9d2c5680a5a5ULL;
}

/* ---- large noncontiguous messages into untouched memory ------------------ */
enum { BT_STRUCT_PACKED, BT_STRUCT_ALIGNED, BT_VECTOR_ONE, BT_VECTOR_BLOCKS, BT_RESIZED_DOUBLE, BT_N };

static tmodel *struct_int_double(MPI_Aint dbl_off, MPI_Aint extent)
{
    int bl[2] = { 1, 1 };
    MPI_Aint disp[2] = { 0, dbl_off };
    MPI_Datatype types[2] = { MPI_INT, MPI_DOUBLE }, tmp, dt;
    CHK(MPI_Type_create_struct(2, bl, disp, types, &tmp));
    CHK(MPI_Type_create_resized(tmp, 0, extent, &dt));
    CHK(MPI_Type_free(&tmp));
    seg_t segs[2] = { { 0, 4, 4 }, { dbl_off, 8, 8 } };
    char d[96];
    snprintf(d, sizeof d, "resized(0,%ld){struct{int@0,double@%ld}}", (long)extent, (long)dbl_off);
    return tm_custom(dt, segs, 2, 0, extent, MPI_DATATYPE_NULL, d);
}

/* vector(n,1,2){double}, resized to n*16 when `resize` (periodic). */
static tmodel *strided_doubles(int n, int resize)
{
    MPI_Datatype tmp, dt;
    CHK(MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &tmp));
    MPI_Aint ub = (MPI_Aint)(n - 1) * 16 + 8;
    if (resize) {
        ub = (MPI_Aint)n * 16;
        CHK(MPI_Type_create_resized(tmp, 0, ub, &dt));
        CHK(MPI_Type_free(&tmp));
    } else {
        dt = tmp;
    }
    seg_t *segs = malloc((size_t)n * sizeof *segs);
    for (int i = 0; i < n; i++)
        segs[i] = (seg_t){ (MPI_Aint)i * 16, 8, 8 };
    char d[96];
    snprintf(d, sizeof d, "%svector(%d,1,2){double}%s", resize ? "resized(" : "", n,
             resize ? ")" : "");
    tmodel *t = tm_custom(dt, segs, (size_t)n, 0, ub, MPI_DOUBLE, d);
    free(segs);
    return t;
}

/* The receiver's other layout with the same type signature: dense. */
static tmodel *dense_of(int kind)
{
    if (kind == BT_STRUCT_PACKED || kind == BT_STRUCT_ALIGNED)
        return struct_int_double(4, 12);
    return tm_basic(MPI_DOUBLE);
}

static int all_zero(const unsigned char *p, size_t n)
{
    local_enter();
    size_t i = 0;
    for (; i < n && ((uintptr_t)(p + i) & 7); i++)
        if (p[i])
            break;
    if (i == n || ((uintptr_t)(p + i) & 7) == 0) {
        for (; i + 8 <= n; i += 8) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (w)
                break;
        }
    }
    for (; i < n; i++)
        if (p[i])
            break;
    local_leave();
    return i == n;
}

void scenario_bigtype(rng_t *r)
{
    int kind = rng_range(r, 0, BT_N - 1);
    MPI_Aint cs;               /* send count */
    tmodel *ts;
    int nmsg;
    switch (kind) {
    case BT_STRUCT_PACKED:
    case BT_STRUCT_ALIGNED:
        ts = struct_int_double(kind == BT_STRUCT_PACKED ? 4 : 8, 24);
        cs = rng_chance(r, 70) ? 262144 : 131072;
        nmsg = rng_chance(r, 70) ? 3 : rng_range(r, 1, 2);
        break;
    case BT_VECTOR_ONE:
        ts = strided_doubles(1 << 20, 0);           /* 8 MiB of data in one element */
        cs = 1;
        nmsg = rng_range(r, 1, 2);
        break;
    case BT_VECTOR_BLOCKS: {
        int n = 1 << rng_range(r, 4, 12);
        ts = strided_doubles(n, 1);
        cs = (1 << 20) / n;
        nmsg = rng_range(r, 1, 2);
        break;
    }
    default: {
        MPI_Datatype dt;
        CHK(MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &dt));
        seg_t seg = { 0, 8, 8 };
        ts = tm_custom(dt, &seg, 1, 0, 16, MPI_DOUBLE, "resized(0,16){double}");
        cs = 1 << 20;
        nmsg = rng_range(r, 1, 2);
        break;
    }
    }
    int dense = rng_chance(r, 25), use_dup = rng_chance(r, 30);
    int src = rng_range(r, 0, g_size - 1);
    int dst = (src + rng_range(r, 1, g_size > 1 ? g_size - 1 : 1)) % g_size;
    int smode = rng_range(r, 0, 2), rmode = rng_range(r, 0, 2), late = rng_chance(r, 25);
    int tag = rng_range(r, 0, 30000);
    tmodel *tr = dense ? dense_of(kind) : ts;
    MPI_Aint nbytes = cs * ts->size;
    MPI_Aint cr = dense ? nbytes / tr->size : cs;
    static const char *sname[] = { "send", "isend", "ssend" };
    static const char *rname[] = { "recv", "irecv+waitall", "irecv+wait in reverse" };
    desc_add("bigtype: %d x %s %d->%d of %s count %ld (%ld B of data, extent %ld) into fresh (mmap'ed, "
             "untouched) buffers, %s as %s count %ld%s%s",
             nmsg, sname[smode], src, dst, ts->desc, (long)cs, (long)nbytes, (long)tm_extent(ts),
             rname[rmode], dense ? tr->desc : "the same type", (long)cr, late ? ", receiver 20 ms late" : "",
             use_dup ? ", on a dup of world" : "");
    MPI_Comm comm = MPI_COMM_WORLD;
    if (use_dup)
        CHK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    if (g_size >= 2 && g_rank == src) {
        unsigned char *alloc[3], *base[3];
        MPI_Request reqs[3];
        MPI_Aint lo, hi;
        tm_span(ts, cs, &lo, &hi);
        for (int i = 0; i < nmsg; i++) {
            alloc[i] = malloc((size_t)(hi - lo) + 64);
            base[i] = alloc[i] + 32 - lo;
            put_stream(base[i], ts, 0, nbytes, skey(src, i));
        }
        for (int i = 0; i < nmsg; i++) {
            if (smode == 0)
                CHK(MPI_Send(base[i], (int)cs, ts->dt, dst, tag, comm));
            else if (smode == 1)
                CHK(MPI_Isend(base[i], (int)cs, ts->dt, dst, tag, comm, &reqs[i]));
            else
                CHK(MPI_Ssend(base[i], (int)cs, ts->dt, dst, tag, comm));
        }
        if (smode == 1)
            CHK(MPI_Waitall(nmsg, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < nmsg; i++)
            free(alloc[i]);
    }
    if (g_size >= 2 && g_rank == dst) {
        unsigned char *alloc[3], *base[3];
        size_t len;
        MPI_Request reqs[3];
        MPI_Status sts[3];
        MPI_Aint lo, hi;
        tm_span(tr, cr, &lo, &hi);
        len = (size_t)(hi - lo) + 2 * GUARD;
        if (late) {
            sleep_ms(20);
            add_sleep(0.02);
        }
        for (int i = 0; i < nmsg; i++) {
            /* Untouched: every page faults in during the receive.  (calloc
             * would often reuse freed, already mapped heap memory and clear
             * it first: a receiver that never falls behind.) */
            void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            alloc[i] = p == MAP_FAILED ? NULL : p;
            if (!alloc[i]) {
                fprintf(stderr, "conform: out of memory (%zu bytes)\n", len);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            base[i] = alloc[i] + GUARD - lo;
            status_init(&sts[i]);
        }
        for (int i = 0; i < nmsg; i++) {
            if (rmode == 0)
                CHK(MPI_Recv(base[i], (int)cr, tr->dt, src, tag, comm, &sts[i]));
            else
                CHK(MPI_Irecv(base[i], (int)cr, tr->dt, src, tag, comm, &reqs[i]));
        }
        if (rmode == 1)
            CHK(MPI_Waitall(nmsg, reqs, sts));
        else if (rmode == 2)
            for (int i = nmsg - 1; i >= 0; i--)
                CHK(MPI_Wait(&reqs[i], &sts[i]));
        for (int i = 0; i < nmsg; i++) {
            char what[64];
            snprintf(what, sizeof what, "big message %d of %d", i, nmsg);
            check_status(&sts[i], src, tag, tr, nbytes, rmode != 1, what);
            MPI_Aint bad = check_stream_zero(base[i], tr, nbytes, skey(src, i));
            if (bad >= 0)
                fail("%s: data byte %ld (of %ld) differs", what, (long)bad, (long)nbytes);
            else if (!all_zero(alloc[i], len))
                fail("%s: bytes outside the data (gaps or guards) were written", what);
            munmap(alloc[i], len);
        }
    }
    add_bytes((double)nbytes * nmsg);
    /* One element of a million blocks: every library walks it far slower
     * than the same blocks as a million small elements (Shoal and MPICH
     * about 0.3 us a block): budgeted as 24 more bytes a block. */
    if (kind == BT_VECTOR_ONE)
        add_bytes(24.0 * (double)ts->nsegs * nmsg);
    if (use_dup)
        CHK(MPI_Comm_free(&comm));
    if (tr != ts)
        tm_free(tr);
    tm_free(ts);
}

/* ---- local calls while a peer sleeps ------------------------------------- */
enum { SM_ISEND, SM_ISSEND, SM_IBSEND, SM_BSEND, SM_SEND_INIT, SM_SSEND_INIT, SM_BSEND_INIT, SM_N };
static const char *sm_name[] = { "MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Bsend",
                                 "MPI_Send_init+MPI_Start", "MPI_Ssend_init+MPI_Start",
                                 "MPI_Bsend_init+MPI_Start" };

static void fill_msg(unsigned char *p, int len, uint64_t key)
{
    uint64_t x = key * 0x9E3779B97F4A7C15ULL + 1;
    for (int i = 0; i < len; i++) {
        x ^= x >> 29;
        x *= 0xBF58476D1CE4E5B9ULL;
        p[i] = (unsigned char)(x >> 56);
    }
}

/* Hundreds of sends to a rank that sleeps: each start must return at once. */
static void sleeper_p2p(rng_t *r, ccomm_t *c)
{
    /* The sleeper: group sg (intercommunicator) and its rank there. */
    int sg = c->inter ? rng_range(r, 0, 1) : 0;
    int gsize = !c->inter ? c->size : (c->group == sg ? c->size : c->rsize);
    int srank = rng_range(r, 0, gsize - 1);
    int big = rng_chance(r, 50);
    int n = big ? rng_range(r, 1000, 1100) : rng_range(r, 100, 200);
    int msz = rng_chance(r, 50) ? 100 : 1000, nlarge = rng_range(r, 0, 4);
    int mix[3], nmix = rng_range(r, 1, 3), bulk = rng_chance(r, 50), tag0 = rng_range(r, 0, 20000);
    for (int i = 0; i < nmix; i++) {
        mix[i] = rng_range(r, 0, SM_N - 1);
        if (t_no_bsend && (mix[i] == SM_IBSEND || mix[i] == SM_BSEND || mix[i] == SM_BSEND_INIT))
            mix[i] = SM_ISEND;
    }
    char md[160];
    size_t u = 0;
    for (int i = 0; i < nmix; i++)
        u += (size_t)snprintf(md + u, sizeof md - u, "%s%s", i ? "," : "", sm_name[mix[i]]);
    desc_add("sleeper: %s rank %d sleeps %.0f ms while every %s rank sends it %d messages of %d B "
             "(+%d of 64 KiB) by %s; it then receives them %s",
             c->inter ? (sg ? "group 1" : "group 0") : "", srank, PEER_SLEEP * 1e3,
             c->inter ? "remote" : "other", n, msz, nlarge, md, bulk ? "irecv all+waitall" : "one by one");
    int total = n + nlarge;
    int *len = malloc((size_t)total * sizeof *len), *mode = malloc((size_t)total * sizeof *mode);
    int *tags = malloc((size_t)total * sizeof *tags);
    for (int i = 0; i < total; i++) {
        len[i] = msz;
        mode[i] = mix[rng_below(r, (uint64_t)nmix)];
        tags[i] = tag0 + (int)rng_below(r, 3);
    }
    for (int k = 0; k < nlarge; k++)
        len[rng_below(r, (uint64_t)total)] = 65536;
    int am_sleeper = c->inter ? (c->group == sg && c->rank == srank) : c->rank == srank;
    int am_sender = c->inter ? c->group != sg : c->rank != srank;
    add_sleep(PEER_SLEEP);
    if (am_sleeper) {
        sleep_ms((int)(PEER_SLEEP * 1e3));
        int nsend = c->inter ? c->rsize : c->size - 1;
        for (int s = 0; s < nsend; s++) {
            int from = c->inter ? s : (s < srank ? s : s + 1);
            unsigned char *buf;
            size_t off = 0;
            size_t *offs = malloc((size_t)total * sizeof *offs);
            MPI_Request *reqs = malloc((size_t)total * sizeof *reqs);
            MPI_Status *sts = malloc((size_t)total * sizeof *sts);
            for (int i = 0; i < total; i++) {
                offs[i] = off;
                off += (size_t)len[i];
            }
            buf = malloc(off + 1);
            for (int i = 0; i < total; i++) {
                status_init(&sts[i]);
                if (bulk)
                    CHK(MPI_Irecv(buf + offs[i], len[i], MPI_BYTE, from, tags[i], c->comm, &reqs[i]));
                else
                    CHK(MPI_Recv(buf + offs[i], len[i], MPI_BYTE, from, tags[i], c->comm, &sts[i]));
            }
            if (bulk)
                CHK(MPI_Waitall(total, reqs, sts));
            unsigned char *want = malloc(65536);
            int reported = 0;
            local_enter();
            for (int i = 0; i < total && !reported; i++) {
                int cnt = -1;
                MPI_Get_count(&sts[i], MPI_BYTE, &cnt);
                fill_msg(want, len[i], skey(from, i));
                if (sts[i].MPI_SOURCE != from || sts[i].MPI_TAG != tags[i] || cnt != len[i]) {
                    fail("message %d of %d from %d: status source %d tag %d count %d, expected %d %d %d",
                         i, total, from, sts[i].MPI_SOURCE, sts[i].MPI_TAG, cnt, from, tags[i], len[i]);
                    reported = 1;
                } else if (memcmp(want, buf + offs[i], (size_t)len[i]) != 0) {
                    fail("message %d of %d from %d (%s, %d B): data differs", i, total, from,
                         sm_name[mode[i]], len[i]);
                    reported = 1;
                }
            }
            local_leave();
            free(want);
            free(buf);
            free(offs);
            free(reqs);
            free(sts);
        }
    }
    if (am_sender) {
        int dest = srank;
        size_t off = 0, bsize = 1024;
        for (int i = 0; i < total; i++) {
            off += (size_t)len[i];
            if (mode[i] == SM_IBSEND || mode[i] == SM_BSEND || mode[i] == SM_BSEND_INIT)
                bsize += (size_t)len[i] + MPI_BSEND_OVERHEAD + 64;
        }
        unsigned char *buf = malloc(off + 1), *bbuf = NULL;
        MPI_Request *reqs = malloc((size_t)total * sizeof *reqs);
        size_t o = 0;
        for (int i = 0; i < total; i++) {
            fill_msg(buf + o, len[i], skey(c->rank, i));
            o += (size_t)len[i];
        }
        if (bsize > 1024) {
            bbuf = malloc(bsize);
            CHK(MPI_Buffer_attach(bbuf, (int)bsize));
        }
        o = 0;
        for (int i = 0; i < total; i++) {
            void *p = buf + o;
            double t0 = now();
            switch (mode[i]) {
            case SM_ISEND: CHK(MPI_Isend(p, len[i], MPI_BYTE, dest, tags[i], c->comm, &reqs[i])); break;
            case SM_ISSEND: CHK(MPI_Issend(p, len[i], MPI_BYTE, dest, tags[i], c->comm, &reqs[i])); break;
            case SM_IBSEND: CHK(MPI_Ibsend(p, len[i], MPI_BYTE, dest, tags[i], c->comm, &reqs[i])); break;
            case SM_BSEND:
                CHK(MPI_Bsend(p, len[i], MPI_BYTE, dest, tags[i], c->comm));
                reqs[i] = MPI_REQUEST_NULL;
                break;
            case SM_SEND_INIT: CHK(MPI_Send_init(p, len[i], MPI_BYTE, dest, tags[i], c->comm, &reqs[i])); break;
            case SM_SSEND_INIT: CHK(MPI_Ssend_init(p, len[i], MPI_BYTE, dest, tags[i], c->comm, &reqs[i])); break;
            default: CHK(MPI_Bsend_init(p, len[i], MPI_BYTE, dest, tags[i], c->comm, &reqs[i])); break;
            }
            if (mode[i] >= SM_SEND_INIT)
                CHK(MPI_Start(&reqs[i]));
            char nm[96];
            snprintf(nm, sizeof nm, "%s of message %d (%d B) of %d", sm_name[mode[i]], i, len[i], total);
            /* Open MPI 4's MPI_Bsend waits for the receiver (its Ibsend and
             * Bsend_init do not): not timed there. */
            if (!(g_quirk_ompi4 && mode[i] == SM_BSEND))
                check_local_call(nm, t0, PEER_SLEEP);
            o += (size_t)len[i];
        }
        CHK(MPI_Waitall(total, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < total; i++)
            if (mode[i] >= SM_SEND_INIT)
                CHK(MPI_Request_free(&reqs[i]));
        if (bbuf) {
            void *a;
            int sz;
            CHK(MPI_Buffer_detach(&a, &sz));
            free(bbuf);
        }
        free(buf);
        free(reqs);
    }
    long bytes = 0;
    for (int i = 0; i < total; i++)
        bytes += len[i];
    add_bytes((double)bytes * (c->inter ? c->rsize : c->size - 1));
    free(len);
    free(mode);
    free(tags);
}

/* Nonblocking or persistent collectives started while one member sleeps. */
static void sleeper_coll(rng_t *r, ccomm_t *c)
{
    int k = rng_range(r, 1, 3), persistent = rng_chance(r, 40), small = rng_chance(r, 60);
    int members = c->inter ? c->size + c->rsize : c->size;
    int sleeper = rng_range(r, 0, members - 1);
    int me = c->rank + (c->inter && c->group == 1 ? c->rsize : 0);
    desc_add("sleeper: member %d of %s sleeps %.0f ms before %d %s collective(s) the others start%s",
             sleeper, c->desc, PEER_SLEEP * 1e3, k, persistent ? "persistent" : "nonblocking",
             persistent ? " (each rank in its own order)" : "");
    cop_t *ops[3];
    MPI_Request reqs[3];
    for (int i = 0; i < k; i++) {
        rng_t sub = rng_derive(rng_next(r), 300u + (uint64_t)i);
        ops[i] = cop_new(&sub, c, persistent ? FORM_PERSISTENT : FORM_NONBLOCKING, small);
        cop_fill(ops[i], 0);
        if (cop_form(ops[i]) == FORM_PERSISTENT)
            cop_start(ops[i], -1);    /* the (collective) initialization, before the sleep */
    }
    add_sleep(PEER_SLEEP);
    if (me == sleeper)
        sleep_ms((int)(PEER_SLEEP * 1e3));
    /* Persistent ones start in this rank's own order (MPI 4.0 orders their
     * initializations only); nonblocking ones in the common order. */
    rng_t mine = rng_derive(rng_next(r), 0x50000u + (uint64_t)g_rank);
    int order[3] = { 0, 1, 2 };
    if (cop_form(ops[0]) == FORM_PERSISTENT)
        rng_shuffle(&mine, order, k);
    for (int j = 0; j < k; j++) {
        int i = order[j];
        cop_start(ops[i], 0);
        if (me != sleeper)
            check_local_call(cop_name(ops[i]), cop_call_time(ops[i]), PEER_SLEEP);
        reqs[i] = *cop_request(ops[i]);
    }
    if (rng_chance(&mine, 50)) {
        CHK(MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE));
    } else {
        int ord[3] = { 0, 1, 2 };
        rng_shuffle(&mine, ord, k);
        for (int i = 0; i < k; i++)
            CHK(MPI_Wait(&reqs[ord[i]], MPI_STATUS_IGNORE));
    }
    for (int i = 0; i < k; i++) {
        if (cop_form(ops[i]) != FORM_PERSISTENT)
            *cop_request(ops[i]) = MPI_REQUEST_NULL;
        cop_verify(ops[i], 0);
        cop_free(ops[i]);
    }
}

void scenario_sleeper(rng_t *r)
{
    ccomm_t c;
    int p2p = rng_chance(r, 55);
    comm_make(&c, r, random_comm_kind(r));
    if (c.comm == MPI_COMM_NULL || (!c.inter && c.size < 2)) {
        desc_add("sleeper: on %s: nothing to do here", c.desc);
        comm_release(&c);
        return;
    }
    if (p2p)
        sleeper_p2p(r, &c);
    else
        sleeper_coll(r, &c);
    comm_release(&c);
}

/* ---- idups of intercommunicators with traffic between them --------------- */

/* An intercommunicator whose two local communicators come from
 * MPI_Comm_create_group (collective over the group only). */
static void inter_from_create_group(ccomm_t *c, rng_t *r)
{
    int color[256], n[2] = { 0, 0 }, ranks[2][256];
    for (;;) {
        n[0] = n[1] = 0;
        for (int i = 0; i < g_size; i++) {
            color[i] = (int)rng_below(r, 2);
            ranks[color[i]][n[color[i]]++] = i;
        }
        if (n[0] && n[1])
            break;
    }
    int rev = rng_chance(r, 40), tag = rng_range(r, 0, 999);
    for (int g = 0; g < 2 && rev; g++)
        for (int i = 0; i < n[g] / 2; i++) {
            int t = ranks[g][i];
            ranks[g][i] = ranks[g][n[g] - 1 - i];
            ranks[g][n[g] - 1 - i] = t;
        }
    int mine = color[g_rank];
    MPI_Group wg, lg;
    MPI_Comm local;
    CHK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CHK(MPI_Group_incl(wg, n[mine], ranks[mine], &lg));
    CHK(MPI_Comm_create_group(MPI_COMM_WORLD, lg, tag, &local));
    CHK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, ranks[1 - mine][0], tag + 1, &c->comm));
    CHK(MPI_Comm_free(&local));
    CHK(MPI_Group_free(&lg));
    CHK(MPI_Group_free(&wg));
    c->owned = 1;
    c->group = mine;
    char g[260];
    for (int i = 0; i < g_size && i < 255; i++)
        g[i] = (char)('0' + color[i]);
    g[g_size < 255 ? g_size : 255] = 0;
    snprintf(c->desc, sizeof c->desc, "inter(create_group groups %s%s)", g, rev ? ",rev" : "");
    CHK(MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN));
    comm_fill_info(c);
}

/* MPI_Comm_create_group of a random subset of world in a random order. */
static void create_group_subset(ccomm_t *c, rng_t *r)
{
    int ranks[256], n = 0, in[256];
    for (int i = 0; i < g_size; i++)
        in[i] = rng_chance(r, 75);
    in[rng_range(r, 0, g_size - 1)] = 1;
    for (int i = 0; i < g_size; i++)
        if (in[i])
            ranks[n++] = i;
    rng_shuffle(r, ranks, n);
    int tag = rng_range(r, 0, 999);
    char g[300];
    size_t u = 0;
    for (int i = 0; i < n && u + 5 < sizeof g; i++)
        u += (size_t)snprintf(g + u, sizeof g - u, "%s%d", i ? "," : "", ranks[i]);
    snprintf(c->desc, sizeof c->desc, "create_group(%s)", g);
    c->owned = 1;
    c->comm = MPI_COMM_NULL;
    if (in[g_rank]) {
        MPI_Group wg, lg;
        CHK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        CHK(MPI_Group_incl(wg, n, ranks, &lg));
        CHK(MPI_Comm_create_group(MPI_COMM_WORLD, lg, tag, &c->comm));
        CHK(MPI_Group_free(&lg));
        CHK(MPI_Group_free(&wg));
        CHK(MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN));
        comm_fill_info(c);
    }
}

void scenario_idup_traffic(rng_t *r)
{
    ccomm_t base, traffic;
    memset(&base, 0, sizeof base);
    int pk = rng_range(r, 0, 9);
    if (pk < 4)
        comm_make(&base, r, CK_INTER);
    else if (pk < 6)
        inter_from_create_group(&base, r);
    else if (pk < 8)
        create_group_subset(&base, r);
    else
        comm_make(&base, r, rng_chance(r, 50) ? CK_DUP : CK_SPLIT);
    int k = rng_chance(r, 50) ? 2 : 1, with_traffic = rng_chance(r, 75);
    int tmode = rng_range(r, 0, 2), sleeper = rng_chance(r, 40) ? rng_range(r, 0, g_size - 1) : -1;
    static const char *tname[] = { "send", "ssend", "isend+wait" };
    desc_add("idup traffic: %d pending idup(s) of %s%s%s", k, base.desc,
             with_traffic ? "; after its first idup an even world rank sends to its odd neighbour, "
                            "who receives before its own idup: "
                          : "",
             with_traffic ? tname[tmode] : "");
    if (sleeper >= 0)
        desc_add("world rank %d sleeps %.0f ms before its first idup; the others' idups are timed",
                 sleeper, PEER_SLEEP * 1e3);
    comm_make(&traffic, r, CK_DUP);
    int member = base.comm != MPI_COMM_NULL;
    /* Open MPI 4 hangs with several pending idups of an intercommunicator:
     * there each is completed at once, so the traffic goes first. */
    int quirk = g_quirk_ompi4 && base.inter;
    int even = g_rank % 2 == 0, partner = even ? g_rank + 1 : g_rank - 1;
    int talk = with_traffic && partner < g_size;
    int payload[4] = { g_rank, (int)g_case, 7, -7 }, got[4] = { 0, 0, 0, 0 };
    MPI_Comm nc[2] = { MPI_COMM_NULL, MPI_COMM_NULL };
    MPI_Request reqs[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
    if (sleeper >= 0)
        add_sleep(PEER_SLEEP);
    if (talk && !even) {
        MPI_Status st;
        status_init(&st);
        CHK(MPI_Recv(got, 4, MPI_INT, partner, 77, traffic.comm, &st));
        if (got[0] != partner || got[1] != (int)g_case || got[2] != 7 || got[3] != -7)
            fail("idup traffic: received %d %d %d %d from %d", got[0], got[1], got[2], got[3], partner);
        check_status(&st, partner, 77, NULL, 0, 1, "MPI_Recv between idups");
    }
    if (talk && even && quirk)
        CHK(MPI_Send(payload, 4, MPI_INT, partner, 77, traffic.comm));
    if (g_rank == sleeper)
        sleep_ms((int)(PEER_SLEEP * 1e3));
    for (int i = 0; i < k; i++) {
        if (member) {
            double t0 = now();
            CHK(MPI_Comm_idup(base.comm, &nc[i], &reqs[i]));
            if (sleeper >= 0 && g_rank != sleeper)
                check_local_call(base.inter ? "MPI_Comm_idup of an intercommunicator" : "MPI_Comm_idup", t0,
                                 PEER_SLEEP);
            if (quirk)
                CHK(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
        }
        if (i == 0 && talk && even && !quirk) {
            if (tmode == 0) {
                CHK(MPI_Send(payload, 4, MPI_INT, partner, 77, traffic.comm));
            } else if (tmode == 1) {
                CHK(MPI_Ssend(payload, 4, MPI_INT, partner, 77, traffic.comm));
            } else {
                MPI_Request q;
                CHK(MPI_Isend(payload, 4, MPI_INT, partner, 77, traffic.comm, &q));
                CHK(MPI_Wait(&q, MPI_STATUS_IGNORE));
            }
        }
    }
    rng_t mine = rng_derive(rng_next(r), 0x60000u + (uint64_t)g_rank);
    if (member) {
        if (rng_chance(&mine, 50)) {
            CHK(MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE));
        } else {
            for (int i = k - 1; i >= 0; i--)
                CHK(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
        }
    }
    for (int i = 0; i < k; i++) {
        rng_t sub = rng_derive(rng_next(r), 400u + (uint64_t)i);
        if (!member)
            continue;
        int res = -1;
        CHK(MPI_Comm_compare(base.comm, nc[i], &res));
        if (res != MPI_CONGRUENT)
            fail("MPI_Comm_compare(comm, idup %d of it) is %d, expected MPI_CONGRUENT", i, res);
        ccomm_t d = base;
        d.comm = nc[i];
        d.owned = 1;
        CHK(MPI_Comm_set_errhandler(d.comm, MPI_ERRORS_RETURN));
        comm_fill_info(&d);
        if (d.inter || d.size >= 2)
            run_cop_whole(&sub, &d, 1);
        comm_release(&d);
    }
    comm_release(&traffic);
    comm_release(&base);
}
