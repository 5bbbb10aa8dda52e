/*
 * The job across hosts (see job.c for the policy).  The launcher hears
 * from the daemon tree (tree.c) what happened to ranks elsewhere -- exits,
 * aborts, output, barriers entered and left, hosts lost -- and applies the
 * one-host policy to it; it sends down signals, stops, kills and rank 0's
 * stdin.  A daemon reports its ranks' events up, obeys what comes down,
 * and kills its ranks when the launcher is gone.  The PMI fence goes up
 * the tree and the union of the puts comes back down.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job.h"

/* The launcher's word for every daemon. */
void job_tell_daemons(job_t *job, int type, int sig, int groups)
{
    shoalrun_msg_t m = {0};

    if (job->tree == NULL || job->daemon)
        return;
    shoalrun_msg_u32(&m, (uint32_t)sig);
    shoalrun_msg_u32(&m, (uint32_t)groups);
    shoalrun_tree_down(job->tree, type, m.buf, m.len);
    shoalrun_msg_fini(&m);
}

/* A daemon's failure that ends the job: the launcher says text. */
void job_fail_up(job_t *job, int code, const char *text)
{
    shoalrun_msg_t m = {0};

    shoalrun_msg_u32(&m, (uint32_t)code);
    shoalrun_msg_str(&m, text);
    shoalrun_tree_up(job->tree, SHOALRUN_F_FAILED, m.buf, m.len);
    shoalrun_msg_fini(&m);
}

/* Launcher: ranks wait in a barrier that a rank which finalized or exited
 * (on whatever host) can never enter. */
static void check_barrier(job_t *job)
{
    char host[160];

    if (!job->barrier_waiting || job->left_rank < 0 || job->stopping)
        return;
    if (job_fail(job, 1))
        shoalrun_say("rank %d%s %s while other ranks wait in a PMI barrier "
                     "it can no longer enter; stopping the job's %d rank%s",
                     job->left_rank,
                     job_on_host(job, job->left_rank, host, sizeof(host)),
                     job->left_why, job->nalive, job->nalive == 1 ? "" : "s");
    job_stop(job);
}

static void barrier_waiting(job_t *job)
{
    job->barrier_waiting = 1;
    check_barrier(job);
}

static void rank_left(job_t *job, int rank, const char *why)
{
    if (job->left_rank < 0) {
        job->left_rank = rank;
        snprintf(job->left_why, sizeof(job->left_why), "%s", why);
    }
    check_barrier(job);
}

void job_pmi_waiting(void *ctx)
{
    job_t *job = ctx;

    if (job->daemon)
        shoalrun_tree_up(job->tree, SHOALRUN_F_WAITING, NULL, 0);
    else
        barrier_waiting(job);
}

void job_pmi_left(void *ctx, int rank, const char *why)
{
    job_t *job = ctx;
    shoalrun_msg_t m = {0};

    if (!job->daemon) {
        rank_left(job, rank, why);
        return;
    }
    shoalrun_msg_u32(&m, (uint32_t)rank);
    shoalrun_msg_str(&m, why);
    shoalrun_tree_up(job->tree, SHOALRUN_F_LEFT, m.buf, m.len);
    shoalrun_msg_fini(&m);
}

/* Launcher: a checkpoint line for a rank of another host, down the
 * branch of the tree that holds it (shoalrun_ckpt_t.down). */
void job_ckpt_down(void *ctx, int rank, int what, long id, long value)
{
    job_t *job = ctx;
    shoalrun_msg_t m = {0};

    shoalrun_msg_u32(&m, (uint32_t)rank);
    shoalrun_msg_u32(&m, (uint32_t)what);
    shoalrun_msg_u64(&m, (uint64_t)(int64_t)id);
    shoalrun_msg_u64(&m, (uint64_t)(int64_t)value);
    shoalrun_tree_down_rank(job->tree, rank, SHOALRUN_F_CKPT_DOWN, m.buf,
                            m.len);
    shoalrun_msg_fini(&m);
}

/* A rank here put the task runtime's key: across hosts the launcher must
 * know it, since only the launcher decides what a lost host costs. */
void job_pmi_expendable(void *ctx, int rank)
{
    job_t *job = ctx;
    shoalrun_msg_t m = {0};

    job->ranks[rank].expendable = 1;
    if (!job->daemon)
        return;
    shoalrun_msg_u32(&m, (uint32_t)rank);
    shoalrun_tree_up(job->tree, SHOALRUN_F_EXPENDABLE, m.buf, m.len);
    shoalrun_msg_fini(&m);
}

/* ---- stdin for a rank 0 on another host -------------------------------- */

void job_stdin_stop_forwarding(job_t *job)
{
    if (!job->stdin_watched)
        return;
    job->stdin_watched = 0;
    shoalrun_loop_remove(&job->loop, STDIN_FILENO);
}

static void stdin_on_read(void *ctx, int fd, short revents)
{
    job_t *job = ctx;
    size_t window = shoalrun_stdio_stdin_window();
    char buf[65536];
    size_t room = window - job->stdin_unacked;
    ssize_t n = read(fd, buf, room < sizeof(buf) ? room : sizeof(buf));

    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n > 0) {
        job->stdin_unacked += (size_t)n;
        shoalrun_tree_down(job->tree, SHOALRUN_F_STDIN, buf, (size_t)n);
        if (job->stdin_unacked >= window)
            shoalrun_loop_set_events(&job->loop, fd, 0);
        return;
    }
    shoalrun_tree_down(job->tree, SHOALRUN_F_STDIN, NULL, 0); /* EOF */
    job_stdin_stop_forwarding(job);
}

static void stdin_acked(job_t *job, size_t n)
{
    job->stdin_unacked -= n < job->stdin_unacked ? n : job->stdin_unacked;
    if (job->stdin_watched)
        shoalrun_loop_set_events(&job->loop, STDIN_FILENO, POLLIN);
}

/* Daemon: n bytes reached rank 0; the launcher may read more. */
static void stdin_fed(void *ctx, size_t n)
{
    job_t *job = ctx;
    shoalrun_msg_t m = {0};

    shoalrun_msg_u32(&m, (uint32_t)n);
    shoalrun_tree_up(job->tree, SHOALRUN_F_STDIN_ACK, m.buf, m.len);
    shoalrun_msg_fini(&m);
}

int job_stdin_setup(job_t *job)
{
    int rank0_here = job->first == 0 && job->nlocal > 0;

    if (rank0_here && job->daemon) {
        job->io.fed = stdin_fed;
        job->io.fed_ctx = job;
        return shoalrun_stdio_stdin_fed(&job->io, &job->launch.stdin_fd);
    }
    if (rank0_here)
        return shoalrun_stdio_stdin_for_rank0(&job->io, &job->launch.stdin_fd);
    if (job->daemon || job->hosts == NULL)
        return SHOAL_OK;
    job->stdin_watched = 1;
    return shoalrun_loop_add(&job->loop, STDIN_FILENO, POLLIN, stdin_on_read,
                             job);
}

static void remote_exited(job_t *job, shoalrun_rd_t *r)
{
    uint32_t rank = shoalrun_rd_u32(r);
    pid_t pid = (pid_t)shoalrun_rd_u32(r);
    int status = (int)shoalrun_rd_u32(r);
    int pmi = (int)shoalrun_rd_u32(r);

    if (r->bad || rank >= (uint32_t)job->nranks || !job->ranks[rank].alive)
        return;
    job->ranks[rank].alive = 0;
    job->ranks[rank].pid = pid;
    job->nalive--;
    shoalrun_ckpt_rank_gone(&job->ckpt, (int)rank);
    if (rank == 0)
        job_stdin_stop_forwarding(job);
    job_report_exit(job, &job->ranks[rank], pid, status, pmi);
}

/* Launcher: what the daemons report. */
static void tree_up(void *ctx, int type, shoalrun_rd_t *r)
{
    job_t *job = ctx;
    uint32_t a, b;
    size_t n;
    const char *p;

    switch (type) {
    case SHOALRUN_F_OUTPUT:
        a = shoalrun_rd_u32(r);
        b = shoalrun_rd_u32(r);
        p = shoalrun_rd_bytes(r, &n);
        if (!r->bad)
            shoalrun_stdio_data(&job->io, (int)a, (int)b, p, n);
        break;
    case SHOALRUN_F_EXITED:
        remote_exited(job, r);
        break;
    case SHOALRUN_F_ABORT: {
        a = shoalrun_rd_u32(r);
        b = shoalrun_rd_u32(r);
        long code = (long)(int64_t)shoalrun_rd_u64(r);
        p = shoalrun_rd_str(r);
        if (!r->bad && a < (uint32_t)job->nranks)
            job_report_abort(job, (int)a, (pid_t)b, code, p);
        break;
    }
    case SHOALRUN_F_FAILED:
        a = shoalrun_rd_u32(r);
        p = shoalrun_rd_str(r);
        if (!r->bad && job_fail(job, (int)a))
            shoalrun_say("%s", p);
        job_stop(job);
        break;
    case SHOALRUN_F_SAY:
        p = shoalrun_rd_str(r);
        if (!r->bad)
            shoalrun_say("%s", p);
        break;
    case SHOALRUN_F_WAITING:
        barrier_waiting(job);
        break;
    case SHOALRUN_F_LEFT:
        a = shoalrun_rd_u32(r);
        p = shoalrun_rd_str(r);
        if (!r->bad && a < (uint32_t)job->nranks)
            rank_left(job, (int)a, p);
        break;
    case SHOALRUN_F_STDIN_ACK:
        a = shoalrun_rd_u32(r);
        if (!r->bad)
            stdin_acked(job, a);
        break;
    case SHOALRUN_F_CKPT_UP: {
        a = shoalrun_rd_u32(r);
        b = shoalrun_rd_u32(r);
        long id = (long)(int64_t)shoalrun_rd_u64(r);
        long count = (long)(int64_t)shoalrun_rd_u64(r);
        if (!r->bad && a < (uint32_t)job->nranks && !job->ranks[a].local &&
            b <= SHOALRUN_CKPT_FINAL)
            shoalrun_ckpt_event(&job->ckpt, (int)a, (int)b, id, count);
        break;
    }
    case SHOALRUN_F_ACCUSE: {
        /* tree.c checked that the accuser is of the sender's subtree. */
        a = shoalrun_rd_u32(r);
        b = shoalrun_rd_u32(r);
        if (!r->bad && a < (uint32_t)job->nranks &&
            b < (uint32_t)job->nranks && a != b)
            job_ft_accuse(job, (int)a, (int)b);
        break;
    }
    case SHOALRUN_F_EXPENDABLE: {
        /* tree.c checked that the rank is of the sender's subtree. */
        int k = shoalrun_rd_expendable(r->p, r->left, job->nranks);
        if (k >= 0 && !job->ranks[k].local)
            job->ranks[k].expendable = 1;
        break;
    }
    default:
        break;
    }
}

/* "2-3, 6-7": the ranks of the hosts in the subtree under node. */
static void subtree_ranks(const job_t *job, int node, char *buf, size_t cap)
{
    size_t len = 0;

    buf[0] = '\0';
    for (int i = 0; i < job->hosts->n && len < cap; i++) {
        const shoalrun_host_t *e = &job->hosts->v[i];
        if (e->local || e->count == 0 ||
            !shoalrun_tree_below(job->tree, e->node, node))
            continue;
        int n = e->count == 1
                    ? snprintf(buf + len, cap - len, "%s%d", len ? ", " : "",
                               e->first)
                    : snprintf(buf + len, cap - len, "%s%d-%d",
                               len ? ", " : "", e->first,
                               e->first + e->count - 1);
        len += n > 0 ? (size_t)n : 0;
    }
}

/*
 * Launcher: a host is gone, and with it the hosts its daemon served.  When
 * every rank there was an expendable task worker (as its daemon reported)
 * the job goes on, as it does when such a rank is killed here: the task
 * runtime runs their jobs elsewhere.  Any other rank lost ends the job.
 */
static void tree_lost(void *ctx, int node, const char *why)
{
    job_t *job = ctx;
    const shoalrun_host_t *h = shoalrun_hosts_of_node(job->hosts, node);
    char buf[64], ranks[160];
    int gone = 0, more = 0, expendable = 1, total = 0;

    for (int i = 0; i < job->hosts->n; i++) {
        const shoalrun_host_t *e = &job->hosts->v[i];
        if (e->local || !shoalrun_tree_below(job->tree, e->node, node))
            continue;
        more += e->node != node;
        for (int k = e->first; k < e->first + e->count; k++) {
            expendable &= job->ranks[k].expendable;
            total++;
            if (job->ranks[k].alive) {
                job->ranks[k].alive = 0;
                job->nalive--;
                gone++;
                shoalrun_ckpt_rank_gone(&job->ckpt, k);
            }
        }
    }
    if (expendable && total > 0 && !job->failed) {
        /* The ranks alive are told, with --ft or not: no wire notices a
         * link that is only silent, and the task runtime counts the
         * workers there lost when told (task_msg_poll_gone). */
        for (int i = 0; i < job->hosts->n; i++) {
            const shoalrun_host_t *e = &job->hosts->v[i];
            if (e->local || !shoalrun_tree_below(job->tree, e->node, node))
                continue;
            for (int k = e->first; k < e->first + e->count; k++)
                job_ft_notify(job, k);
        }
        subtree_ranks(job, node, ranks, sizeof(ranks));
        if (!job->quiet && base_cfg.FT)
            shoalrun_say("host %s lost: %s (rank%s %s%s); --ft: the job "
                         "goes on without %s",
                         h ? h->name : "?", why,
                         strpbrk(ranks, "-,") ? "s" : "", ranks,
                         more ? " there and on the hosts its daemon served"
                              : "",
                         strpbrk(ranks, "-,") ? "them" : "it");
        else if (!job->quiet)
            shoalrun_say("host %s lost: %s (rank%s %s%s, expendable task "
                         "workers); the job goes on without %s",
                         h ? h->name : "?", why,
                         strpbrk(ranks, "-,") ? "s" : "", ranks,
                         more ? " there and on the hosts its daemon served"
                              : "",
                         strpbrk(ranks, "-,") ? "them" : "it");
        return;
    }
    if (!job->quiet)
        job->died = 1;
    if (job_fail(job, SHOALRUN_EXIT_FAILED))
        shoalrun_say("host %s lost: %s (%d rank%s%s)%s", h ? h->name : "?", why,
                     gone, gone == 1 ? "" : "s",
                     more ? " there and on the hosts its daemon served" : "",
                     job_others(job->nalive, buf, sizeof(buf)));
    job_stop(job);
}

/* Daemon: the launcher's commands. */
static void tree_down(void *ctx, int type, shoalrun_rd_t *r)
{
    job_t *job = ctx;

    if (type == SHOALRUN_F_FT_DEAD) {
        int dead = (int)shoalrun_rd_u32(r);
        if (!r->bad && dead >= 0 && dead < job->nranks && job->nlocal > 0)
            shoalrun_pmi_notify_dead(&job->pmi, dead);
        return;
    }
    if (type == SHOALRUN_F_CONDEMN) {
        int rank = (int)shoalrun_rd_u32(r);
        if (!r->bad)
            job_ft_condemned(job, rank);
        return;
    }
    if (type == SHOALRUN_F_CKPT_DOWN) {
        int rank = (int)shoalrun_rd_u32(r), what = (int)shoalrun_rd_u32(r);
        long id = (long)(int64_t)shoalrun_rd_u64(r);
        long value = (long)(int64_t)shoalrun_rd_u64(r);
        if (!r->bad && rank >= job->first &&
            rank < job->first + job->nlocal &&
            (what == SHOALRUN_CKPT_REQUEST || what == SHOALRUN_CKPT_TARGET))
            shoalrun_ckpt_tell(&job->pmi, rank, what, id, value);
        return;
    }
    if (type == SHOALRUN_F_STDIN) {
        if (job->first == 0 && job->nlocal > 0)
            shoalrun_stdio_stdin_feed(&job->io, r->p, r->left);
        return;
    }
    int sig = (int)shoalrun_rd_u32(r), groups = (int)shoalrun_rd_u32(r);

    if (r->bad)
        return;
    if (type == SHOALRUN_F_STOP) {
        job->quiet = 1;
        job_stop(job);
    } else if (type == SHOALRUN_F_KILL) {
        shoalrun_noise_quiet(&job->noise);
        job_kill_local(job, SIGKILL, 1);
    } else if (sig == SIGINT || sig == SIGTERM) {
        job->quiet = 1;
        job_kill_local(job, sig, groups);
        if (!job->stopping) {
            job->stopping = 1;
            job->kill_deadline = base_time_ns() + SHOALRUN_GRACE_NS;
        }
    } else if (sig > 0 && sig < NSIG)
        job_kill_local(job, sig, groups);
}

/* Daemon: nobody above us any more; our ranks must not outlive the job. */
static void tree_orphaned(void *ctx, const char *why)
{
    job_t *job = ctx;

    job->orphaned = 1;
    if (job->nlocal_alive > 0)
        shoalrun_say("%s; killing the %d rank%s here", why, job->nlocal_alive,
                     job->nlocal_alive == 1 ? "" : "s");
    job->quiet = 1;
    job->stopping = 1;
    job->kill_deadline = base_time_ns() + SHOALRUN_GRACE_NS;
    shoalrun_noise_quiet(&job->noise);
    job_kill_local(job, SIGKILL, 1);
}

/* Our ranks are all in the barrier: their puts go up the tree. */
void job_pmi_fence(void *ctx)
{
    job_t *job = ctx;
    shoalrun_msg_t m = {0};

    shoalrun_pmi_fence_take(&job->pmi, &m);
    if (m.nomem) {
        shoalrun_say("out of memory in a PMI barrier");
        job_fail(job, SHOALRUN_EXIT_FAILED);
        job_stop(job);
    } else
        shoalrun_tree_fence(job->tree, m.buf, m.len);
    shoalrun_msg_fini(&m);
}

static void tree_fence_done(void *ctx, const char *kv, size_t len)
{
    job_t *job = ctx;

    job->barrier_waiting = 0; /* the launcher: every rank got out */
    if (shoalrun_pmi_fence_release(&job->pmi, kv, len) != SHOAL_OK)
        shoalrun_say("%s", shoal_error_detail());
}

/* Daemon: a rank's output goes up as it comes. */
void job_output_up(void *ctx, int rank, int dest, const char *p, size_t n)
{
    job_t *job = ctx;
    shoalrun_msg_t m = {0};

    shoalrun_msg_u32(&m, (uint32_t)rank);
    shoalrun_msg_u32(&m, (uint32_t)dest);
    shoalrun_msg_bytes(&m, p, n);
    if (!m.nomem)
        shoalrun_tree_up(job->tree, SHOALRUN_F_OUTPUT, m.buf, m.len);
    shoalrun_msg_fini(&m);
}

/* Launcher: the daemons' own executable and the job they are given. */
int job_tree_setup(job_t *job, shoalrun_tree_conf_t *conf,
                   shoalrun_msg_t *jobmsg, char *self, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", self, cap - 1);

    if (n <= 0)
        return base_err(SHOAL_ERR_SYSTEM,
                        "cannot find shoalrun's own path: "
                        "%s",
                        strerror(errno));
    self[n] = '\0';
    int status = shoalrun_daemon_job(job->args, job->kvsname, self, jobmsg);
    if (status != SHOAL_OK)
        return status;
    memset(conf, 0, sizeof(*conf));
    job->rsh_copy = strdup(job->args->rsh);
    char *save = NULL;
    for (char *w = job->rsh_copy ? strtok_r(job->rsh_copy, " \t", &save) : NULL;
         w != NULL && conf->nrsh < 31; w = strtok_r(NULL, " \t", &save))
        job->rsh_words[conf->nrsh++] = w;
    conf->rsh = job->rsh_words;
    status = base_random(conf->secret, sizeof(conf->secret));
    conf->node = 0;
    conf->fanout = job->args->fanout;
    conf->timeout_ns = (uint64_t)base_cfg.HOST_TIMEOUT;
    conf->self = self;
    conf->hosts = &job->args->hosts;
    conf->job = jobmsg->buf;
    conf->job_len = jobmsg->len;
    return status;
}

void job_tree_events(job_t *job, shoalrun_tree_events_t *ev)
{
    *ev = (shoalrun_tree_events_t){
        job, tree_up, tree_down, tree_fence_done, tree_lost, tree_orphaned};
}
