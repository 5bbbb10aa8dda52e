/*
 * --ft: the launcher decides who is dead when a link between hosts is cut
 * (docs/FT.md, "Partitions").
 *
 * A rank whose wire gives up a rank of another host accuses it
 * (src/am/am_accuse.c: "cmd=shoal-ft-accuse rank=R", up the daemon
 * tree) and waits for the launcher's word instead of taking it for dead
 * alone.  A cut link makes both ends accuse each other, and every pair
 * across the cut that talked does so within about one beat of the ring
 * of watches; so the launcher gathers what comes within a window
 * (SHOAL_FT_TIMEOUT / 2, at least 100 ms, at most 2 s) of the first open
 * accusation, then takes for dead a set of ranks that leaves no accuser
 * and accused both alive, host by host: a link is cut between hosts, and
 * every pair of ranks across it gives each other up sooner or later, so
 * one window may hold any part of them.  Greedily, a rank of the host in
 * the most open accusations first (the host on the far side of the most
 * cut links); on a tie, of the host later in the daemon tree (so the
 * launcher's side stays, and two windows about the same cut pick the
 * same side); within the host, the rank in the most accusations, then
 * the higher rank.  So a cut between two hosts ends the ranks of one of
 * them that are in accusations, whichever of its pairs the window saw,
 * and a rank whose own connections failed, alone, goes alone.  Each is told to every rank as dead (cmd=shoal-ft-dead,
 * job_ft_notify) and killed (here, or by its host's daemon: CONDEMN),
 * so it cannot go on as a member the others gave up; its end is then
 * reported as any other.  Accusations by or of a rank already dead or
 * condemned are moot: it is gone, or going, for everyone.
 *
 * The ranks get SHOAL_FT_ACCUSE=1 from job_ft_accuse_env, unless the
 * user set it, and not with SHOAL_FT_NOTICES=0 (nothing would tell them
 * the decision).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

#define WINDOW_MIN_NS 100000000ull  /* 100 ms */
#define WINDOW_MAX_NS 2000000000ull /* 2 s */

static uint64_t window_ns(void)
{
    uint64_t w = (uint64_t)base_cfg.FT_TIMEOUT / 2;

    if (base_cfg.FT_TIMEOUT <= 0)
        return WINDOW_MAX_NS;
    return w < WINDOW_MIN_NS ? WINDOW_MIN_NS : w > WINDOW_MAX_NS ? WINDOW_MAX_NS
                                                                 : w;
}

void job_ft_accuse_env(void)
{
    if (!base_cfg.FT || !base_cfg.FT_NOTICES ||
        getenv("SHOAL_FT_ACCUSE") != NULL)
        return;
    if (setenv("SHOAL_FT_ACCUSE", "1", 1) != 0)
        shoalrun_say("--ft: cannot set SHOAL_FT_ACCUSE: %s", strerror(errno));
}

static int in_play(const job_t *job, int rank)
{
    return job->ranks[rank].alive && !job->ranks[rank].condemned;
}

void job_ft_accuse(job_t *job, int accuser, int accused)
{
    if (!base_cfg.FT || job->daemon || job->stopping ||
        !in_play(job, accuser) || !in_play(job, accused))
        return;
    /* One entry per pair, whichever way it was said. */
    for (int i = 0; i < job->naccused; i++) {
        int a = job->accused[2 * i], b = job->accused[2 * i + 1];
        if ((a == accuser && b == accused) || (a == accused && b == accuser))
            return;
    }
    if (job->naccused == job->accused_cap) {
        int cap = job->accused_cap ? 2 * job->accused_cap : 16;
        int *v = realloc(job->accused, 2 * (size_t)cap * sizeof(int));
        if (v == NULL) {
            shoalrun_say("--ft: no memory for rank %d's accusation of rank "
                         "%d; ignored", accuser, accused);
            return;
        }
        job->accused = v;
        job->accused_cap = cap;
    }
    job->accused[2 * job->naccused] = accuser;
    job->accused[2 * job->naccused + 1] = accused;
    job->naccused++;
    if (job->accuse_deadline == 0)
        job->accuse_deadline = base_time_ns() + window_ns();
}

uint64_t job_ft_accuse_due(const job_t *job)
{
    return job->accuse_deadline;
}

static int node_of(const job_t *job, int rank)
{
    const shoalrun_host_t *h =
        job->hosts != NULL ? shoalrun_hosts_of_rank(job->hosts, rank) : NULL;

    return h != NULL ? h->node : 0;
}

/* The open accusations (both ends in play) of every rank in deg, and of
 * every node in node_deg; how many are open. */
static int degrees(const job_t *job, int *deg, int *node_deg, int nnodes)
{
    int open = 0;

    memset(deg, 0, (size_t)job->nranks * sizeof(int));
    memset(node_deg, 0, (size_t)nnodes * sizeof(int));
    for (int i = 0; i < job->naccused; i++) {
        int a = job->accused[2 * i], b = job->accused[2 * i + 1];
        if (!in_play(job, a) || !in_play(job, b))
            continue;
        open++;
        deg[a]++;
        deg[b]++;
        node_deg[node_of(job, a)]++;
        node_deg[node_of(job, b)]++;
    }
    return open;
}

/* Whether rank a goes before rank b (see the head of the file). */
static int worse(const job_t *job, const int *deg, const int *node_deg,
                 int a, int b)
{
    int na = node_of(job, a), nb = node_of(job, b);

    if (node_deg[na] != node_deg[nb])
        return node_deg[na] > node_deg[nb];
    if (na != nb)
        return na > nb;
    if (deg[a] != deg[b])
        return deg[a] > deg[b];
    return a > b;
}

/* The ranks that accused rank: "0, 1" (at most cap bytes). */
static void accusers_of(const job_t *job, int rank, char *buf, size_t cap)
{
    size_t len = 0;

    buf[0] = '\0';
    for (int i = 0; i < job->naccused && len + 16 < cap; i++) {
        int a = job->accused[2 * i], b = job->accused[2 * i + 1];
        int other = a == rank ? b : b == rank ? a : -1;
        if (other < 0 || !in_play(job, other))
            continue;
        len += (size_t)snprintf(buf + len, cap - len, "%s%d", len ? ", " : "",
                                other);
    }
}

static void condemn(job_t *job, int rank)
{
    rank_t *r = &job->ranks[rank];
    char host[160], who[256];

    accusers_of(job, rank, who, sizeof(who));
    r->condemned = 1;
    job_on_host(job, rank, host, sizeof(host));
    shoalrun_say("rank %d%s and rank%s %s lost each other (a link between "
                 "their hosts cut?); --ft: rank %d is taken for dead, "
                 "killing it", rank, host, strchr(who, ',') ? "s" : "", who,
                 rank);
    job_ft_notify(job, rank);
    if (r->local) {
        if (r->pid > 0 && kill(r->pid, SIGKILL) != 0 && errno != ESRCH)
            shoalrun_say("kill %ld: %s", (long)r->pid, strerror(errno));
    } else if (job->tree != NULL) {
        shoalrun_msg_t m = {0};
        shoalrun_msg_u32(&m, (uint32_t)rank);
        shoalrun_tree_down_rank(job->tree, rank, SHOALRUN_F_CONDEMN, m.buf,
                                m.len);
        shoalrun_msg_fini(&m);
    }
}

void job_ft_accuse_decide(job_t *job, uint64_t now)
{
    int nnodes = job->hosts != NULL ? job->hosts->n + 1 : 1;
    int *deg, *node_deg;

    if (job->accuse_deadline == 0 || now < job->accuse_deadline)
        return;
    job->accuse_deadline = 0;
    for (int i = 0; job->hosts != NULL && i < job->hosts->n; i++)
        if (job->hosts->v[i].node >= nnodes)
            nnodes = job->hosts->v[i].node + 1;
    deg = calloc((size_t)job->nranks, sizeof(int));
    node_deg = calloc((size_t)nnodes, sizeof(int));
    if (deg == NULL || node_deg == NULL) {
        shoalrun_say("--ft: no memory to decide %d accusations; the ranks "
                     "decide alone", job->naccused);
    } else if (!job->stopping) {
        while (degrees(job, deg, node_deg, nnodes) > 0) {
            int pick = -1;
            for (int r = 0; r < job->nranks; r++)
                if (deg[r] > 0 &&
                    (pick < 0 || worse(job, deg, node_deg, r, pick)))
                    pick = r;
            condemn(job, pick);
        }
    }
    free(deg);
    free(node_deg);
    job->naccused = 0; /* all decided: nothing left open */
}

void job_ft_accuse_fini(job_t *job)
{
    free(job->accused);
    job->accused = NULL;
    job->naccused = job->accused_cap = 0;
}

void job_ft_condemned(job_t *job, int rank)
{
    rank_t *r;

    if (rank < job->first || rank >= job->first + job->nlocal)
        return;
    r = &job->ranks[rank];
    if (!r->alive || r->pid <= 0)
        return;
    r->condemned = 1;
    if (kill(r->pid, SIGKILL) != 0 && errno != ESRCH)
        shoalrun_say("kill %ld: %s", (long)r->pid, strerror(errno));
}
