/*
 * PMI-1 client: one connection to the launcher (Hydra, srun --mpi=pmi2,
 * shoalrun), strictly one request and one reply at a time under a mutex.
 * Every wait is bounded by the timeout; a closed connection is reported as
 * the launcher's death.  After an I/O failure the stream is out of step, so
 * every later call fails at once with the same error.
 */
#ifndef SHOAL_BOOT_PMI1_H
#define SHOAL_BOOT_PMI1_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "boot/pmi_wire.h"

typedef struct boot_pmi1 {
    int fd;
    pthread_mutex_t lock;
    pmi_linebuf_t in;
    uint64_t timeout_ns;
    int rank, size;    /* from the environment, or the server in port mode */
    char kvsname[256]; /* exactly as get_my_kvsname returned it */
    long kvsname_max, keylen_max, vallen_max; /* the server's, NUL counted */
    int failed;        /* an I/O failure left the stream out of step */
    int fail_status;
    /* shoalrun --ft's notices "cmd=shoal-ft-dead rank=N" (docs/FT.md),
     * which may come between replies: ranks not yet taken. */
    int *notice;
    int nnotice, notice_cap;
    /* Hydra under SHOAL_FT: the ranks of PMI_dead_processes taken already
     * (size bytes, allocated at the first read). */
    unsigned char *dead_seen;
    /* shoalrun's checkpoint requests (docs/FT.md, "Checkpoints the
     * launcher asks for"): the newest "cmd=shoal-ckpt-request id=K" and
     * "cmd=shoal-ckpt-target id=K count=T" seen; 0: none yet. */
    long ckpt_req, ckpt_tgt_id, ckpt_tgt;
} boot_pmi1_t;

/* Read what the launcher sent unasked, without waiting (a notice): 0 when
 * nothing or another thread holds the connection. */
void boot_pmi1_poll(boot_pmi1_t *c);
/* A rank some notice said died, or -1. */
int boot_pmi1_take_notice(boot_pmi1_t *c);
/* Keep the ranks of Hydra's PMI_dead_processes text (of a job of size
 * ranks) not seen there before as notices, for boot_pmi1_take_notice. */
int boot_pmi1_note_dead(boot_pmi1_t *c, const char *text, int size);
/* The newest checkpoint request and target seen (read without waiting). */
void boot_pmi1_ckpt_notices(boot_pmi1_t *c, long *req, long *tgt_id,
                            long *tgt);
/* Send "cmd=<cmd> id=<id> <key>=<value>" (id < 0: none), a line the
 * launcher does not answer. */
int boot_pmi1_tell(boot_pmi1_t *c, const char *cmd, long id, const char *key,
                   long value);
/* Wait at most timeout_ms for the launcher to send something. */
void boot_pmi1_await(boot_pmi1_t *c, int timeout_ms);

/*
 * Handshake on a connected fd (PMI_FD mode): init, get_maxes,
 * get_my_kvsname.  rank and size come from PMI_RANK and PMI_SIZE.  Takes
 * ownership of fd (closed by boot_pmi1_close, also after a failure).
 */
int boot_pmi1_open_fd(boot_pmi1_t *c, int fd, int rank, int size,
                      uint64_t timeout_ns);
/* Connect to PMI_PORT "host:port" and identify as PMI_ID, then as above. */
int boot_pmi1_open_port(boot_pmi1_t *c, const char *hostport, int id,
                        uint64_t timeout_ns);

int boot_pmi1_put(boot_pmi1_t *c, const char *key, const char *value);
/* SHOAL_ERR_NOT_FOUND when the server has no such key (any rc != 0). */
int boot_pmi1_get(boot_pmi1_t *c, const char *key, char *value, size_t cap);
int boot_pmi1_barrier(boot_pmi1_t *c);
int boot_pmi1_finalize(boot_pmi1_t *c);
/* Send abort (no reply is expected; the launcher ends the job). */
void boot_pmi1_abort(boot_pmi1_t *c, int code, const char *msg);
void boot_pmi1_close(boot_pmi1_t *c);

/* Characters of value that fit in one put line beside a key of keylen. */
size_t boot_pmi1_room(const boot_pmi1_t *c, size_t keylen);

/*
 * The connection underneath, shared with the PMI-2 client (boot_pmi2.c),
 * which runs on the same sockets and starts with a PMI-1 line.  Each call
 * fails at once after an earlier I/O failure, bounded by deadline
 * (base_time_ns), and names what in its error.
 */
void boot_pmi1_setup(boot_pmi1_t *c, int fd, uint64_t timeout_ns);
/* Connect to "host:port" (PMI_PORT), without blocking past the timeout. */
int boot_pmi1_connect(const char *hostport, uint64_t timeout_ns, int *fd_p);
int boot_pmi1_send(boot_pmi1_t *c, const char *buf, size_t len,
                   uint64_t deadline, const char *what);
/* Read and parse the next PMI-1 line. */
int boot_pmi1_recv_line(boot_pmi1_t *c, pmi_msg_t *msg, uint64_t deadline,
                        const char *what);
/* Read exactly n bytes (what the line buffer holds first). */
int boot_pmi1_recv_bytes(boot_pmi1_t *c, char *buf, size_t n,
                         uint64_t deadline, const char *what);

#endif /* SHOAL_BOOT_PMI1_H */
