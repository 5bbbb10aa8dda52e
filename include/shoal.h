/*
 * shoal.h: the active-message interface of Shoal.
 *
 * A job is a set of ranks (processes) started by a launcher (shoalrun,
 * MPICH's mpiexec, srun --mpi=pmi2) or alone as a single rank.  Ranks talk
 * through endpoints: each endpoint has a table of handlers, indexed by small
 * integers, and optionally a segment of memory that long messages are
 * written into.  A message names its destination rank and handler; the
 * handler runs on the destination when that rank polls.
 *
 * Messages come in three sizes, each as a request or a reply:
 *   short   up to SHOAL_AM_MAX_ARGS 64-bit arguments, no payload;
 *   medium  arguments plus a payload of up to shoal_am_max_medium() bytes,
 *           delivered to the handler in a library buffer;
 *   long    arguments plus a payload of any length, written straight into
 *           the destination endpoint's segment at a given offset before the
 *           handler runs.
 * Messages from one rank to one endpoint of another are delivered in the
 * order they were sent (requests and replies alike).
 *
 * Threads: Shoal calls are not thread-safe.  A process must not make two
 * Shoal calls at the same time (serialize them if several threads use it).
 *
 * Handlers run inside shoal_poll(), shoal_wait(), shoal_barrier() and
 * inside any request call that has to wait for resources.  A handler:
 *   - must not block and should be short;
 *   - may call shoal_am_reply_*() at most once, and only from a request
 *     handler, with its token;
 *   - may call shoal_token_info(), shoal_rank(), shoal_size(),
 *     shoal_am_max_medium() and shoal_error detail/strerror functions;
 *   - must not call requests, shoal_poll, shoal_wait, shoal_barrier,
 *     endpoint creation or destruction, or shoal_finalize: these return
 *     SHOAL_ERR_IN_HANDLER;
 *   - must not keep the args or payload pointers after it returns (medium
 *     payloads live in a library buffer that is reused; long payloads stay
 *     in the segment, which the application owns).
 *
 * Errors: every function returns SHOAL_OK (0), a non-negative count where
 * documented, or a negative SHOAL_ERR_* code; shoal_strerror() describes a
 * code and shoal_error_detail() says what exactly was wrong with the last
 * failing call of this thread.
 *
 * Configuration is by SHOAL_* environment variables, listed by
 * `shoal-info --config` and in docs/CONFIG.md.
 */
#ifndef SHOAL_H
#define SHOAL_H

#include <stddef.h>
#include <stdint.h>

#include "shoal/errors.h"
#include "shoal/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- limits -------------------------------------------------------------- */

#define SHOAL_AM_MAX_HANDLERS 256 /* handler indices 0..255 */
#define SHOAL_AM_MAX_ARGS 5       /* 64-bit arguments per message */
#define SHOAL_MAX_ENDPOINTS 8     /* endpoints per process */

/* ---- the job ------------------------------------------------------------- */

typedef struct shoal_init_params {
    uint64_t field_mask; /* no fields yet: set to 0 */
} shoal_init_params_t;

/*
 * Start Shoal: find the launcher, learn rank and size, set up the wires.
 * Call shoal_init(); the version check makes a program built against one
 * interface version fail cleanly with a newer, incompatible library.
 * params may be NULL.  Calls nest: each shoal_init needs a shoal_finalize.
 * Collective over all ranks of the job (blocks until every rank has
 * started).  Fails with SHOAL_ERR_BOOT (launcher trouble), SHOAL_ERR_CONFIG
 * (a bad SHOAL_* value) or SHOAL_ERR_SYSTEM.
 */
SHOAL_API int shoal_init_version(unsigned api_version,
                                 const shoal_init_params_t *params);

static inline int shoal_init(const shoal_init_params_t *params)
{
    return shoal_init_version(SHOAL_API_VERSION, params);
}

/*
 * Collective: waits until every rank has called it, so that no message is
 * in flight, then releases everything.  Endpoints still open are destroyed.
 * If a rank died, returns SHOAL_ERR_PEER_DEAD, after releasing everything.
 */
SHOAL_API int shoal_finalize(void);

/* This rank (0..size-1), or SHOAL_ERR_NOT_INIT. */
SHOAL_API int shoal_rank(void);

/* Number of ranks in the job, or SHOAL_ERR_NOT_INIT. */
SHOAL_API int shoal_size(void);

typedef struct shoal_job_info {
    int rank, size;
    int local_rank, local_size; /* among the ranks of this host */
    const char *launcher;       /* "pmi1" or "single" */
} shoal_job_info_t;

SHOAL_API int shoal_job_info(shoal_job_info_t *info_p);

/*
 * End the whole job at once: every rank exits, the launcher reports code
 * and msg.  Usable without shoal_init (then only this process exits).
 */
SHOAL_API void shoal_abort(int code, const char *msg);

/* ---- endpoints and handlers ---------------------------------------------- */

typedef struct shoal_ep shoal_ep_t;
typedef struct shoal_token shoal_token_t;

/*
 * A handler.  args holds nargs arguments; payload/len the payload (NULL/0
 * for short messages; a library buffer for medium; the address in this
 * endpoint's segment for long).  Both pointers are valid only until the
 * handler returns.
 */
typedef void (*shoal_handler_fn_t)(shoal_token_t *token, const uint64_t *args,
                                   unsigned nargs, void *payload, size_t len);

/* Kinds of messages a handler accepts (flags of shoal_handler_entry_t). */
#define SHOAL_HANDLER_REQUEST 0x1u
#define SHOAL_HANDLER_REPLY 0x2u

typedef struct shoal_handler_entry {
    unsigned index;        /* 0..SHOAL_AM_MAX_HANDLERS-1 */
    shoal_handler_fn_t fn; /* NULL unregisters */
    const char *name;      /* for messages; may be NULL */
    unsigned flags;        /* SHOAL_HANDLER_*; 0 means both */
} shoal_handler_entry_t;

#define SHOAL_EP_PARAM_HANDLERS (1u << 0) /* handlers, nhandlers */
#define SHOAL_EP_PARAM_SEGMENT (1u << 1)  /* segment, segment_size */
#define SHOAL_EP_PARAM_USER_DATA (1u << 2)

typedef struct shoal_ep_params {
    uint64_t field_mask; /* which of the fields below are set */
    const shoal_handler_entry_t *handlers;
    size_t nhandlers;
    void *segment; /* memory long messages may write into */
    size_t segment_size;
    void *user_data; /* returned by shoal_token_info */
} shoal_ep_params_t;

/*
 * Collective: every rank creates its endpoints in the same order, so the
 * n-th endpoint of one rank talks to the n-th endpoint of the others.
 * Handlers and segment given here are in place on every rank before any
 * rank returns, so messages may be sent at once.  Handlers of the new
 * endpoint may therefore run inside this call (peers that returned first
 * may already send): set up what they use before calling it.  At most
 * SHOAL_MAX_ENDPOINTS per process (SHOAL_ERR_AGAIN beyond).
 */
SHOAL_API int shoal_ep_create(const shoal_ep_params_t *params,
                              shoal_ep_t **ep_p);

/* Collective: no rank may use the endpoint once any rank has called this. */
SHOAL_API int shoal_ep_destroy(shoal_ep_t *ep);

/*
 * Register (or, with fn NULL, unregister) handlers after creation.  Handler
 * tables must be the same on every rank: a sender checks the index against
 * its own table.  Peers may send to a handler only once it is registered on
 * the destination (synchronize, e.g. with shoal_barrier, before using it).
 */
SHOAL_API int shoal_ep_register(shoal_ep_t *ep,
                                const shoal_handler_entry_t *handlers,
                                size_t nhandlers);

/*
 * Set or replace the segment long messages are written into.  The memory
 * stays the application's; it must stay valid until replaced or the
 * endpoint is destroyed.  Peers see the new segment for messages they send
 * after this call returns (synchronize before relying on it).
 */
SHOAL_API int shoal_ep_segment_attach(shoal_ep_t *ep, void *base, size_t size);

/*
 * Memory for segments that peers on this host can map: long messages into
 * it are one memcpy by the sender, at memory bandwidth.  (Any other memory
 * works as a segment too; long messages then go by cross-memory attach,
 * process_vm_writev, which is slower.)  Page-aligned and zeroed; size is
 * rounded up to whole pages.  Free with shoal_segment_free.
 */
SHOAL_API int shoal_segment_alloc(size_t size, void **base_p);
SHOAL_API int shoal_segment_free(void *base);

/* ---- sending ------------------------------------------------------------- */

/*
 * Requests.  Return once the message is on its way and args and payload may
 * be reused.  A request may wait (running handlers meanwhile) for flow
 * control: at most SHOAL_AM_WINDOW requests per peer are outstanding (sent
 * and neither replied to nor finished on the destination), and each channel
 * holds a bounded number of messages.  dest may be this rank.
 *
 * Errors: SHOAL_ERR_RANK (dest out of range), SHOAL_ERR_HANDLER (index not
 * registered here), SHOAL_ERR_TOO_LARGE (too many args, medium payload over
 * the maximum), SHOAL_ERR_INVALID (NULL payload with len > 0, bad endpoint),
 * SHOAL_ERR_SEGMENT (long: range outside the destination's segment, or no
 * segment), SHOAL_ERR_IN_HANDLER, SHOAL_ERR_PEER_DEAD.
 */
SHOAL_API int shoal_am_request_short(shoal_ep_t *ep, int dest,
                                     unsigned handler, const uint64_t *args,
                                     unsigned nargs);
SHOAL_API int shoal_am_request_medium(shoal_ep_t *ep, int dest,
                                      unsigned handler, const void *payload,
                                      size_t len, const uint64_t *args,
                                      unsigned nargs);
SHOAL_API int shoal_am_request_long(shoal_ep_t *ep, int dest,
                                    unsigned handler, const void *payload,
                                    size_t len, uint64_t dest_offset,
                                    const uint64_t *args, unsigned nargs);

/*
 * Replies: only inside a request handler, at most once, to the requester.
 * They never wait: when the channel back is full the reply is queued and
 * sent by later progress (the window above bounds that queue).
 */
SHOAL_API int shoal_am_reply_short(shoal_token_t *token, unsigned handler,
                                   const uint64_t *args, unsigned nargs);
SHOAL_API int shoal_am_reply_medium(shoal_token_t *token, unsigned handler,
                                    const void *payload, size_t len,
                                    const uint64_t *args, unsigned nargs);
SHOAL_API int shoal_am_reply_long(shoal_token_t *token, unsigned handler,
                                  const void *payload, size_t len,
                                  uint64_t dest_offset, const uint64_t *args,
                                  unsigned nargs);

/* Largest medium payload to dest (the same for every rank today). */
SHOAL_API int shoal_am_max_medium(shoal_ep_t *ep, size_t *max_p);

typedef struct shoal_token_info {
    int source;          /* rank that sent the message */
    shoal_ep_t *ep;      /* endpoint it arrived on */
    void *user_data;     /* that endpoint's user_data */
    int is_request;      /* 1 for requests, 0 for replies */
} shoal_token_info_t;

/* About the message being handled (only inside its handler). */
SHOAL_API int shoal_token_info(const shoal_token_t *token,
                               shoal_token_info_t *info_p);

/* ---- progress ------------------------------------------------------------ */

/*
 * Run the handlers of messages that have arrived (for every endpoint of
 * this process).  Never blocks.  Returns how many ran (>= 0) or an error.
 */
SHOAL_API int shoal_poll(shoal_ep_t *ep);

/*
 * Wait until at least one handler has run, then return how many ran.
 * timeout_ns < 0 waits without limit; on expiry returns SHOAL_ERR_TIMEOUT.
 * Waiting follows SHOAL_WAIT: by default it spins briefly, then yields the
 * core while other processes want it, then sleeps until a message arrives
 * (SHOAL_WAIT_SPIN, SHOAL_WAIT_BLOCK).  Returns SHOAL_ERR_PEER_DEAD once for
 * each peer found dead while waiting (details in shoal_error_detail).
 */
SHOAL_API int shoal_wait(shoal_ep_t *ep, int64_t timeout_ns);

/*
 * Wait, running handlers, until cond holds.  Evaluates to SHOAL_OK, or to
 * the first error of shoal_wait (for example SHOAL_ERR_PEER_DEAD when a peer
 * died meanwhile, which may be the one cond depends on).
 */
#define SHOAL_WAIT_UNTIL(ep, cond)                                           \
    __extension__({                                                          \
        int shoal_wu_status_ = SHOAL_OK;                                     \
        while (!(cond)) {                                                    \
            shoal_wu_status_ = shoal_wait((ep), -1);                         \
            if (shoal_wu_status_ < 0)                                        \
                break;                                                       \
            shoal_wu_status_ = SHOAL_OK;                                     \
        }                                                                    \
        shoal_wu_status_;                                                    \
    })

/*
 * Collective over all ranks of the endpoint: returns when every rank has
 * entered.  Runs handlers while waiting.  SHOAL_ERR_PEER_DEAD when a rank
 * died (it would never arrive).
 */
SHOAL_API int shoal_barrier(shoal_ep_t *ep);

/* ---- statistics ---------------------------------------------------------- */

typedef struct shoal_stats {
    uint64_t requests_sent, replies_sent;     /* all kinds */
    uint64_t messages_handled;                /* handlers run */
    uint64_t long_single_copy;                /* long payloads moved by CMA */
    uint64_t replies_deferred;                /* replies queued: channel full */
    uint64_t credit_waits, space_waits;       /* requests that had to wait */
    uint64_t sleeps, doorbells_rung;          /* blocking waits; wake-ups sent */
    uint64_t connections;                     /* peers connected to (on demand) */
    uint64_t dropped;                         /* bad incoming messages dropped */
} shoal_stats_t;

/* Counters of this process since shoal_init. */
SHOAL_API int shoal_stats_get(shoal_stats_t *stats_p);

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_H */
