/*
 * Fault tolerance: what ft.c and ft_agree.c share (docs/FT.md).
 *
 * Frames (MPI_H_FT, a medium payload of 64-bit words):
 *   w[0] kind | flags, w[1] context id, w[2] agreement id (the
 *   agreement's number, and above bit 32 its round: shrink runs another
 *   round under the same number when a member was busy allocating a
 *   context id),
 *   w[3] sender's index among the communicator's members, then for
 *   agreement frames FT_NV values, then two bitmaps of the members
 *   (failed, acknowledged; a decision carries the failed one only, twice).
 *
 * The members of a communicator, for agreements and failure lists, are
 * its group in rank order; those of an intercommunicator are both its
 * groups, the one whose first world rank is lower first (so the order is
 * the same on both sides; both sides share the context id).
 */
#ifndef SHOAL_MPI_FT_PROTO_H
#define SHOAL_MPI_FT_PROTO_H

#include "mpi/core/ft.h"

#define FT_REVOKE 1u  /* the communicator is revoked */
#define FT_CONTRIB 2u /* a contribution to agreement w[2] */
#define FT_DECIDE 3u  /* the decision of agreement w[2] */
#define FT_POLL 4u    /* a new coordinator asks for contributions */
#define FT_KIND_MASK 0xffu
#define FT_F_ERR 0x100u /* decision: MPIX_ERR_PROC_FAILED for everyone */

#define FT_HDR 4
/* Values an agreement ANDs: the user's flag, and for shrink the free
 * context slots (64 words) and their "not busy" word. */
#define FT_NV 66

/* One member's contribution to an agreement, kept by its coordinator. */
typedef struct ft_slot {
    uint64_t seq; /* agreement id (above) */
    int valid;
    uint64_t vals[FT_NV];
    uint64_t *failed, *acked; /* bitmaps of bmw words */
} ft_slot_t;

/* Agreements and shrinks one process may have pending at once on one
 * communicator: contributions and decisions are kept by the agreement
 * number's parity, so a third would reuse the oldest's.  One more is
 * refused (MPI_ERR_UNSUPPORTED_OPERATION, docs/FT.md). */
#define FT_PENDING_MAX 2

/* A decision, kept for the last two agreements. */
typedef struct ft_dec {
    uint64_t seq; /* agreement id (above) */
    int valid, err;
    uint64_t vals[FT_NV];
    uint64_t *failed;
} ft_dec_t;

/* A communicator's fault-tolerance state (comm->ft, made on first use). */
typedef struct mpi_ft_comm {
    int size, bmw;      /* members (both groups of an intercommunicator) */
    int me;             /* this process's index among them */
    uint32_t seq;       /* agreements this process started on it */
    int nacked;         /* prefix of the failure list acknowledged */
    /* Agreements and shrinks the program started on it and has not
     * finished: a blocking one until it returns, a nonblocking one until
     * its request is freed (completed by MPI_Wait/MPI_Test, or
     * MPI_Request_free), so the count follows the program's calls alone
     * and every member refuses the same call. */
    int pending;
    ft_dec_t dec[2];    /* by the agreement number's parity */
    ft_slot_t *slots;   /* [(seq & 1) * size + rank] */
    uint64_t *bits;     /* the bitmaps' memory */
} mpi_ft_comm_t;

mpi_ft_comm_t *mpi_ft_comm(MPI_Comm comm);

/* The members (above): how many, the world rank of member i, the index
 * of world rank world (or -1), and whether comm's local group comes
 * first (always for an intracommunicator). */
int mpi_ft_nmembers(MPI_Comm comm);
int mpi_ft_member_world(MPI_Comm comm, int i);
int mpi_ft_member_index(MPI_Comm comm, int world);
int mpi_ft_local_first(MPI_Comm comm);

/* comm's failed members (member indices), in the order noticed here. */
int mpi_ft_failed_list(MPI_Comm comm, int *ranks);
/* Send a frame to a world rank (queued when there is no room). */
void mpi_ft_send(int world, const uint64_t *words, size_t len);
/* An agreement frame for comm arrived from world rank src. */
void mpi_ft_agree_arrive(MPI_Comm comm, int src, const uint64_t *w,
                         size_t len);

#endif /* SHOAL_MPI_FT_PROTO_H */
