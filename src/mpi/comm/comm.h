/*
 * Communicator construction: what the files of src/mpi/comm (comm_*.c,
 * comm_ctx.c, comm_intercomm.c, comm_members.c, topo_*.c) share, and the
 * two hooks the core's mpi_comm_release calls.
 *
 * Construction talks only through the parent's collective context
 * (ctx_off 1) with negative tags, so it never matches user traffic and
 * never matches the collective layer's tags (which are >= 0):
 *   -4096 .. -4127            fixed tags of this area (MPI_COMM_TAG_*)
 *   [-2^28, -2^27)            MPI_Intercomm_create_from_groups, string
 *                             tag hashed (on MPI_COMM_WORLD)
 *   [-2^29, -2^28)            MPI_Comm_create_from_group, string tag
 *                             hashed (on MPI_COMM_WORLD)
 *   [-2^30, -2^29)            MPI_Intercomm_create, user tag folded in
 *   [INT_MIN, -2^30)          MPI_Comm_create_group, user tag folded in
 */
#ifndef SHOAL_MPI_COMM_H
#define SHOAL_MPI_COMM_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "mpi/mpi_impl.h"

/* ---- hooks called by the core ------------------------------------------- */

/* Last reference gone: delete attributes, free topology, info. */
void mpi_comm_destroy_hook(MPI_Comm comm);
/* Comm_dup: copy attributes (copy callbacks), topology and info. */
int mpi_comm_dup_hook(MPI_Comm from, MPI_Comm to);

/* ---- tags ----------------------------------------------------------------- */

#define MPI_COMM_TAG_CTX (-4096)    /* context agreement, 3 tags */
#define MPI_COMM_TAG_SPLIT (-4100)  /* split, split_type: (color, key) */
#define MPI_COMM_TAG_INTER (-4104)  /* intercomm-wide agreement, 3 tags */
#define MPI_COMM_TAG_MERGE (-4108)  /* Intercomm_merge: the high flags */
#define MPI_COMM_TAG_BCAST (-4112)  /* Intercomm_create: leader to group */
#define MPI_COMM_TAG_DGRAPH (-4116) /* Dist_graph_create: edges */
#define MPI_COMM_TAG_ISPLIT (-4120) /* intercomm split/create, 3 tags */

/* Steps of 4 leave room for the tag - 1 and tag - 2 the helpers use. */
static inline int mpi_comm_tag_group(int tag)
{
    return INT_MIN + 4 * (tag & 0x0fffffff) + 3;
}

static inline int mpi_comm_tag_inter(int tag)
{
    return -0x40000000 + 4 * (tag & 0x07ffffff) + 3;
}

/* The sessions' constructors (comm_from_group.c): a hash of the string
 * tag. */
static inline int mpi_comm_tag_session(uint64_t h)
{
    return -0x20000000 + 4 * (int)(h & 0x03ffffff) + 3;
}

static inline int mpi_comm_tag_session_inter(uint64_t h)
{
    return -0x10000000 + 4 * (int)(h & 0x01ffffff) + 3;
}

/* Intercomm_create's work with the peer tag given (itag, already in the
 * internal range): an MPI class, no error handler run. */
int mpi_intercomm_make(MPI_Comm local_comm, int local_leader,
                       MPI_Comm peer_comm, int remote_leader, int itag,
                       MPI_Comm *newintercomm);

/* MPI_Comm_idup: a request whose poll function
 * runs the agreement; *newcomm is set when it completes (comm_idup.c). */
int mpi_comm_idup_start(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                        MPI_Request *request);

/* ---- small collectives among some ranks of a parent ---------------------- */

/*
 * The members of an agreement: n ranks of the intracommunicator comm
 * (ranks[i], or i when ranks is NULL); me is this process's index.
 */
typedef struct mpi_members {
    MPI_Comm comm;
    int n, me, tag;
    const int *ranks;
} mpi_members_t;

/* Fill m; MPI_ERR_GROUP when this process is not a member. */
int mpi_members_init(mpi_members_t *m, MPI_Comm comm, int n,
                     const int *ranks, int tag);

/* Combine in into acc (len bytes); must be associative and commutative. */
typedef void mpi_combine_fn(void *acc, const void *in, size_t len);

/* Every member ends with the combination of all members' buf. */
int mpi_members_allreduce(const mpi_members_t *m, void *buf, size_t len,
                          mpi_combine_fn *combine);
/* all[i * len] = member i's mine. */
int mpi_members_allgather(const mpi_members_t *m, const void *mine,
                          size_t len, void *all);
/* Member root's buf to every member. */
int mpi_members_bcast(const mpi_members_t *m, int root, void *buf,
                      size_t len);

/*
 * The same over both groups of an intercommunicator, through the two
 * rank-0 leaders (its point-to-point reaches only the remote group).
 */
int mpi_inter_allreduce(MPI_Comm inter, void *buf, size_t len,
                        mpi_combine_fn *combine, int tag);
/* Leader (local rank 0) sends mine to the whole remote group; every
 * process receives the remote leader's into theirs. */
int mpi_inter_swap(MPI_Comm inter, const void *mine, void *theirs,
                   size_t len, int tag);

/* Every process's len bytes from both groups: local_all[i * len] from
 * local rank i, remote_all[j * len] from remote rank j (3 tags from tag
 * down). */
int mpi_inter_allgather(MPI_Comm inter, const void *mine, size_t len,
                        void *local_all, void *remote_all, int tag);

/* ---- context ids (comm_ctx.c) ---------------------------------------------- */

#define MPI_CTX_SLOTS 4096 /* ctx = 2 * slot; slots 0, 1 are WORLD, SELF */
#define MPI_CTX_WORDS (MPI_CTX_SLOTS / 64)

/* What a process contributes to an agreement (combined by AND / OR). */
typedef struct mpi_ctx_mask {
    uint64_t free[MPI_CTX_WORDS];
    uint64_t busy;  /* some member had another agreement in flight */
    uint64_t wide;  /* some member's half is full: offer every slot */
    uint64_t epoch; /* the member's epoch clock (the largest: see mpi_ctx_epoch) */
} mpi_ctx_mask_t;

typedef struct mpi_ctx_try {
    mpi_ctx_mask_t mask;
    uint64_t key;
    int owner, waiting;
    int nonblocking; /* a retry must not progress or yield (idup) */
    int wide;        /* this round offers both halves (comm_ctx.c) */
} mpi_ctx_try_t;

/*
 * key orders concurrent agreements (lower goes first) the same way in
 * every process, so it must differ between any two that may be in flight
 * at once: the parent's ctx, then the idup's number on that parent; a
 * blocking agreement (MPI_CTX_NTH_BLOCKING) after the idups of its parent
 * that this process started before it.
 */
#define MPI_CTX_NTH_BLOCKING UINT32_MAX
static inline uint64_t mpi_ctx_key(uint32_t ctx, uint32_t nth)
{
    return (uint64_t)ctx << 32 | nth;
}
void mpi_ctx_begin(mpi_ctx_try_t *t, uint64_t key);
void mpi_ctx_combine(void *acc, const void *in, size_t len);
/*
 * After the masks were combined into agreed: MPI_SUCCESS with *ctx_p
 * (marked used here when take), -1 to run another round, or
 * MPI_ERR_OTHER when every context id is in use.
 */
int mpi_ctx_end(mpi_ctx_try_t *t, const mpi_ctx_mask_t *agreed, int take,
                uint32_t *ctx_p);
/*
 * The epoch of the communicator that has context id ctx here: the
 * agreement that picked the id also ORs the members' epoch clocks, and the
 * new communicator's epoch is that plus one, the same on every member and
 * above that of every communicator any member had before (the clocks
 * catch up with it).  A context id is reused; its epoch never is, so
 * fault-tolerance frames carry it (core/ft.c: a revocation of a freed
 * communicator that comes late is not taken for one of the next).
 */
uint64_t mpi_ctx_epoch(uint32_t ctx);
/* A keyval as a checkpoint records it (attr.c, core/ckpt_objs.c). */
typedef struct mpi_keyval_rec {
    int32_t kind, freed;
    uint64_t comm_copy, comm_delete, type_copy, type_delete, extra;
} mpi_keyval_rec_t;
int mpi_keyval_slots(void);
int mpi_keyval_save(int k, mpi_keyval_rec_t *r); /* 1: slot k in use */
int mpi_keyval_restore(int k, const mpi_keyval_rec_t *r);
void mpi_keyval_restore_done(void);
int mpi_attr_restore(mpi_attr_t **list, int kind, int k, void *val);

/* Take context id ctx with epoch, here only (a restart: core/ckpt_objs.c). */
int mpi_ctx_claim(uint32_t ctx, uint64_t epoch);
/* mpi_ctx_alloc for agreements where some members take no context. */
int mpi_ctx_agree(const mpi_members_t *m, int take, uint32_t *ctx_p);
/* This process alone takes a free id now (comm_ctx.c), or -1 when it
 * has to agree as usual. */
int mpi_ctx_alone(uint32_t *ctx_p);
/* The same over both groups of an intercommunicator. */
int mpi_ctx_agree_inter(MPI_Comm inter, uint32_t *ctx_p);

/* ---- building ------------------------------------------------------------- */

/*
 * A communicator over group (and remote for intercomms, else NULL) with
 * context ctx; the caller keeps its references to the groups.  Frees ctx
 * when building fails.
 */
int mpi_comm_make(MPI_Comm parent, MPI_Group group, MPI_Group remote,
                  uint32_t ctx, MPI_Comm *comm_p);

/*
 * Comm_split's core over an intracommunicator: color < 0 is MPI_UNDEFINED.
 * 64-bit colors let split_type use host hashes directly.
 */
int mpi_comm_split_core(MPI_Comm comm, int64_t color, int key,
                        MPI_Comm *newcomm_p);

/* Group helpers (group_api.c). */
static inline void mpi_group_retain(MPI_Group g)
{
    __atomic_add_fetch(&g->refs, 1, __ATOMIC_RELAXED);
}
static inline int mpi_group_ok(MPI_Group g)
{
    return g != NULL && g->magic == MPI_MAGIC_GROUP;
}
/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL. */
int mpi_group_cmp(MPI_Group a, MPI_Group b);
/* A table from world rank to rank in g (or -1); free() it. */
int *mpi_group_world_index(MPI_Group g);

/* Validate a communicator argument of public function fn. */
#define MPI_COMM_CHECK(comm, fn)                                             \
    do {                                                                     \
        if (BASE_UNLIKELY(!mpi_comm_ok(comm)))                               \
            return mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, fn,               \
                             "invalid communicator %p", (void *)(comm));     \
    } while (0)

#endif /* SHOAL_MPI_COMM_H */
