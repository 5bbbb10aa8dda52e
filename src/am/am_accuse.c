/*
 * Accusations: one authority on who is dead when a link between hosts
 * is cut (docs/FT.md, "Partitions").
 *
 * Under shoalrun --ft (which sets SHOAL_FT_ACCUSE) a wire that gives up a
 * rank of another host does not make this rank take it for dead alone.
 * Both ends of a cut link give each other up, and each would tell the
 * others so (am_tell.c): a third host would then hear both stories, and
 * the job would split into sides that each shrank the other away.
 * Instead the rank accuses the peer to the launcher ("shoal-ft-accuse
 * rank=R" up the daemon tree) and holds it as suspect: not dead, not told
 * about.  The launcher, which every host still reaches, gathers the
 * accusations of a short while, takes for dead a set of ranks, host by
 * host, that leaves no accuser and accused both alive (tools/shoalrun/
 * ft_accuse.c), kills them and tells every rank (cmd=shoal-ft-dead), the
 * way it tells any death.  A suspect's death is then taken from the
 * launcher, like any other; a rank the launcher chose instead is killed.
 *
 * Ranks of this host are never accused: their deaths are seen by pidfds
 * and the launcher, with no link between to cut.  A launcher that never
 * answers (it died, or a bug) does not leave a suspect forever: past
 * ACCUSE_WAIT_NS the rank takes it for dead as it would without the
 * launcher.  Nothing here runs unless a wire gave a peer up.
 */
#include "am.h"

/* How long a suspect waits for the launcher's word at most (it answers
 * within its gathering window, SHOAL_FT_TIMEOUT / 2 capped at 2 s, and
 * the time a line takes down the tree). */
#define ACCUSE_WAIT_NS 10000000000ull

static int other_host(int rank)
{
    const int *node = am.job->node_of;

    return node != NULL && node[rank] != node[am.job->rank];
}

int am_accuse(int rank, int status, const char *why)
{
    am_peer_t *p = &am.peers[rank];

    if (!base_cfg.FT || !base_cfg.FT_ACCUSE || !other_host(rank) || p->dead)
        return 0;
    if (p->suspect)
        return 1;
    if (boot_accuse(rank) != SHOAL_OK) {
        base_warn("am", "cannot accuse rank %d to the launcher (%s): taking "
                  "it for dead here", rank, shoal_error_detail());
        return 0;
    }
    p->suspect = 1;
    p->suspect_status = status;
    p->suspect_at = base_time_ns();
    am.suspects++;
    base_warn("am", "rank %d unreachable: %s; accused to the launcher, "
              "which decides which of us two is taken for dead", rank, why);
    return 1;
}

void am_accuse_cleared(am_peer_t *p)
{
    if (p->suspect) {
        p->suspect = 0;
        am.suspects--;
    }
}

void am_accuse_check(uint64_t now)
{
    for (int r = 0; r < am.job->size && am.suspects > 0; r++) {
        am_peer_t *p = &am.peers[r];
        if (!p->suspect || now - p->suspect_at < ACCUSE_WAIT_NS)
            continue;
        am_accuse_cleared(p);
        am_mark_dead(r, p->suspect_status,
                     "its wire gave it up and the launcher did not decide "
                     "within 10 s of the accusation");
    }
}
