/*
 * Fault tolerance (ULFM, docs/FT.md): the state the rest of src/mpi reads
 * and the calls it makes.  Everything here is inert unless SHOAL_FT is on
 * (shoalrun --ft): then a dead rank does not end the job, operations that
 * need it fail with MPIX_ERR_PROC_FAILED, and the MPIX_Comm_* calls of
 * mpi-ext.h let survivors revoke, agree and shrink.
 *
 * Failure-free cost: the paths that every message takes test one word
 * (am.deaths, mpi_ft.revokes, mpi_ft.watch or mpi_ft.outbox) behind
 * BASE_UNLIKELY; nothing is allocated, locked or called there.
 */
#ifndef SHOAL_MPI_FT_H
#define SHOAL_MPI_FT_H

#include "mpi/mpi_impl.h"

/* MPIX_name as a weak alias of PMPIX_name (as SHOAL_MPI_WEAK). */
#define SHOAL_MPIX_WEAK(name)                                                \
    extern __typeof__(PMPIX_##name) MPIX_##name                              \
        __attribute__((weak, alias("PMPIX_" #name)));

/* Handler index of the fault-tolerance frames on the MPI endpoint. */
#define MPI_H_FT 9

typedef struct mpi_ft_state {
    int on;          /* SHOAL_FT */
    int revokes;     /* communicators revoked here, ever */
    int outbox;      /* frames queued for room (mpi_ft_progress sends) */
    MPI_Comm watch;  /* the blocking collective waiting now (FT only) */
    MPI_Comm *by_ctx; /* communicators by context id (under SHOAL_FT
                         or SHOAL_CKPT_DIR; else NULL) */
} mpi_ft_state_t;

extern mpi_ft_state_t mpi_ft;

int mpi_ft_init(void);
void mpi_ft_fini(void);

/* A communicator's life (comm_obj.c): reachable by its context or not
 * (when by_ctx is kept). */
void mpi_ft_comm_register(MPI_Comm c);
void mpi_ft_comm_unregister(MPI_Comm c);

/* The MPI_H_FT handler (p2p_engine.c registers it). */
void mpi_ft_handler(shoal_token_t *t, const uint64_t *args, unsigned nargs,
                    void *payload, size_t len);

/* Send what waits in the outbox (progress, engine lock held). */
void mpi_ft_progress(void);

/* Why comm cannot run a collective: MPIX_ERR_REVOKED, MPIX_ERR_PROC_FAILED
 * (a member died), or MPI_SUCCESS. */
int mpi_ft_comm_broken(MPI_Comm comm);

/* Is world rank world known dead here? */
int mpi_ft_dead(int world);

/* Failures among comm's peers not acknowledged yet (ANY_SOURCE). */
int mpi_ft_unacked(MPI_Comm comm);

/* A collective gave up (FT): abandon what it still had posted. */
struct coll_sched;
void mpi_ft_abandon_sched(struct coll_sched *s);
/* MPI_Finalize, before the engine goes down (ft.c). */
void mpi_ft_abandoned_finalize(void);

/* A request whose wait gave up (FT): taken back if it has not matched,
 * else freed when it completes. */
void mpi_ft_abandon_req(MPI_Request r);

/* Entry check of collectives and communicator construction. */
static inline int mpi_ft_entry(MPI_Comm comm)
{
    if (BASE_LIKELY(!mpi_ft.on))
        return MPI_SUCCESS;
    return mpi_ft_comm_broken(comm);
}

/* MPI_Finalize after failures: the survivors meet in an agreement over
 * MPI_COMM_WORLD first (a barrier that tolerates the dead). */
void mpi_ft_finalize(void);

/* Checkpoint/restart (ckpt.c): its memory, at MPI_Finalize. */
void mpi_ckpt_fini(void);
/* MPI_Init with SHOAL_CKPT_DIR: the objects' arena (ckpt.c). */
void mpi_ckpt_init_arena(void);

/* Checkpoints the launcher asks for (ckpt_trigger.c): tell shoalrun the
 * rank is ready (end of MPI_Init), its last count (start of
 * MPI_Finalize), and forget (end of MPI_Finalize). */
void mpi_ckpt_trigger_init(void);
void mpi_ckpt_trigger_final(void);
void mpi_ckpt_trigger_fini(void);

#endif /* SHOAL_MPI_FT_H */
